//===- ShapeInferenceTest.cpp - the memc ops' shape rules -----------------===//
#include "dialects/memc/ShapeInference.h"
#include "kernels/ShapeRules.h"

#include <gtest/gtest.h>

#include <limits>

using namespace memc;

namespace {

Shape shapeOf(std::initializer_list<int64_t> dims) { return Shape(dims); }

TEST(BroadcastShapes, AlignsTrailingDimensions) {
  Shape result;
  std::string error;
  ASSERT_TRUE(succeeded(broadcastShapes({shapeOf({2, 1, 16}), shapeOf({4, 1}), shapeOf({})},
                                        result, error)));
  EXPECT_EQ(result, shapeOf({2, 4, 16}));
}

TEST(BroadcastShapes, RejectsMismatchWithBothShapesInTheMessage) {
  Shape result;
  std::string error;
  ASSERT_TRUE(failed(broadcastShapes({shapeOf({4, 16}), shapeOf({8})}, result, error)));
  EXPECT_EQ(error, "shapes [4,16] [8] do not broadcast");
}

TEST(MatmulShape, BroadcastsBatchDimensions) {
  Shape result;
  std::string error;
  ASSERT_TRUE(succeeded(matmulShape(shapeOf({2, 1, 16, 32}), shapeOf({4, 32, 8}), result, error)));
  EXPECT_EQ(result, shapeOf({2, 4, 16, 8}));
}

TEST(MatmulShape, PromotesVectors) {
  Shape result;
  std::string error;
  ASSERT_TRUE(succeeded(matmulShape(shapeOf({5}), shapeOf({5}), result, error)));
  EXPECT_EQ(result, shapeOf({}));
  ASSERT_TRUE(succeeded(matmulShape(shapeOf({3, 5}), shapeOf({5}), result, error)));
  EXPECT_EQ(result, shapeOf({3}));
  ASSERT_TRUE(succeeded(matmulShape(shapeOf({5}), shapeOf({2, 5, 7}), result, error)));
  EXPECT_EQ(result, shapeOf({2, 7}));
}

TEST(MatmulShape, RejectsContractionMismatchAndScalars) {
  Shape result;
  std::string error;
  EXPECT_TRUE(failed(matmulShape(shapeOf({4, 16}), shapeOf({8, 3}), result, error)));
  EXPECT_EQ(error, "matmul contraction dimensions differ: [4,16] x [8,3]");
  EXPECT_TRUE(failed(matmulShape(shapeOf({}), shapeOf({3}), result, error)));
}

TEST(ReduceShape, KeepsOrDropsAxes) {
  Shape result;
  std::string error;
  ASSERT_TRUE(succeeded(reduceShape(shapeOf({2, 3, 4}), {0, 2}, true, result, error)));
  EXPECT_EQ(result, shapeOf({1, 3, 1}));
  ASSERT_TRUE(succeeded(reduceShape(shapeOf({2, 3, 4}), {0, 2}, false, result, error)));
  EXPECT_EQ(result, shapeOf({3}));
}

TEST(ReduceShape, RejectsUnsortedRepeatedOrOutOfRangeAxes) {
  Shape result;
  std::string error;
  EXPECT_TRUE(failed(reduceShape(shapeOf({2, 3}), {1, 0}, true, result, error)));
  EXPECT_TRUE(failed(reduceShape(shapeOf({2, 3}), {1, 1}, true, result, error)));
  EXPECT_TRUE(failed(reduceShape(shapeOf({2, 3}), {2}, true, result, error)));
  EXPECT_TRUE(failed(reduceShape(shapeOf({2, 3}), {-1}, true, result, error)));
}

TEST(WindowOutputSize, MatchesPyTorchFloorAndCeilModes) {
  // torch.nn.MaxPool2d(3, stride=2, padding=1) on 16 -> 8; ceil_mode on 8 with k3 s2 -> 4.
  EXPECT_EQ(windowOutputSize(16, 3, 2, 1, 1, 1, false), 8);
  EXPECT_EQ(windowOutputSize(8, 3, 2, 0, 0, 1, true), 4);
  EXPECT_EQ(windowOutputSize(8, 3, 2, 0, 0, 1, false), 3);
  // Dilation 2 makes a 3-tap kernel span 5 inputs.
  EXPECT_EQ(windowOutputSize(7, 3, 1, 0, 0, 2, false), 3);
  // PyTorch drops a ceil-mode window that would start in the padding: 5, k2 s2 p1 -> 3, not 4.
  EXPECT_EQ(windowOutputSize(5, 2, 2, 1, 1, 1, true), 3);
}

TEST(WindowShape, ChecksAttributeLengths) {
  Shape result;
  std::string error;
  EXPECT_TRUE(failed(windowShape(shapeOf({2, 3, 8, 8}), 4, {3, 3}, {1}, {0, 0, 0, 0}, {1, 1},
                                 false, result, error)));
  ASSERT_TRUE(succeeded(windowShape(shapeOf({2, 3, 8, 8}), 4, {3, 3}, {1, 1}, {0, 0, 0, 0},
                                    {1, 1}, false, result, error)));
  EXPECT_EQ(result, shapeOf({2, 4, 6, 6}));
  EXPECT_TRUE(failed(windowShape(shapeOf({2, 3, 2, 2}), 4, {3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1},
                                 false, result, error)));
}

TEST(SliceLength, CountsForwardAndBackwardSteps) {
  EXPECT_EQ(sliceLength(0, 16, 1), 16);
  EXPECT_EQ(sliceLength(1, 16, 4), 4);   // 1, 5, 9, 13
  EXPECT_EQ(sliceLength(15, -1, -4), 4); // 15, 11, 7, 3
  EXPECT_EQ(sliceLength(3, 3, 1), 0);
  EXPECT_EQ(sliceLength(2, 5, -1), 0);
  // The extreme steps count without overflowing.
  constexpr int64_t max = std::numeric_limits<int64_t>::max();
  constexpr int64_t min = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(sliceLength(0, 4, max), 1);
  EXPECT_EQ(sliceLength(3, -1, min), 1);
}

// numpy's x[start:end:step] on one axis of 4, for the bounds exporters and fuzzers write.
TEST(ClampOnnxSlice, MatchesNumpyAtTheExtremes) {
  constexpr int64_t max = std::numeric_limits<int64_t>::max();
  constexpr int64_t min = std::numeric_limits<int64_t>::min();
  auto length = [](int64_t start, int64_t end, int64_t step) {
    kernels::ClampedSlice clamped = kernels::clampOnnxSlice(start, end, step, 4);
    return kernels::sliceLength(clamped.start, clamped.limit, clamped.step);
  };
  EXPECT_EQ(length(0, max, max), 1);  // x[0::huge]
  EXPECT_EQ(length(-1, min, min), 1); // x[-1::-huge]
  EXPECT_EQ(length(min, max, 1), 4);  // x[:]
  EXPECT_EQ(length(max, min, -1), 4); // x[::-1]
  EXPECT_EQ(length(1, 3, 1), 2);
  EXPECT_EQ(length(-3, -1, 1), 2);
  EXPECT_EQ(length(3, 0, -2), 2); // 3, 1
  // Bounded steps keep the kernels' step * stride within int64.
  EXPECT_EQ(kernels::clampOnnxSlice(0, max, max, 4).step, 4);
  EXPECT_EQ(kernels::clampOnnxSlice(-1, min, min, 4).step, -4);
  // An empty axis takes nothing, whatever the bounds.
  kernels::ClampedSlice empty = kernels::clampOnnxSlice(min, max, -1, 0);
  EXPECT_EQ(kernels::sliceLength(empty.start, empty.limit, empty.step), 0);
}

// memc.slice accepts any non-zero step: one past the dimension takes the start alone.
TEST(SliceShape, TakesOneElementForStepsPastTheDimension) {
  kernels::Shape result;
  std::string error;
  constexpr int64_t max = std::numeric_limits<int64_t>::max();
  ASSERT_TRUE(kernels::sliceShape({2, 4}, {0, 0}, {2, 4}, {1, max}, result, error)) << error;
  EXPECT_EQ(result, kernels::Shape({2, 1}));
}

TEST(AttentionShapes, GroupsQueryHeadsOverKvHeads) {
  Shape output, logsumexp;
  std::string error;
  ASSERT_TRUE(succeeded(attentionShapes(shapeOf({2, 12, 70, 64}), shapeOf({2, 4, 90, 64}),
                                        shapeOf({2, 4, 90, 32}), shapeOf({2, 1, 1, 90}), output,
                                        logsumexp, error)))
      << error;
  EXPECT_EQ(output, shapeOf({2, 12, 70, 32}));
  EXPECT_EQ(logsumexp, shapeOf({2, 12, 70}));
}

TEST(AttentionShapes, RejectsMismatchesWithTheShapes) {
  Shape output, logsumexp;
  std::string error;
  ASSERT_TRUE(
      failed(attentionShapes(shapeOf({1, 2, 8, 16}), shapeOf({1, 2, 8, 8}), shapeOf({1, 2, 8, 8}),
                             std::nullopt, output, logsumexp, error)));
  EXPECT_EQ(error, "flash_attention q, k and v disagree on batch, kv heads, keys or head_dim: "
                   "[1,2,8,16], [1,2,8,8], [1,2,8,8]");
  ASSERT_TRUE(
      failed(attentionShapes(shapeOf({1, 2, 8, 8}), shapeOf({1, 0, 8, 8}), shapeOf({1, 0, 8, 8}),
                             std::nullopt, output, logsumexp, error)));
  EXPECT_NE(error.find("kv heads (0) must be positive"), std::string::npos) << error;
  ASSERT_TRUE(
      failed(attentionShapes(shapeOf({1, 2, 8, 8}), shapeOf({1, 2, 8, 8}), shapeOf({1, 2, 8, 8}),
                             shapeOf({1, 2, 8, 4}), output, logsumexp, error)));
  EXPECT_EQ(error, "flash_attention mask [1,2,8,4] must have rank 4 and broadcast to [1,2,8,8]");
  // Zero-width heads leave every tensor small; the pairs still bound the kernels' task counts.
  int64_t huge = int64_t{1} << 30;
  ASSERT_TRUE(
      failed(attentionShapes(shapeOf({1, 1, huge, 0}), shapeOf({1, 1, huge, 0}),
                             shapeOf({1, 1, huge, 0}), std::nullopt, output, logsumexp, error)));
  EXPECT_NE(error.find("more than 2^48 query-key pairs"), std::string::npos) << error;
}

} // namespace
