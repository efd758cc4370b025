//===- KernelReferenceTest.cpp - every kernel against PyTorch -------------===//
//
// Runs the cases make_references.py wrote (references.txt): inputs, attributes and PyTorch's
// (or numpy's) outputs. Elementwise kernels run each case a second time in place, the output
// sharing an input's buffer, as the planner may ask.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "ReferenceCases.h"

#include <algorithm>
#include <set>

namespace memc::kernels::testing {
namespace {

void tolerance(const ReferenceCase &c, DType dtype, double &rtol, double &atol) {
  switch (dtype) {
  case DType::F32:
    rtol = 1e-5, atol = 1e-6;
    break;
  case DType::F16: // two units in the last place
    rtol = 2e-3, atol = 1e-5;
    break;
  case DType::BF16:
    rtol = 1.6e-2, atol = 1e-5;
    break;
  default:
    rtol = atol = 0;
  }
  if (c.rtol >= 0 && isFloating(dtype))
    rtol = c.rtol, atol = c.atol;
}

void expectOutputsMatch(const ReferenceCase &c, const std::vector<OwnedTensor> &actual) {
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    double rtol, atol;
    tolerance(c, c.outputs[i].dtype, rtol, atol);
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

/// Kernels that may run with the output in an input's buffer (elementwise, and row-wise ones
/// that read a whole row or channel before writing it).
const std::set<std::string> kInPlaceKernels = {
    "neg", "exp",   "log",  "sqrt",    "reciprocal",  "erf",        "tanh",      "sigmoid", "relu",
    "not", "gelu",  "clip", "trilu",   "dropout",     "add",        "sub",       "mul",     "div",
    "pow", "where", "cast", "softmax", "log_softmax", "layer_norm", "rms_norm", "batch_norm",
    "abs", "sin", "cos", "softplus", "hard_swish", "leaky_relu", "elu", "hard_sigmoid", "max",
    "min", "prelu", "bias_gelu"};

/// An input the output can share a buffer with: same shape, same element size.
bool canAlias(const OwnedTensor &input, const OwnedTensor &output) {
  return input.shape == output.shape && dtypeSize(input.dtype) == dtypeSize(output.dtype);
}

std::vector<ReferenceCase> inPlaceCases() {
  std::vector<ReferenceCase> cases;
  for (const ReferenceCase &c : references())
    if (kInPlaceKernels.count(c.kernel) &&
        std::any_of(c.inputs.begin(), c.inputs.end(),
                    [&](const OwnedTensor &input) { return canAlias(input, c.outputs[0]); }))
      cases.push_back(c);
  return cases;
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
  // copy (offload, reload) is a memcpy that KernelHandTest pins; the collectives' results are
  // the other ranks' data, which CollectiveKernelsTest checks with threads as ranks; PyTorch has
  // no 8-bit AdamW, whose arithmetic KernelHandTest checks against torch's formula on the
  // dynamic code (itself checked against its Python reference, DynamicQuantizationTest); nor an
  // NF4 product, which MatMulNf4Test checks against the dequantized one.
  const std::set<std::string> elsewhere = {"copy",       "offload",    "reload",
                                           "all_reduce", "shard",      "reduce_scatter",
                                           "all_gather", "matmul_nf4", "adamw8bit_update"};
  for (const auto &[name, kernel] : cpuKernels())
    if (!elsewhere.count(name))
      EXPECT_TRUE(covered.count(name)) << name << " has no reference case";
}

} // namespace
} // namespace memc::kernels::testing
