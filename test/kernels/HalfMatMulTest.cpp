//===- HalfMatMulTest.cpp - 16-bit matmul, a result tile at a time ---------===//
//
// f16/bf16 matmul widens one tile of rows and columns, one block of K, at a time
// (MatMulWorkspace.h): products with several row, column and depth blocks, stacked and batched
// with broadcasting, must match a float64 product of the same 16-bit inputs, and the workspace
// must not grow with the operands.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include "kernels/cpu/MatMulWorkspace.h"

#include <random>

namespace memc::kernels::testing {
namespace {

std::vector<double> randomValues(int64_t count, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> values(count);
  for (double &value : values)
    value = uniform(generator);
  return values;
}

int64_t elements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// numpy.matmul in float64 of a [B..., M, K] and b [B'..., K, N] batches (batch dims of equal
/// rank, broadcasting 1s), on the values the 16-bit tensors hold.
std::vector<double> referenceProduct(const OwnedTensor &a, const OwnedTensor &b,
                                     const Shape &batch, int64_t m, int64_t k, int64_t n) {
  std::vector<double> lhs = a.values(), rhs = b.values(), result;
  Shape lhsBatch(a.shape.begin(), a.shape.end() - 2), rhsBatch(b.shape.begin(), b.shape.end() - 2);
  int64_t count = elements(batch);
  for (int64_t index = 0; index < count; ++index) {
    int64_t lhsIndex = 0, rhsIndex = 0, rest = index, lhsStride = 1, rhsStride = 1;
    for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      int64_t coordinate = rest % batch[d];
      rest /= batch[d];
      lhsIndex += (lhsBatch[d] == 1 ? 0 : coordinate) * lhsStride;
      rhsIndex += (rhsBatch[d] == 1 ? 0 : coordinate) * rhsStride;
      lhsStride *= lhsBatch[d];
      rhsStride *= rhsBatch[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += lhs[(lhsIndex * m + i) * k + p] * rhs[(rhsIndex * k + p) * n + j];
        result.push_back(sum);
      }
  }
  return result;
}

void expectProductMatches(DType dtype, const Shape &lhsShape, const Shape &rhsShape,
                          const Shape &batch) {
  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back(), n = rhsShape.back();
  OwnedTensor a = tensor(dtype, lhsShape, randomValues(elements(lhsShape), 1));
  OwnedTensor b = tensor(dtype, rhsShape, randomValues(elements(rhsShape), 2));
  Shape resultShape = batch;
  resultShape.push_back(m);
  resultShape.push_back(n);
  std::vector<OwnedTensor> result = runKernel("matmul", {a, b}, {{dtype, resultShape}});
  // One rounding of the f32 sum to 16 bits, plus f32 accumulation over K terms below 1.
  double rounding = dtype == DType::BF16 ? 1.0 / 256 : 1.0 / 2048;
  EXPECT_TRUE(closeTo(result[0].values(), referenceProduct(a, b, batch, m, k, n), rounding,
                      1e-6 * k));
}

TEST(HalfMatMulTest, StackedProductWithSeveralTilesAndDepthBlocks) {
  // 150 stacked rows (2 row tiles), 131 columns (2 column tiles), K = 600 (3 depth blocks).
  for (DType dtype : {DType::BF16, DType::F16})
    expectProductMatches(dtype, {3, 50, 600}, {1, 600, 131}, {3});
}

TEST(HalfMatMulTest, BroadcastBatchWithSeveralTiles) {
  for (DType dtype : {DType::BF16, DType::F16})
    expectProductMatches(dtype, {2, 1, 130, 300}, {1, 3, 300, 140}, {2, 3});
}

TEST(HalfMatMulTest, EmptyDepthGivesZeros) {
  OwnedTensor a(DType::BF16, {4, 0}), b(DType::BF16, {0, 3});
  std::vector<OwnedTensor> result = runKernel("matmul", {a, b}, {{DType::BF16, {4, 3}}});
  EXPECT_EQ(result[0].values(), std::vector<double>(12, 0.0));
}

TEST(HalfMatMulTest, WorkspaceDoesNotGrowWithTheOperands) {
  // Widening whole operands would take (512 x 8192 + 8192 x 512 + 512 x 512) f32, 32 MiB; a tile
  // per slot takes 128 x 256 + 256 x 128 + 128 x 128 f32.
  std::vector<OwnedTensor> inputs = {OwnedTensor(DType::BF16, {512, 8192}),
                                     OwnedTensor(DType::BF16, {8192, 512})};
  std::vector<OwnedTensor> outputs = {OwnedTensor(DType::BF16, {512, 512})};
  Attributes attributes;
  KernelCall call = makeCall(inputs, outputs, attributes);
  uint64_t perSlot = (kWideningTile * kWideningDepth * 2 + kWideningTile * kWideningTile) * 4;
  uint64_t bytes = workspaceBytes(kernelNamed("matmul"), call);
  EXPECT_LE(bytes, uint64_t(kMaxWorkspaceSlots) * perSlot + 64);
  EXPECT_GE(bytes, perSlot);
  std::string error;
  EXPECT_TRUE(runWithWorkspace(kernelNamed("matmul"), call, error)) << error;
}

} // namespace
} // namespace memc::kernels::testing
