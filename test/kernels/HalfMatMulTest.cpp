//===- HalfMatMulTest.cpp - 16-bit matmul: oneDNN (bf16) and memc's tiles (f16) ---===//
//
// bf16 matmul runs on oneDNN's primitive (OneDnnMatMul.h), f16 widens one tile of rows and
// columns, one block of K, at a time (MatMulWorkspace.h). Both must match a float64 product of
// the same 16-bit inputs on products with several row, column and depth blocks, the bench
// models' linear layers (forward and the transposed gradient products), transposes, batches
// with broadcasting and odd sizes, products cut into several of oneDNN's row blocks; the tiles'
// workspace must not grow with the operands, oneDNN's is a scratchpad per slot, and its runs
// repeat bit for bit. ctest runs them with MEMC_NUM_THREADS=4.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "OneDnnIsa.h"

#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cpu/OneDnnMatMul.h"

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

/// numpy.matmul in float64 of a [B..., M, K] (stored [B..., K, M] when transposed) and b
/// [B'..., K, N] (stored [B'..., N, K] when transposed) batches (batch dims of equal rank,
/// broadcasting 1s), on the values the 16-bit tensors hold.
std::vector<double> referenceProduct(const OwnedTensor &a, const OwnedTensor &b,
                                     const Shape &batch, MatMulTransposes transposes) {
  MatMulDims dims(a.shape, b.shape, transposes);
  int64_t m = dims.m, k = dims.k, n = dims.n;
  std::vector<double> lhs = a.values(), rhs = b.values(), result;
  Shape lhsBatch = dims.lhsBatch, rhsBatch = dims.rhsBatch;
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
    const double *x = lhs.data() + lhsIndex * m * k, *y = rhs.data() + rhsIndex * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t p = 0; p < k; ++p)
          sum += (transposes.lhs ? x[p * m + i] : x[i * k + p]) *
                 (transposes.rhs ? y[j * k + p] : y[p * n + j]);
        result.push_back(sum);
      }
  }
  return result;
}

Attributes transposeAttributes(MatMulTransposes transposes) {
  return attrs({{"transpose_lhs", int64_t{transposes.lhs}},
                {"transpose_rhs", int64_t{transposes.rhs}}});
}

/// Whether the selection rule gives this matmul to oneDNN.
bool runsOnOneDnn(DType dtype, const Shape &lhsShape, const Shape &rhsShape,
                  MatMulTransposes transposes = {}) {
  MatMulDims dims(lhsShape, rhsShape, transposes);
  Shape resultShape = dims.batch;
  resultShape.push_back(dims.m);
  resultShape.push_back(dims.n);
  std::vector<OwnedTensor> inputs = {OwnedTensor(dtype, lhsShape), OwnedTensor(dtype, rhsShape)};
  std::vector<OwnedTensor> outputs = {OwnedTensor(dtype, resultShape)};
  Attributes attributes = transposeAttributes(transposes);
  return oneDnnMatMul(makeCall(inputs, outputs, attributes)).has_value();
}

/// Runs the matmul on random 16-bit values and returns its result.
OwnedTensor product(DType dtype, const OwnedTensor &a, const OwnedTensor &b,
                    MatMulTransposes transposes) {
  MatMulDims dims(a.shape, b.shape, transposes);
  Shape resultShape = dims.batch;
  resultShape.push_back(dims.m);
  resultShape.push_back(dims.n);
  return std::move(
      runKernel("matmul", {a, b}, {{dtype, resultShape}}, transposeAttributes(transposes))[0]);
}

void expectProductMatches(DType dtype, const Shape &lhsShape, const Shape &rhsShape,
                          const Shape &batch, MatMulTransposes transposes = {}) {
  OwnedTensor a = tensor(dtype, lhsShape, randomValues(elements(lhsShape), 1));
  OwnedTensor b = tensor(dtype, rhsShape, randomValues(elements(rhsShape), 2));
  int64_t k = MatMulDims(lhsShape, rhsShape, transposes).k;
  // One rounding of the f32 sum to 16 bits, plus f32 accumulation over K terms below 1.
  double rounding = dtype == DType::BF16 ? 1.0 / 256 : 1.0 / 2048;
  EXPECT_TRUE(closeTo(product(dtype, a, b, transposes).values(),
                      referenceProduct(a, b, batch, transposes), rounding, 1e-6 * k));
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
  // per slot takes 128 x 256 + 256 x 128 + 128 x 128 f32. (f16: bf16 runs on oneDNN.)
  std::vector<OwnedTensor> inputs = {OwnedTensor(DType::F16, {512, 8192}),
                                     OwnedTensor(DType::F16, {8192, 512})};
  std::vector<OwnedTensor> outputs = {OwnedTensor(DType::F16, {512, 512})};
  Attributes attributes;
  KernelCall call = makeCall(inputs, outputs, attributes);
  uint64_t perSlot = (kWideningTile * kWideningDepth * 2 + kWideningTile * kWideningTile) * 4;
  uint64_t bytes = workspaceBytes(kernelNamed("matmul"), call);
  EXPECT_LE(bytes, uint64_t(kMaxWorkspaceSlots) * perSlot + 64);
  EXPECT_GE(bytes, perSlot);
  std::string error;
  EXPECT_TRUE(runWithWorkspace(kernelNamed("matmul"), call, error)) << error;
}

// The linear layers of the GPT-2 and Llama bench models (bench/training: 1024 tokens) that fit
// a float64 reference in a test: y = x @ W^T, dX = dY @ W, dW = dY^T @ X, as the gradient
// rule emits them (memc-kernel-bench's `linear` group times all of them). They run on oneDNN
// where it has bf16 kernels for this CPU (OneDnnIsa.h), on memc's tiles elsewhere.
TEST(HalfMatMulTest, BenchLinearLayersRunOnOneDnnAndMatchTheReference) {
  const bool oneDnn = oneDnnHasBf16Kernels();
  struct Linear {
    int64_t tokens, in, out;
  };
  for (const Linear &layer : {Linear{1024, 256, 256}, Linear{1024, 256, 64}, Linear{1024, 64, 256}}) {
    int64_t m = layer.tokens, k = layer.in, n = layer.out;
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
    EXPECT_EQ(runsOnOneDnn(DType::BF16, {m, k}, {n, k}, {false, true}), oneDnn);
    EXPECT_EQ(runsOnOneDnn(DType::BF16, {m, n}, {n, k}), oneDnn);
    EXPECT_EQ(runsOnOneDnn(DType::BF16, {m, n}, {m, k}, {true, false}), oneDnn);
    expectProductMatches(DType::BF16, {m, k}, {n, k}, {}, {false, true});
    expectProductMatches(DType::BF16, {m, n}, {n, k}, {});
    expectProductMatches(DType::BF16, {m, n}, {m, k}, {}, {true, false});
  }
}

TEST(HalfMatMulTest, OneDnnTransposesBatchesAndOddSizes) {
  const bool oneDnn = oneDnnHasBf16Kernels();
  for (bool lhs : {false, true})
    for (bool rhs : {false, true}) {
      MatMulTransposes transposes{lhs, rhs};
      SCOPED_TRACE(std::to_string(lhs) + std::to_string(rhs));
      // Odd 2-D sizes; a stacked batch times one matrix; a batch of transposed products with a
      // broadcast right-hand side; both operands broadcasting.
      Shape odd = lhs ? Shape{39, 67} : Shape{67, 39}, oddRhs = rhs ? Shape{53, 39} : Shape{39, 53};
      EXPECT_EQ(runsOnOneDnn(DType::BF16, odd, oddRhs, transposes), oneDnn);
      expectProductMatches(DType::BF16, odd, oddRhs, {}, transposes);
      Shape stacked = lhs ? Shape{3, 33, 31} : Shape{3, 31, 33};
      Shape matrix = rhs ? Shape{1, 29, 33} : Shape{1, 33, 29};
      EXPECT_EQ(runsOnOneDnn(DType::BF16, stacked, matrix, transposes), oneDnn);
      expectProductMatches(DType::BF16, stacked, matrix, {3}, transposes);
      Shape left = lhs ? Shape{2, 1, 41, 23} : Shape{2, 1, 23, 41};
      Shape right = rhs ? Shape{1, 3, 31, 41} : Shape{1, 3, 41, 31};
      EXPECT_EQ(runsOnOneDnn(DType::BF16, left, right, transposes), oneDnn);
      expectProductMatches(DType::BF16, left, right, {2, 3}, transposes);
      // Products of 300 rows: a block of kOneDnnBlockRows and a remainder each.
      Shape tall = lhs ? Shape{2, 1, 41, 300} : Shape{2, 1, 300, 41};
      EXPECT_EQ(runsOnOneDnn(DType::BF16, tall, right, transposes), oneDnn);
      expectProductMatches(DType::BF16, tall, right, {2, 3}, transposes);
      Shape stackedTall = lhs ? Shape{2, 41, 150} : Shape{2, 150, 41};
      Shape weights = rhs ? Shape{1, 31, 41} : Shape{1, 41, 31};
      expectProductMatches(DType::BF16, stackedTall, weights, {2}, transposes);
    }
}

TEST(HalfMatMulTest, OneDnnVectorOperandsMatchTheirMatrixForms) {
  const bool oneDnn = oneDnnHasBf16Kernels();
  const int64_t k = 1500, n = 61;
  OwnedTensor vector = tensor(DType::BF16, {k}, randomValues(k, 3));
  OwnedTensor row = tensor(DType::BF16, {1, k}, vector.values());
  OwnedTensor matrix = tensor(DType::BF16, {k, n}, randomValues(k * n, 4));
  OwnedTensor wide = tensor(DType::BF16, {n, k}, randomValues(n * k, 5));
  EXPECT_EQ(runsOnOneDnn(DType::BF16, {k}, {k, n}), oneDnn);
  EXPECT_EQ(runsOnOneDnn(DType::BF16, {n, k}, {k}), oneDnn);
  std::vector<OwnedTensor> fromVector = runKernel("matmul", {vector, matrix}, {{DType::BF16, {n}}});
  EXPECT_EQ(fromVector[0].values(), product(DType::BF16, row, matrix, {}).values());
  std::vector<OwnedTensor> toVector = runKernel("matmul", {wide, vector}, {{DType::BF16, {n}}});
  EXPECT_TRUE(closeTo(toVector[0].values(),
                      referenceProduct(wide, tensor(DType::BF16, {k, 1}, vector.values()), {}, {}),
                      1.0 / 256, 1e-6 * k));
}

TEST(HalfMatMulTest, OneDnnRunsRepeatBitForBit) {
  OwnedTensor a = tensor(DType::BF16, {1024, 256}, randomValues(1024 * 256, 6));
  OwnedTensor b = tensor(DType::BF16, {1024, 512}, randomValues(1024 * 512, 7));
  std::vector<double> first = product(DType::BF16, a, b, {true, false}).values();
  for (int run = 0; run < 3; ++run)
    EXPECT_EQ(product(DType::BF16, a, b, {true, false}).values(), first);
}

TEST(HalfMatMulTest, OneDnnWorkspaceIsAScratchpadPerSlotAndTooLittleIsAnError) {
  // gpt2's c_fc weight gradient: oneDNN packs dY^T and X into its scratchpad.
  std::vector<OwnedTensor> inputs = {OwnedTensor(DType::BF16, {1024, 1024}),
                                     OwnedTensor(DType::BF16, {1024, 256})};
  std::vector<OwnedTensor> outputs = {OwnedTensor(DType::BF16, {1024, 256})};
  Attributes attributes = transposeAttributes({true, false});
  KernelCall call = makeCall(inputs, outputs, attributes);
  std::optional<OneDnnMatMulBlocks> blocks = oneDnnMatMul(call);
  ASSERT_EQ(blocks.has_value(), oneDnnHasBf16Kernels());
  const Kernel &kernel = kernelNamed("matmul");
  uint64_t bytes = workspaceBytes(kernel, call);
  if (blocks) {
    EXPECT_EQ(blocks->count(), 1024 / kOneDnnBlockRows);
    EXPECT_EQ(bytes, uint64_t(blocks->slots) * blocks->slotBytes); // a scratchpad per slot
  }
  // memc's tiles (a CPU without oneDNN's bf16 kernels) widen into their workspace instead.
  ASSERT_GT(bytes, 0u);
  std::string error;
  EXPECT_TRUE(runWithWorkspace(kernel, call, error)) << error;
  EXPECT_FALSE(runWithTooLittleWorkspace(kernel, call, error));
  EXPECT_NE(error.find("workspace"), std::string::npos) << error;
}

TEST(HalfMatMulTest, SelectionRuleKeepsOtherTypesOnMemc) {
  // f32 stays on OpenBLAS, f16 has no oneDNN matmul in 2.6, K = 0 is memc's zero fill, and
  // products below 2^16 multiply-adds are faster on memc's tiles (the MLP bench model's 4x16x32).
  // Larger bf16 products go to oneDNN where it has bf16 kernels for this CPU.
  const bool oneDnn = oneDnnHasBf16Kernels();
  EXPECT_FALSE(runsOnOneDnn(DType::F32, {64, 64}, {64, 64}));
  EXPECT_FALSE(runsOnOneDnn(DType::F16, {64, 64}, {64, 64}));
  EXPECT_FALSE(runsOnOneDnn(DType::BF16, {4, 0}, {0, 3}));
  EXPECT_FALSE(runsOnOneDnn(DType::BF16, {4, 16}, {16, 32}));
  EXPECT_FALSE(runsOnOneDnn(DType::BF16, {32, 32}, {32, 32}));
  EXPECT_EQ(runsOnOneDnn(DType::BF16, {64, 64}, {64, 64}), oneDnn);
  EXPECT_EQ(runsOnOneDnn(DType::BF16, {16, 64, 64}, {64, 64}), oneDnn); // counted over the batch
}

} // namespace
} // namespace memc::kernels::testing
