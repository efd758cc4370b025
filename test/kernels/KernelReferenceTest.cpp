//===- KernelReferenceTest.cpp - every kernel against PyTorch -------------===//
//
// Runs the cases make_references.py wrote (references.txt): inputs, attributes and PyTorch's
// (or numpy's) outputs. Elementwise kernels run each case a second time in place, the output
// sharing an input's buffer, as the planner may ask.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "ReferenceCases.h"

#include <set>

namespace memc::kernels::testing {
namespace {

void expectOutputsMatch(const ReferenceCase &c, const std::vector<OwnedTensor> &actual) {
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    double rtol, atol;
    referenceTolerance(c, c.outputs[i].dtype, rtol, atol);
    EXPECT_TRUE(closeTo(actual[i].values(), c.outputs[i].values(), rtol, atol))
        << "output " << i << " of " << c.name;
  }
}

std::vector<std::pair<DType, Shape>> outputTypes(const ReferenceCase &c) {
  std::vector<std::pair<DType, Shape>> types;
  for (const OwnedTensor &t : c.outputs)
    types.emplace_back(t.dtype, t.shape);
  return types;
}

class KernelReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(KernelReference, MatchesPyTorch) {
  const ReferenceCase &c = GetParam();
  expectOutputsMatch(c, runKernel(c.kernel, c.inputs, outputTypes(c), c.attributes));
}

class KernelReferenceInPlace : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(KernelReferenceInPlace, MatchesPyTorch) {
  const ReferenceCase &c = GetParam();
  for (size_t j = 0; j < c.inputs.size(); ++j) {
    if (!canAlias(c.inputs[j], c.outputs[0]))
      continue;
    std::vector<OwnedTensor> buffers = {c.inputs[j]};
    buffers[0].dtype = c.outputs[0].dtype;
    KernelCall call = makeCall(c.inputs, buffers, c.attributes);
    call.inputs[j].data = call.outputs[0].data;
    std::string error;
    const Kernel &k = kernelNamed(c.kernel);
    ASSERT_TRUE(k.check(call, error)) << error;
    ASSERT_TRUE(runWithWorkspace(k, call, error)) << error;
    expectOutputsMatch(c, buffers);
  }
}

auto caseName = [](const ::testing::TestParamInfo<ReferenceCase> &info) { return info.param.name; };

INSTANTIATE_TEST_SUITE_P(Torch, KernelReference, ::testing::ValuesIn(references()), caseName);
INSTANTIATE_TEST_SUITE_P(Torch, KernelReferenceInPlace, ::testing::ValuesIn(inPlaceCases()),
                         caseName);

TEST(KernelReferenceCoverage, EveryKernelHasReferenceCases) {
  std::set<std::string> covered;
  for (const ReferenceCase &c : references())
    covered.insert(c.kernel);
  // The collectives' results are the other ranks' data, which CollectiveKernelsTest checks
  // with threads as ranks.
  const std::set<std::string> elsewhere = {"all_reduce", "shard", "reduce_scatter", "all_gather"};
  for (const auto &[name, kernel] : cpuKernels()) {
    if (!elsewhere.count(name)) {
      EXPECT_TRUE(covered.count(name)) << name << " has no reference case";
    }
  }
}

} // namespace
} // namespace memc::kernels::testing
