//===- MatMulNf4Test.cpp - matmul_nf4 against the dequantized product -----===//
//
// matmul_nf4's tiles (several column tiles, the last partial; for a 16-bit lhs several row
// tiles) against the product with the whole weight dequantized by NormalFloat4.h (itself
// checked against its Python reference, NormalFloat4Test), computed in double: both transposes,
// plain and double-quantized absmax, f32 and bf16. PyTorch has no NF4 product to compare with.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "Nf4TestWeights.h"

namespace memc::kernels::testing {
namespace {

void expectDequantizedProduct(bool transposeRhs, bool doubleQuantization, DType dtype) {
  // lhs [3, 70, K] (210 rows: four row tiles for bf16), N = 150 columns (three tiles).
  const int64_t batch = 3, rows = 70, depth = 48, columns = 150;
  const int64_t weightRows = transposeRhs ? columns : depth;
  const int64_t weightColumns = transposeRhs ? depth : columns;
  OwnedTensor values = randomF32({weightRows * weightColumns}, 7, 0.05);
  Nf4Weight weight =
      quantizedWeight(values.as<float>(), weightRows, weightColumns, doubleQuantization);
  OwnedTensor lhs32 = randomF32({batch, rows, depth}, 3);
  OwnedTensor lhs = tensor(dtype, lhs32.shape, lhs32.values());
  std::vector<OwnedTensor> inputs = {lhs};
  for (const OwnedTensor &operand : weight.operands)
    inputs.push_back(operand);
  Attributes attributes =
      attrs({{"weight_shape", std::vector<int64_t>{weightRows, weightColumns}},
             {"transpose_rhs", int64_t{transposeRhs}}});
  std::vector<double> actual =
      runKernel("matmul_nf4", inputs, {{dtype, {batch, rows, columns}}}, attributes)[0].values();
  std::vector<double> expected(batch * rows * columns);
  std::vector<double> x = lhs.values(); // the lhs as the kernel reads it (rounded for bf16)
  for (int64_t i = 0; i < batch * rows; ++i)
    for (int64_t j = 0; j < columns; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < depth; ++p)
        sum += x[i * depth + p] * weight.dequantized[transposeRhs ? j * depth + p
                                                                  : p * columns + j];
      expected[i * columns + j] = sum;
    }
  const double tolerance = dtype == DType::F32 ? 1e-5 : 8e-3;
  EXPECT_TRUE(closeTo(actual, expected, tolerance, tolerance))
      << "transpose_rhs " << transposeRhs << ", double quantization " << doubleQuantization;
}

TEST(MatMulNf4, EqualsTheDequantizedProduct) {
  for (bool transposeRhs : {true, false})
    for (bool doubleQuantization : {false, true})
      for (DType dtype : {DType::F32, DType::BF16})
        expectDequantizedProduct(transposeRhs, doubleQuantization, dtype);
}

TEST(MatMulNf4, CheckRefusesAMismatchedWeight) {
  Attributes attributes = attrs({{"weight_shape", std::vector<int64_t>{8, 64}},
                                 {"transpose_rhs", int64_t{1}}});
  // 8 x 64 weights are 256 bytes and 8 blocks; a wrong byte count, absmax count or depth fails.
  EXPECT_NE(checkError("matmul_nf4", {{DType::F32, {2, 64}}, {DType::U8, {255}}, {DType::F32, {8}}},
                       {{DType::F32, {2, 8}}}, attributes),
            "");
  EXPECT_NE(checkError("matmul_nf4", {{DType::F32, {2, 64}}, {DType::U8, {256}}, {DType::F32, {7}}},
                       {{DType::F32, {2, 8}}}, attributes),
            "");
  EXPECT_NE(checkError("matmul_nf4", {{DType::F32, {2, 32}}, {DType::U8, {256}}, {DType::F32, {8}}},
                       {{DType::F32, {2, 8}}}, attributes),
            "");
  EXPECT_EQ(checkError("matmul_nf4", {{DType::F32, {2, 64}}, {DType::U8, {256}}, {DType::F32, {8}}},
                       {{DType::F32, {2, 8}}}, attributes),
            "");
  EXPECT_EQ(checkError("matmul_nf4",
                       {{DType::BF16, {2, 64}}, {DType::U8, {256}}, {DType::U8, {8}},
                        {DType::F32, {1}}, {DType::F32, {}}},
                       {{DType::BF16, {2, 8}}}, attributes),
            "");
}

} // namespace
} // namespace memc::kernels::testing
