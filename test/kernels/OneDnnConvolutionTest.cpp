//===- OneDnnConvolutionTest.cpp - the convolutions oneDNN runs ------------===//
//
// oneDNN's side of conv, conv_grad_input and conv_grad_weight, forced whatever the measured
// table would choose (ConvChoiceTest checks the choice): the results against plain f64 loops
// (Conv2dReference.h), the truth memc's own kernels are held to too (both sides are run against
// them here), the chunked cut, its workspace and its repeatability. bf16 runs on oneDNN only
// where it has bf16 kernels for this CPU (OneDnnIsa.h). ctest runs them with MEMC_NUM_THREADS=4.
//
//===----------------------------------------------------------------------===//
#include "Conv2dReference.h"
#include "KernelTestSupport.h"
#include "OneDnnIsa.h"

#include "kernels/cpu/OneDnnConvolution.h"
#include "kernels/cpu/OneDnnConvolutionOnPool.h"

#include <algorithm>
#include <cstring>

namespace memc::kernels::testing {
namespace {

/// Whether the selection rule gives `kernel` on these tensors to oneDNN.
bool runsOnOneDnn(const std::string &kernel, const std::vector<OwnedTensor> &inputs,
                  const std::vector<OwnedTensor> &outputs, const Attributes &attributes) {
  KernelCall call = makeCall(inputs, outputs, attributes);
  ConvDirection direction = kernel == "conv"              ? ConvDirection::Forward
                            : kernel == "conv_grad_input" ? ConvDirection::GradInput
                                                          : ConvDirection::GradWeight;
  return oneDnnConvolution(call, direction).has_value();
}

OwnedTensor asType(DType dtype, const OwnedTensor &values) {
  return tensor(dtype, values.shape, values.values());
}

/// Runs conv and both gradients of `conv` in `dtype` and compares them with the loops on the
/// same (rounded) values.
void expectMatchesLoops(const Conv2d &conv, DType dtype, uint32_t seed, double rtol,
                        double atol) {
  OwnedTensor x = asType(dtype, randomF32(conv.input(), seed));
  OwnedTensor w = asType(dtype, randomF32(conv.weight(), seed + 1));
  OwnedTensor g = asType(dtype, randomF32(conv.output(), seed + 2));
  std::vector<double> xv = x.values(), wv = w.values(), gv = g.values();
  std::vector<double> y(g.numElements(), 0.0), dx(x.numElements(), 0.0), dw(w.numElements(), 0.0);
  conv.forEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
    y[yi] += xv[xi] * wv[wi];
    dx[xi] += gv[yi] * wv[wi];
    dw[wi] += gv[yi] * xv[xi];
  });
  Attributes a = conv.attributes();
  EXPECT_TRUE(closeTo(runKernel("conv", {x, w}, {{dtype, conv.output()}}, a)[0].values(), y,
                      rtol, atol));
  EXPECT_TRUE(closeTo(runKernel("conv_grad_input", {g, w}, {{dtype, conv.input()}}, a)[0].values(),
                      dx, rtol, atol));
  EXPECT_TRUE(closeTo(
      runKernel("conv_grad_weight", {g, x}, {{dtype, conv.weight()}}, a)[0].values(), dw, rtol,
      atol * 8));
}

/// Asserts which of conv, conv_grad_input, conv_grad_weight the rule gives to oneDNN.
void expectOneDnn(const Conv2d &conv, DType dtype, bool forward, bool gradInput,
                  bool gradWeight) {
  OwnedTensor x(dtype, conv.input()), w(dtype, conv.weight()), y(dtype, conv.output());
  Attributes a = conv.attributes();
  EXPECT_EQ(runsOnOneDnn("conv", {x, w}, {y}, a), forward);
  EXPECT_EQ(runsOnOneDnn("conv_grad_input", {y, w}, {x}, a), gradInput);
  EXPECT_EQ(runsOnOneDnn("conv_grad_weight", {y, x}, {w}, a), gradWeight);
}

/// Every test runs with oneDNN's side forced.
class OneDnnConvolution : public ::testing::Test {
protected:
  void SetUp() override { forceConvImplementation(ConvImplementation::OneDnn); }
  void TearDown() override { forceConvImplementation(std::nullopt); }
};

Conv2d finished(Conv2d conv) {
  conv.finish();
  return conv;
}

// The ResNet bench model's 3x3 layers (bench/training: fixtures.ResNet at B32x3x32x32).
const Conv2d kStem = finished({32, 3, 32, 32, 8, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}});
const Conv2d kLayer1 = finished({32, 8, 16, 16, 8, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}});
const Conv2d kLayer2a = finished({32, 8, 16, 16, 16, 3, 3, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}});
const Conv2d kLayer2b = finished({32, 16, 8, 8, 16, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}});
const Conv2d kDownsample = finished({32, 8, 16, 16, 16, 1, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}});

TEST_F(OneDnnConvolution, BothSidesMatchLoopsOnTheResNetLayers) {
  uint32_t seed = 1;
  for (ConvImplementation side : {ConvImplementation::Memc, ConvImplementation::OneDnn}) {
    forceConvImplementation(side);
    bool oneDnn = side == ConvImplementation::OneDnn;
    for (const Conv2d *conv : {&kStem, &kLayer1, &kLayer2a, &kLayer2b, &kDownsample}) {
      expectOneDnn(*conv, DType::F32, oneDnn, oneDnn, oneDnn);
      expectMatchesLoops(*conv, DType::F32, seed += 3, 1e-4, 1e-4);
    }
  }
}

TEST_F(OneDnnConvolution, StridesPadsAndDilationsMatchLoopsOnBothSides) {
  // Asymmetric pads, unequal strides and dilations, a window that is not square; a 5x5 one.
  Conv2d conv = finished({4, 16, 19, 23, 24, 3, 2, 1, {2, 1}, {1, 0, 2, 1}, {2, 3}});
  Conv2d wide = finished({2, 8, 12, 12, 16, 5, 5, 1, {1, 1}, {2, 2, 2, 2}, {1, 1}});
  for (ConvImplementation side : {ConvImplementation::Memc, ConvImplementation::OneDnn}) {
    forceConvImplementation(side);
    bool oneDnn = side == ConvImplementation::OneDnn;
    expectOneDnn(conv, DType::F32, oneDnn, oneDnn, oneDnn);
    expectMatchesLoops(conv, DType::F32, 40, 1e-4, 1e-4);
    expectOneDnn(wide, DType::F32, oneDnn, oneDnn, oneDnn);
    expectMatchesLoops(wide, DType::F32, 50, 1e-4, 1e-4);
  }
}

TEST_F(OneDnnConvolution, Bf16RunsOnOneDnnWithGroupsAndPointwise) {
  // bf16 runs on oneDNN (f32 accumulation) where it has bf16 kernels, grouped and 1x1 included.
  // Without them (AVX2) memc's kernel runs, and matches the loops as well.
  const bool oneDnn = oneDnnHasBf16Kernels();
  const Conv2d grouped = finished({4, 16, 10, 10, 32, 3, 3, 4, {1, 2}, {1, 1, 1, 1}, {1, 1}});
  for (const Conv2d *conv : {&kLayer1, &kLayer2a, &kDownsample, &grouped}) {
    expectOneDnn(*conv, DType::BF16, oneDnn, oneDnn, oneDnn);
    // Results round to bf16 (8 bits): a relative error of 2^-8 per output.
    expectMatchesLoops(*conv, DType::BF16, 60, 1e-2, 5e-2);
  }
}

TEST_F(OneDnnConvolution, Bf16CopiesAreBf16NotWidenedOperands) {
  // oneDNN's copies of the operands are bf16 in its blocked layouts: with 16 channels (one
  // block, no padding) they take the operands' own 2 bytes per element, half of the f32 copies
  // memc's kernel widens into. (With 8 channels the blocks pad to 16 and the copies reach the f32
  // size; the scratchpad comes on top: docs/benchmarks.md has the numbers.)
  const Conv2d &conv = kLayer2b;
  OwnedTensor x(DType::BF16, conv.input()), w(DType::BF16, conv.weight()),
      y(DType::BF16, conv.output());
  Attributes a = conv.attributes();
  std::vector<OwnedTensor> inputs = {x, w}, outputs = {y};
  KernelCall call = makeCall(inputs, outputs, a);
  std::optional<OneDnnConvChunks> chunks = oneDnnConvolution(call, ConvDirection::Forward);
  ASSERT_EQ(chunks.has_value(), oneDnnHasBf16Kernels());
  if (!chunks)
    return; // memc's kernel runs it: there are no oneDNN copies to measure on this CPU
  uint64_t operands = static_cast<uint64_t>(x.numElements() + w.numElements() + y.numElements());
  EXPECT_LE(chunks->sharedWeights + chunks->chunks * (chunks->image + chunks->outputs),
            2 * operands);
  EXPECT_EQ(workspaceBytes(kernelNamed("conv"), call), chunks->totalBytes());
}

TEST_F(OneDnnConvolution, WorkspaceRuleCoversTheRunAndTooLittleIsAnError) {
  OwnedTensor x = randomF32(kLayer1.input(), 70);
  OwnedTensor g = randomF32(kLayer1.output(), 72), dw(DType::F32, kLayer1.weight());
  Attributes a = kLayer1.attributes();
  std::vector<OwnedTensor> inputs = {g, x}, outputs = {dw};
  KernelCall call = makeCall(inputs, outputs, a);
  const Kernel &kernel = kernelNamed("conv_grad_weight");
  uint64_t bytes = workspaceBytes(kernel, call);
  ASSERT_GT(bytes, 0u); // the blocked copies of x and dy
  std::string error;
  EXPECT_TRUE(runWithWorkspace(kernel, call, error)) << error;
  EXPECT_FALSE(runWithTooLittleWorkspace(kernel, call, error));
  EXPECT_NE(error.find("workspace"), std::string::npos) << error;
}

TEST_F(OneDnnConvolution, RunsAreBitwiseRepeatable) {
  Attributes a = kLayer2b.attributes();
  OwnedTensor x = randomF32(kLayer2b.input(), 80), g = randomF32(kLayer2b.output(), 81);
  std::vector<OwnedTensor> first = runKernel("conv_grad_weight", {g, x},
                                             {{DType::F32, kLayer2b.weight()}}, a);
  for (int run = 0; run < 3; ++run) {
    std::vector<OwnedTensor> again = runKernel("conv_grad_weight", {g, x},
                                               {{DType::F32, kLayer2b.weight()}}, a);
    EXPECT_EQ(std::memcmp(first[0].view().data, again[0].view().data,
                          first[0].view().sizeBytes()),
              0);
  }
}

/// One direction's call on `conv`: random operands, the written tensor zeroed.
struct DirectionCall {
  std::vector<OwnedTensor> inputs, outputs;
  Attributes attributes;
  KernelCall call;

  DirectionCall(const Conv2d &conv, DType dtype, ConvDirection direction, uint32_t seed,
                bool bias = false)
      : attributes(conv.attributes()) {
    OwnedTensor x = asType(dtype, randomF32(conv.input(), seed));
    OwnedTensor w = asType(dtype, randomF32(conv.weight(), seed + 1));
    OwnedTensor g = asType(dtype, randomF32(conv.output(), seed + 2));
    if (direction == ConvDirection::Forward)
      inputs = {x, w}, outputs = {OwnedTensor(dtype, conv.output())};
    else if (direction == ConvDirection::GradInput)
      inputs = {g, w}, outputs = {OwnedTensor(dtype, conv.input())};
    else
      inputs = {g, x}, outputs = {OwnedTensor(dtype, conv.weight())};
    if (direction == ConvDirection::Forward && bias)
      inputs.push_back(asType(dtype, randomF32({conv.m}, seed + 3)));
    call = makeCall(inputs, outputs, attributes);
  }
};

/// Runs `call` on oneDNN cut as `chunks` says, in a workspace of its own filled with garbage:
/// on memc's pool (`pooled`), else the chunks one after another in reverse order on this thread.
/// Returns the written tensor's bytes.
std::vector<uint8_t> runChunked(DirectionCall &run, ConvDirection direction,
                                const OneDnnConvChunks &chunks, bool pooled) {
  std::vector<uint8_t> storage(chunks.totalBytes() + kWorkspaceAlignment, 0xA5);
  uintptr_t address = reinterpret_cast<uintptr_t>(storage.data());
  address = (address + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  KernelCall call = run.call;
  call.workspace = reinterpret_cast<void *>(address);
  call.workspaceBytes = chunks.totalBytes();
  WorkspaceCarver carver(call);
  OneDnnConvScratch scratch = carveOneDnnConv(chunks, carver);
  EXPECT_EQ(carver.bytes(), chunks.totalBytes());
  if (pooled) {
    runOneDnnConvolution(call, direction, scratch);
  } else {
    prepareOneDnnConvolution(call, direction, scratch);
    for (int64_t chunk = chunks.chunks - 1; chunk >= 0; --chunk)
      runOneDnnConvChunk(call, direction, scratch, chunk);
    finishOneDnnConvolution(call, direction, scratch, 0, call.outputs[0].numElements());
  }
  const OwnedTensor &written = run.outputs[0];
  return written.bytes;
}

std::vector<double> decoded(DType dtype, const Shape &shape, const std::vector<uint8_t> &bytes) {
  OwnedTensor t(dtype, shape);
  t.bytes = bytes;
  return t.values();
}

/// The rule's cut of `conv` (asserted to be several chunks) against one oneDNN call on the
/// whole batch, within `rtol`/`atol`; and the cut run twice on the pool (MEMC_NUM_THREADS=4)
/// and once chunk by chunk on one thread, bit for bit.
void expectChunksMatchOneCall(const Conv2d &conv, DType dtype, ConvDirection direction,
                              double rtol, double atol, bool bias = false) {
  DirectionCall run(conv, dtype, direction, 90, bias);
  std::optional<OneDnnConvChunks> rule = oneDnnConvolution(run.call, direction);
  std::optional<OneDnnConvChunks> whole = oneDnnConvChunks(run.call, direction, 1);
  if (dtype == DType::BF16 && !oneDnnHasBf16Kernels()) {
    EXPECT_FALSE(rule || whole); // no bf16 kernels on this CPU: nothing to cut
    return;
  }
  ASSERT_TRUE(rule && whole);
  EXPECT_GT(rule->chunks, 1);
  EXPECT_EQ(whole->chunks, 1);
  EXPECT_EQ(whole->chunkImages, conv.input()[0]);
  const Shape &shape = run.outputs[0].shape;
  std::vector<uint8_t> chunked = runChunked(run, direction, *rule, true);
  std::vector<uint8_t> oneCall = runChunked(run, direction, *whole, true);
  EXPECT_TRUE(closeTo(decoded(dtype, shape, chunked), decoded(dtype, shape, oneCall), rtol, atol));
  EXPECT_TRUE(chunked == runChunked(run, direction, *rule, true));
  EXPECT_TRUE(chunked == runChunked(run, direction, *rule, false));
}

TEST_F(OneDnnConvolution, ChunkedRunsMatchOneCallAndRepeatBitForBit) {
  // kLayer1 cuts into 2 chunks of 16 images, kStem into 3 of 11, 11 and 10 (a second shape).
  for (const Conv2d *conv : {&kLayer1, &kStem}) {
    expectChunksMatchOneCall(*conv, DType::F32, ConvDirection::Forward, 1e-5, 1e-5);
    expectChunksMatchOneCall(*conv, DType::F32, ConvDirection::GradWeight, 1e-4, 1e-4);
  }
  expectChunksMatchOneCall(kLayer1, DType::F32, ConvDirection::GradInput, 1e-5, 1e-5);
  // bf16 results round to 8 bits: one rounding either side of a tie differs by 2^-8.
  for (ConvDirection direction :
       {ConvDirection::Forward, ConvDirection::GradInput, ConvDirection::GradWeight})
    expectChunksMatchOneCall(kStem, DType::BF16, direction, 1e-2, 1e-2);
  // Each chunk adds the bias; grouped weights (in bf16, as the rule runs them) in 4 chunks.
  expectChunksMatchOneCall(kLayer1, DType::F32, ConvDirection::Forward, 1e-5, 1e-5, true);
  const Conv2d grouped = finished({32, 16, 16, 16, 32, 3, 3, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}});
  for (ConvDirection direction :
       {ConvDirection::Forward, ConvDirection::GradInput, ConvDirection::GradWeight})
    expectChunksMatchOneCall(grouped, DType::BF16, direction, 1e-2, 1e-2);
}

TEST_F(OneDnnConvolution, WorkspaceIsASlotPerChunkWhateverTheThreads) {
  // The cut and so the workspace come from the shapes alone: the rule's numbers are the same
  // at every MEMC_NUM_THREADS, and the chunk count follows the multiply-adds.
  DirectionCall small(finished({2, 8, 8, 8, 8, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}}),
                      DType::F32, ConvDirection::Forward, 95);
  std::optional<OneDnnConvChunks> one = oneDnnConvolution(small.call, ConvDirection::Forward);
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->chunks, 1);
  DirectionCall large(kLayer1, DType::F32, ConvDirection::GradWeight, 96);
  std::optional<OneDnnConvChunks> cut = oneDnnConvolution(large.call, ConvDirection::GradWeight);
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(cut->chunks, 2);
  EXPECT_EQ(cut->chunkImages, 16);
  // Each chunk's f32 partial weight gradient has a slot of its own.
  EXPECT_GE(cut->partial, static_cast<uint64_t>(kLayer1.weight()[0] * kLayer1.weight()[1] * 9 * 4));
  EXPECT_EQ(workspaceBytes(kernelNamed("conv_grad_weight"), large.call), cut->totalBytes());
}

} // namespace
} // namespace memc::kernels::testing
