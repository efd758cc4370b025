//===- KernelWorkspaceTest.cpp - kernel scratch is sized by the call alone ===//
//
// The compiler plans a kernel's workspace when it compiles, without knowing how many threads the
// program will run with: the size must depend on the call alone, and the kernel must live
// within it.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include "kernels/cpu/LinearCrossEntropyWorkspace.h"
#include "kernels/cpu/OneDnnConvolution.h"

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

/// logits [2048, 64] of `dtype`: 2048 rows in pieces of 64 rows use every slot.
Call crossEntropyCall(DType dtype) {
  Call c;
  c.inputs = {OwnedTensor(dtype, {2048, 64}), OwnedTensor(DType::I64, {2048})};
  c.outputs = {OwnedTensor(DType::F32, {})};
  c.attributes.set("ignore_index", int64_t{-100});
  return c;
}

Call crossEntropyGradCall(DType dtype) {
  Call c;
  c.inputs = {OwnedTensor(DType::F32, {}), OwnedTensor(dtype, {2048, 64}),
              OwnedTensor(DType::I64, {2048})};
  c.outputs = {OwnedTensor(dtype, {2048, 64})};
  c.attributes.set("ignore_index", int64_t{-100});
  return c;
}

/// An embedding's gradient: 512 token positions into 1000 rows of 8.
Call gatherGradCall(DType dtype) {
  Call c;
  c.inputs = {OwnedTensor(dtype, {512, 8}), OwnedTensor(DType::I64, {512})};
  c.outputs = {OwnedTensor(dtype, {1000, 8})};
  c.attributes.set("axis", int64_t{0});
  return c;
}

Attributes poolAttributes() {
  Attributes attributes;
  attributes.set("kernel_shape", std::vector<int64_t>{2, 2});
  attributes.set("strides", std::vector<int64_t>{2, 2});
  attributes.set("pads", std::vector<int64_t>{0, 0, 0, 0});
  attributes.set("dilations", std::vector<int64_t>{1, 1});
  attributes.set("ceil_mode", int64_t{0});
  attributes.set("count_include_pad", int64_t{0});
  return attributes;
}

/// 8 x 64 planes of 16 x 16, pooled to 8 x 8: 512 planes in pieces of 64 use 8 slots.
Call maxPoolGradCall(DType dtype) {
  Call c;
  c.inputs = {OwnedTensor(dtype, {8, 64, 8, 8}), OwnedTensor(dtype, {8, 64, 16, 16})};
  c.outputs = {OwnedTensor(dtype, {8, 64, 16, 16})};
  c.attributes = poolAttributes();
  return c;
}

Call avgPoolGradCall(DType dtype) {
  Call c;
  c.inputs = {OwnedTensor(dtype, {8, 64, 8, 8})};
  c.outputs = {OwnedTensor(dtype, {8, 64, 16, 16})};
  c.attributes = poolAttributes();
  return c;
}

/// Calls whose kernels once allocated scratch of their own, by kernel name.
std::vector<std::pair<std::string, Call>> formerlyAllocatingCalls() {
  return {{"cross_entropy", crossEntropyCall(DType::F32)},
          {"cross_entropy", crossEntropyCall(DType::BF16)},
          {"cross_entropy_grad", crossEntropyGradCall(DType::F16)},
          {"gather_grad", gatherGradCall(DType::BF16)},
          {"max_pool_grad", maxPoolGradCall(DType::BF16)},
          {"avg_pool_grad", avgPoolGradCall(DType::F16)}};
}

/// The workspace each call asks for with MEMC_NUM_THREADS at `threads`.
std::vector<uint64_t> workspacesWithThreads(const char *threads) {
  const char *previous = std::getenv("MEMC_NUM_THREADS");
  std::string saved = previous ? previous : "";
  setenv("MEMC_NUM_THREADS", threads, 1);
  EXPECT_EQ(defaultThreadCount(), std::atoi(threads));
  // A pool of that size, as the program would create, next to the process's global one.
  ThreadPool pool(defaultThreadCount());
  std::vector<std::pair<std::string, Call>> calls = {{"conv", convCall()},
                                                     {"matmul", bf16MatMulCall()}};
  for (auto &named : formerlyAllocatingCalls())
    calls.push_back(std::move(named));
  std::vector<uint64_t> sizes;
  for (const auto &[name, call] : calls) {
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
  // The convolution on oneDNN (where the rule finds an optimized implementation for this CPU):
  // its blocked copies and scratchpad; on memc's kernel: im2col columns, 27 rows of 256 output
  // positions.
  Call conv = convCall();
  KernelCall convKernelCall = conv.call();
  if (std::optional<OneDnnConvChunks> chunks =
          oneDnnConvolution(convKernelCall, ConvDirection::Forward))
    EXPECT_EQ(one[0], chunks->totalBytes());
  else
    EXPECT_GE(one[0], uint64_t{27 * 256 * 4});
  // bf16 operands and result widened to f32: (512 + 128 + 1024) floats, each piece aligned.
  EXPECT_GE(one[1], uint64_t{(512 + 128 + 1024) * 4});
  // cross_entropy: a target and a loss per row; bf16 adds a row of 64 floats per slot.
  EXPECT_EQ(one[2], uint64_t{2048 * 8 + 2048 * 8});
  EXPECT_EQ(one[3], uint64_t{2048 * 16 + kMaxWorkspaceSlots * 64 * 4});
  // cross_entropy_grad: targets and the f16 rows.
  EXPECT_EQ(one[4], uint64_t{2048 * 8 + kMaxWorkspaceSlots * 64 * 4});
  // gather_grad: rows and order per index, 1001 group bounds, one bf16 slice's sums.
  EXPECT_GE(one[5], uint64_t{2 * 512 * 8 + 1001 * 8 + 8 * 4});
  // Pooling gradients: a 16 x 16 f32 plane per slot.
  EXPECT_EQ(one[6], uint64_t{8 * 256 * 4});
  EXPECT_EQ(one[7], uint64_t{8 * 256 * 4});
}

TEST(KernelWorkspaceTest, FormerlyAllocatingKernelsRunInTheirWorkspace) {
  for (auto &[name, c] : formerlyAllocatingCalls()) {
    KernelCall call = c.call();
    std::string error;
    ASSERT_TRUE(kernelNamed(name).check(call, error)) << name << ": " << error;
    EXPECT_TRUE(runWithWorkspace(kernelNamed(name), call, error)) << name << ": " << error;
  }
}

TEST(KernelWorkspaceTest, FormerlyAllocatingKernelsRejectATooSmallWorkspace) {
  for (auto &[name, c] : formerlyAllocatingCalls()) {
    KernelCall call = c.call();
    uint64_t bytes = workspaceBytes(kernelNamed(name), call);
    ASSERT_GT(bytes, 8u) << name;
    std::vector<uint64_t> storage(bytes / 8);
    call.workspace = storage.data();
    call.workspaceBytes = bytes - 8;
    std::string error;
    EXPECT_FALSE(runInContext(kernelNamed(name), call, error)) << name;
    EXPECT_NE(error.find("workspace"), std::string::npos) << name << ": " << error;
  }
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
  EXPECT_FALSE(runInContext(kernelNamed("conv"), call, error));
  EXPECT_NE(error.find("workspace"), std::string::npos) << error;
}

TEST(KernelWorkspaceTest, ElementwiseKernelsNeedNone) {
  std::vector<OwnedTensor> inputs = {OwnedTensor(DType::F32, {1024}),
                                     OwnedTensor(DType::F32, {1024})};
  std::vector<OwnedTensor> outputs = {OwnedTensor(DType::F32, {1024})};
  Attributes attributes;
  EXPECT_EQ(workspaceBytes(kernelNamed("add"), makeCall(inputs, outputs, attributes)), 0u);
}

/// Causal attention of 2 heads of dimension 64 over `tokens` tokens; the backward with
/// `backward`.
Call attentionCall(int64_t tokens, bool backward) {
  Call c;
  Shape q = {1, 2, tokens, 64}, lse = {1, 2, tokens};
  c.attributes.set("causal", int64_t{1});
  c.attributes.set("scale", 0.125);
  if (backward) {
    c.inputs = {OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, q),
                OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, q),
                OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, lse)};
    c.outputs = {OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, q),
                 OwnedTensor(DType::F32, q)};
  } else {
    c.inputs = {OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, q)};
    c.outputs = {OwnedTensor(DType::F32, q), OwnedTensor(DType::F32, lse)};
  }
  return c;
}

TEST(KernelWorkspaceTest, AttentionScratchIsTilesNotScores) {
  for (bool backward : {false, true}) {
    const char *name = backward ? "flash_attention_grad" : "flash_attention";
    std::string error;
    Call small = attentionCall(1024, backward), large = attentionCall(4096, backward);
    KernelCall smallCall = small.call(), largeCall = large.call();
    ASSERT_TRUE(kernelNamed(name).check(smallCall, error)) << error;
    ASSERT_TRUE(kernelNamed(name).check(largeCall, error)) << error;
    uint64_t bytes = workspaceBytes(kernelNamed(name), smallCall);
    // Four times the tokens, the same scratch: a few 64-row tiles per slot, at most 16 slots
    // (the backward's 13 tiles of 64 x 64 f32, 16 KiB each, and its row vectors).
    EXPECT_EQ(workspaceBytes(kernelNamed(name), largeCall), bytes) << name;
    EXPECT_LE(bytes, uint64_t(kMaxWorkspaceSlots) * 14 * 64 * 64 * 4) << name;
    // A too-small workspace is an error, not an overrun.
    std::vector<uint64_t> storage(bytes / 8);
    smallCall.workspace = storage.data();
    smallCall.workspaceBytes = bytes - 8;
    EXPECT_FALSE(runInContext(kernelNamed(name), smallCall, error)) << name;
    EXPECT_NE(error.find("workspace"), std::string::npos) << name << ": " << error;
  }
}

/// The LM head and loss of 600 tokens of dimension 32 over `classes` classes (a tied [V, D]
/// weight), in `dtype`; the backward with `backward`.
Call linearCrossEntropyCall(int64_t classes, DType dtype, bool backward) {
  Call c;
  Shape hidden = {600, 32}, weight = {classes, 32}, rows = {600};
  c.attributes.set("ignore_index", int64_t{-100});
  c.attributes.set("transpose_weight", int64_t{1});
  std::vector<OwnedTensor> head = {OwnedTensor(dtype, hidden), OwnedTensor(dtype, weight),
                                   OwnedTensor(DType::I64, rows)};
  if (backward) {
    c.inputs = {OwnedTensor(DType::F32, {}), std::move(head[0]), std::move(head[1]),
                std::move(head[2]), OwnedTensor(DType::F32, rows)};
    c.outputs = {OwnedTensor(dtype, hidden), OwnedTensor(dtype, weight)};
  } else {
    c.inputs = std::move(head);
    c.outputs = {OwnedTensor(DType::F32, {}), OwnedTensor(DType::F32, rows)};
  }
  return c;
}

TEST(KernelWorkspaceTest, LinearCrossEntropyScratchIsTilesNotLogits) {
  for (DType dtype : {DType::F32, DType::BF16})
    for (bool backward : {false, true}) {
      const char *name = backward ? "linear_cross_entropy_grad" : "linear_cross_entropy";
      std::string error;
      Call small = linearCrossEntropyCall(5000, dtype, backward);
      Call large = linearCrossEntropyCall(50000, dtype, backward);
      KernelCall smallCall = small.call(), largeCall = large.call();
      ASSERT_TRUE(kernelNamed(name).check(smallCall, error)) << error;
      ASSERT_TRUE(kernelNamed(name).check(largeCall, error)) << error;
      uint64_t bytes = workspaceBytes(kernelNamed(name), smallCall);
      // Ten times the vocabulary, the same scratch: the labels (and the forward's row losses),
      // then per slot one 256 x 256 tile of f32 logits (the forward's slots are the 600 rows'
      // 3 blocks, the backward's the classes' chunks, at most 16), and for bf16 on oneDNN its
      // scratchpad, the gradient's f32 sum of 256 x 32 and the backward's two bf16 tiles (else
      // the widened block, chunk and gradient of 256 x 32); the f32 one-pass backward's partial
      // hidden gradient of 256 x 32.
      EXPECT_EQ(workspaceBytes(kernelNamed(name), largeCall), bytes) << name;
      uint64_t slots = backward ? kMaxWorkspaceSlots : 3, perSlot = 256 * 256 * 4 + 2 * 256 * 8;
      LinearCrossEntropySizes sizes(smallCall, backward ? 1 : 0, backward ? 5 : 3);
      if (sizes.oneDnn)
        perSlot += sizes.oneDnnScratchpad + 256 * 32 * 4 + (backward ? 2 * 256 * 256 * 2 : 0);
      else if (dtype == DType::BF16)
        perSlot += 3 * 256 * 32 * 4;
      else if (backward && sizes.onePassBackward())
        perSlot += 256 * 32 * 4; // the partial hidden gradient of a block
      EXPECT_LE(bytes, 600 * 16 + slots * (perSlot + 4 * 64)) << name;
      EXPECT_LT(bytes, uint64_t(600) * 50000 * 4 / 10) << name << ": a tenth of the logits";
      std::vector<uint64_t> storage(bytes / 8);
      smallCall.workspace = storage.data();
      smallCall.workspaceBytes = bytes - 8;
      EXPECT_FALSE(runInContext(kernelNamed(name), smallCall, error)) << name;
      EXPECT_NE(error.find("workspace"), std::string::npos) << name << ": " << error;
    }
}

} // namespace
} // namespace memc::kernels::testing
