//===- KernelWorkspaceTest.cpp - kernel scratch is sized by the call alone ===//
//
// The compiler plans a kernel's workspace when it compiles, without knowing how many threads the
// program will run with: the size must depend on the call alone, and the kernel must live
// within it.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include "kernels/cpu/ThreadPool.h"

#include <cstdlib>

namespace memc::kernels::testing {
namespace {

struct Call {
  std::vector<OwnedTensor> inputs, outputs;
  Attributes attributes;
  KernelCall call() const { return makeCall(inputs, outputs, attributes); }
};

Call convCall() {
  Call c;
  c.inputs = {OwnedTensor(DType::F32, {2, 3, 16, 16}), OwnedTensor(DType::F32, {8, 3, 3, 3})};
  c.outputs = {OwnedTensor(DType::F32, {2, 8, 16, 16})};
  c.attributes.set("strides", std::vector<int64_t>{1, 1});
  c.attributes.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  c.attributes.set("dilations", std::vector<int64_t>{1, 1});
  c.attributes.set("group", int64_t{1});
  return c;
}

Call bf16MatMulCall() {
  Call c;
  c.inputs = {OwnedTensor(DType::BF16, {4, 32, 16}), OwnedTensor(DType::BF16, {16, 8})};
  c.outputs = {OwnedTensor(DType::BF16, {4, 32, 8})};
  return c;
}

/// The workspace each call asks for with MEMC_NUM_THREADS at `threads`.
std::vector<uint64_t> workspacesWithThreads(const char *threads) {
  const char *previous = std::getenv("MEMC_NUM_THREADS");
  std::string saved = previous ? previous : "";
  setenv("MEMC_NUM_THREADS", threads, 1);
  EXPECT_EQ(defaultThreadCount(), std::atoi(threads));
  // A pool of that size, as the program would create, next to the process's global one.
  ThreadPool pool(defaultThreadCount());
  std::vector<uint64_t> sizes;
  for (const auto &[name, call] : {std::make_pair("conv", convCall()),
                                   std::make_pair("matmul", bf16MatMulCall())}) {
    std::string error;
    KernelCall kernelCall = call.call();
    EXPECT_TRUE(kernelNamed(name).check(kernelCall, error)) << error;
    sizes.push_back(workspaceBytes(kernelNamed(name), kernelCall));
  }
  if (previous)
    setenv("MEMC_NUM_THREADS", saved.c_str(), 1);
  else
    unsetenv("MEMC_NUM_THREADS");
  return sizes;
}

TEST(KernelWorkspaceTest, SizeDependsOnTheCallNotTheThreadCount) {
  std::vector<uint64_t> one = workspacesWithThreads("1");
  std::vector<uint64_t> many = workspacesWithThreads("13");
  EXPECT_EQ(one, many);
  // im2col columns: 27 rows of 256 output positions.
  EXPECT_GE(one[0], uint64_t{27 * 256 * 4});
  // bf16 operands and result widened to f32: (512 + 128 + 1024) floats, each piece aligned.
  EXPECT_GE(one[1], uint64_t{(512 + 128 + 1024) * 4});
}

TEST(KernelWorkspaceTest, DepthwiseGradientsUseBoundedSlots) {
  // Many small (image, group) tasks run spread over threads, one scratch slot each; the slots are
  // bounded by kMaxWorkspaceSlots, not by the threads.
  Attributes attributes;
  attributes.set("strides", std::vector<int64_t>{1, 1});
  attributes.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attributes.set("dilations", std::vector<int64_t>{1, 1});
  attributes.set("group", int64_t{64});
  std::vector<OwnedTensor> inputs = {OwnedTensor(DType::F32, {2, 64, 8, 8}),
                                     OwnedTensor(DType::F32, {2, 64, 8, 8})};
  std::vector<OwnedTensor> outputs = {OwnedTensor(DType::F32, {64, 1, 3, 3})};
  KernelCall call = makeCall(inputs, outputs, attributes);
  std::string error;
  ASSERT_TRUE(kernelNamed("conv_grad_weight").check(call, error)) << error;
  uint64_t bytes = workspaceBytes(kernelNamed("conv_grad_weight"), call);
  // Per slot: columns 9 x 128, packed 128 x 1, two sums of 9 (each piece 64-byte aligned).
  uint64_t perSlot = 9 * 128 * 4 + 128 * 4 + 2 * 64;
  EXPECT_LE(bytes, uint64_t(kMaxWorkspaceSlots) * perSlot + 4 * 64);
  EXPECT_GE(bytes, uint64_t(kMaxWorkspaceSlots) * (9 * 128 * 4));
  EXPECT_TRUE(runWithWorkspace(kernelNamed("conv_grad_weight"), call, error)) << error;
}

TEST(KernelWorkspaceTest, TooSmallWorkspaceIsAnErrorNotAnOverrun) {
  Call c = convCall();
  KernelCall call = c.call();
  uint64_t bytes = workspaceBytes(kernelNamed("conv"), call);
  std::vector<uint64_t> storage(bytes / 8);
  call.workspace = storage.data();
  call.workspaceBytes = bytes - 8;
  std::string error;
  EXPECT_FALSE(kernelNamed("conv").run(call, error));
  EXPECT_NE(error.find("workspace"), std::string::npos) << error;
}

TEST(KernelWorkspaceTest, ElementwiseKernelsNeedNone) {
  std::vector<OwnedTensor> inputs = {OwnedTensor(DType::F32, {1024}),
                                     OwnedTensor(DType::F32, {1024})};
  std::vector<OwnedTensor> outputs = {OwnedTensor(DType::F32, {1024})};
  Attributes attributes;
  EXPECT_EQ(workspaceBytes(kernelNamed("add"), makeCall(inputs, outputs, attributes)), 0u);
}

} // namespace
} // namespace memc::kernels::testing
