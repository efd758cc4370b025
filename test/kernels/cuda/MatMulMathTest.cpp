//===- MatMulMathTest.cpp - the CUDA matmul group's arithmetic on the host ===//
//
// What the matmul group's CUDA kernels compute besides cuBLASLt's products, run on the CPU
// against the CPU kernels (nothing here needs a GPU):
//  - the column-major problem handed to cuBLASLt is the row-major product, for every pair of
//    transposes and padded leading dimensions;
//  - matmul's launches multiply the same matrix pairs as the CPU's batch broadcasting;
//  - matmul_nf4's panels hold the CPU's dequantized weight bit for bit, the signed dynamic
//    code computed without a table included, and panel products match the CPU kernel;
//  - im2col and col2im index the CPU's column matrices (1-D to 3-D, strides, padding,
//    dilations, groups);
//  - linear_cross_entropy's row arithmetic, run as the kernels split it (threads of a row,
//    chunks of rows, 16-bit rounding of the logits' gradient), matches the CPU kernel;
//  - the workspace rules' sizes for a few shapes, and the CUDA target's limits.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "Nf4TestWeights.h"

#include "kernels/DynamicQuantization.h"
#include "kernels/NormalFloat4.h"
#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cuda/ConvolutionMath.h"
#include "kernels/cuda/CublasLtGemm.h"
#include "kernels/cuda/CudaTarget.h"
#include "kernels/cuda/LinearCrossEntropyMath.h"
#include "kernels/cuda/MatMulMath.h"
#include "kernels/cuda/MatMulWorkspaces.h"

#include <cstring>
#include <utility>

namespace memc::kernels::testing {
namespace {

using cuda::ColumnMajorMatrix;
using cuda::ColumnMajorProblem;
using cuda::MatMulLaunches;
using cuda::MatMulProblem;
using cuda::RowMajorGemm;

std::vector<float> randomFloats(size_t count, uint32_t seed, float scale = 1.0f) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(count);
  for (float &value : values)
    value = normal(random);
  return values;
}

//===----------------------------------------------------------------------===//
// The column-major problem
//===----------------------------------------------------------------------===//

/// Element (i, j) of op(X) for a column-major `matrix` stored at `data`.
double columnMajorAt(const std::vector<float> &data, const ColumnMajorMatrix &matrix, int64_t i,
                     int64_t j) {
  return matrix.transposed ? data[j + i * matrix.ld] : data[i + j * matrix.ld];
}

TEST(CudaMatMulMath, ColumnMajorProblemIsTheRowMajorProduct) {
  const int64_t m = 5, n = 7, k = 3;
  for (bool transposeA : {false, true})
    for (bool transposeB : {false, true}) {
      // Stored shapes with padded leading dimensions.
      const int64_t aRows = transposeA ? k : m, aCols = transposeA ? m : k;
      const int64_t bRows = transposeB ? n : k, bCols = transposeB ? k : n;
      const int64_t lda = aCols + 2, ldb = bCols + 1, ldd = n + 3;
      std::vector<float> a = randomFloats(aRows * lda, 1), b = randomFloats(bRows * ldb, 2);
      RowMajorGemm gemm;
      gemm.m = m;
      gemm.n = n;
      gemm.k = k;
      gemm.a = {a.data(), lda, 0, transposeA};
      gemm.b = {b.data(), ldb, 0, transposeB};
      gemm.ldd = ldd;
      const ColumnMajorProblem problem = cuda::columnMajorOf(gemm);
      for (const ColumnMajorMatrix *matrix : {&problem.a, &problem.b, &problem.d})
        EXPECT_GE(matrix->ld, matrix->rows);
      ASSERT_EQ(problem.d.rows, n);
      ASSERT_EQ(problem.d.cols, m);
      // cuBLASLt's D^T[i, j] = sum_p op(A')[i, p] op(B')[p, j], A' = b, B' = a, against the
      // row-major D[j, i] = sum_p op(A)[j, p] op(B)[p, i].
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) {
          double columnMajor = 0, rowMajor = 0;
          for (int64_t p = 0; p < k; ++p) {
            columnMajor += columnMajorAt(b, problem.a, i, p) * columnMajorAt(a, problem.b, p, j);
            double lhs = transposeA ? a[p * lda + j] : a[j * lda + p];
            double rhs = transposeB ? b[i * ldb + p] : b[p * ldb + i];
            rowMajor += lhs * rhs;
          }
          EXPECT_EQ(columnMajor, rowMajor) << "transposes " << transposeA << transposeB;
        }
      EXPECT_EQ(problem.d.ld, ldd);
    }
}

//===----------------------------------------------------------------------===//
// matmul's batch
//===----------------------------------------------------------------------===//

/// Checks that the launches multiply the pairs of matrices the CPU's broadcasting does, and
/// returns them.
MatMulLaunches expectLaunchesMatchCpu(const Shape &lhs, const Shape &rhs, bool transposeLhs,
                                      bool transposeRhs) {
  MatMulDims cpu(lhs, rhs, {transposeLhs, transposeRhs});
  MatMulProblem problem(lhs, rhs, transposeLhs, transposeRhs);
  EXPECT_EQ(problem.m, cpu.m);
  EXPECT_EQ(problem.n, cpu.n);
  EXPECT_EQ(problem.k, cpu.k);
  EXPECT_EQ(problem.batchCount, cpu.batchCount);
  EXPECT_EQ(problem.lda(), cpu.lda());
  EXPECT_EQ(problem.ldb(), cpu.ldb());
  std::vector<std::pair<int64_t, int64_t>> expected(cpu.batchCount), actual(cpu.batchCount);
  cpu.batchPairs(expected.data());
  MatMulLaunches launches = cuda::matmulLaunches(problem);
  std::vector<int> seen(cpu.batchCount, 0);
  for (int64_t launch = 0; launch < launches.launches(); ++launch) {
    int64_t lhs0, rhs0, out0;
    launches.start(launch, lhs0, rhs0, out0);
    for (int64_t j = 0; j < launches.count; ++j) {
      if (out0 + j >= cpu.batchCount) {
        ADD_FAILURE() << "result matrix " << out0 + j << " is outside the batch";
        continue;
      }
      actual[out0 + j] = {lhs0 + j * launches.lhsStride, rhs0 + j * launches.rhsStride};
      ++seen[out0 + j];
    }
  }
  EXPECT_EQ(seen, std::vector<int>(cpu.batchCount, 1)) << "every result matrix once";
  EXPECT_EQ(actual, expected) << formatShape(lhs) << " @ " << formatShape(rhs);
  if (problem.stacksRows()) {
    for (int64_t b = 0; b < cpu.batchCount; ++b)
      EXPECT_EQ(expected[b], std::make_pair(b, int64_t{0})) << "stacked rows";
  }
  return launches;
}

TEST(CudaMatMulMath, LaunchesFollowBatchBroadcasting) {
  // x @ W: one tall product.
  EXPECT_TRUE(MatMulProblem({2, 3, 4, 5}, {5, 6}, false, false).stacksRows());
  EXPECT_FALSE(MatMulProblem({2, 3, 5, 4}, {5, 6}, true, false).stacksRows());
  expectLaunchesMatchCpu({2, 3, 4, 5}, {5, 6}, false, false);
  // Equal batches, one operand shared, or broadcast inside: one strided launch.
  MatMulLaunches same = expectLaunchesMatchCpu({2, 3, 4, 5}, {2, 3, 5, 6}, false, true);
  EXPECT_EQ(same.launches(), 1);
  EXPECT_EQ(same.count, 6);
  MatMulLaunches shared = expectLaunchesMatchCpu({4, 5}, {2, 3, 5, 6}, false, false);
  EXPECT_EQ(shared.launches(), 1);
  EXPECT_EQ(shared.lhsStride, 0);
  MatMulLaunches inner = expectLaunchesMatchCpu({2, 3, 1, 4, 5}, {2, 3, 7, 5, 6}, true, false);
  EXPECT_EQ(inner.launches(), 6);
  EXPECT_EQ(inner.count, 7);
  // Broadcast both ways: strided over the inner dim, looping over the outer.
  MatMulLaunches crossed = expectLaunchesMatchCpu({2, 1, 4, 5}, {1, 3, 5, 6}, false, false);
  EXPECT_EQ(crossed.launches(), 2);
  EXPECT_EQ(crossed.count, 3);
  expectLaunchesMatchCpu({3, 1, 2, 4, 5}, {1, 4, 1, 5, 6}, true, true);
  expectLaunchesMatchCpu({1, 1, 4, 5}, {1, 1, 5, 6}, false, false);
  // Vectors.
  expectLaunchesMatchCpu({5}, {2, 5, 6}, false, false);
  expectLaunchesMatchCpu({2, 3, 4}, {4}, false, false);
  expectLaunchesMatchCpu({5}, {5}, false, false);
}

//===----------------------------------------------------------------------===//
// matmul_nf4
//===----------------------------------------------------------------------===//

TEST(CudaMatMulMath, SignedDynamicCodeIsTheHostTable) {
  const DynamicCode &code = dynamicCode(true);
  for (int i = 0; i < 256; ++i)
    EXPECT_EQ(floatBits(cuda::signedDynamicCodeValue(i)), floatBits(code.values[i])) << i;
}

/// A quantized weight (Nf4TestWeights.h) with the signed code the CUDA kernel computes on the
/// device.
struct QuantizedWeight : Nf4Weight {
  std::vector<float> codeTable;

  /// The absmax as the CUDA kernel builds it, from the device's table.
  Nf4Absmax deviceAbsmax() const {
    if (operands.size() == 2)
      return Nf4Absmax{operands[1].as<float>()};
    return Nf4Absmax{nullptr, operands[1].as<uint8_t>(), operands[2].as<float>(),
                     *operands[3].as<float>(), codeTable.data()};
  }
};

QuantizedWeight quantize(int64_t rows, int64_t columns, bool doubleQuantization) {
  std::vector<float> values = randomFloats(rows * columns, 11, 0.05f);
  QuantizedWeight weight{quantizedWeight(values.data(), rows, columns, doubleQuantization), {}};
  for (int i = 0; i < 256; ++i)
    weight.codeTable.push_back(cuda::signedDynamicCodeValue(i));
  return weight;
}

/// The panel of op(W)'s columns [column0, column0 + count) as dequantizePanel fills it.
std::vector<float> devicePanel(const QuantizedWeight &weight, int64_t column0, int64_t count,
                               int64_t depth, int64_t columns, bool transposeRhs) {
  const Nf4Absmax absmax = weight.deviceAbsmax();
  const uint8_t *packed = weight.operands[0].as<uint8_t>();
  std::vector<float> panel(count * depth);
  for (int64_t e = 0; e < count * depth; ++e) {
    int64_t source = cuda::nf4PanelSource(e, column0, count, depth, columns, transposeRhs);
    panel[e] = nf4Value(nf4Index(packed, source)) * absmax[source / kNf4Block];
  }
  return panel;
}

TEST(CudaMatMulMath, Nf4PanelsHoldTheDequantizedWeight) {
  const int64_t depth = 45, columns = 70, panelColumns = 32;
  for (bool transposeRhs : {false, true})
    for (bool doubled : {false, true}) {
      const int64_t rows = transposeRhs ? columns : depth, cols = transposeRhs ? depth : columns;
      QuantizedWeight weight = quantize(rows, cols, doubled);
      for (int64_t column0 = 0; column0 < columns; column0 += panelColumns) {
        const int64_t count = std::min(panelColumns, columns - column0);
        std::vector<float> panel =
            devicePanel(weight, column0, count, depth, columns, transposeRhs);
        for (int64_t j = 0; j < count; ++j)
          for (int64_t p = 0; p < depth; ++p) {
            // [count, K] rows of the transposed weight, or [K, count] columns of the plain one.
            float actual = transposeRhs ? panel[j * depth + p] : panel[p * count + j];
            float expected = transposeRhs ? weight.dequantized[(column0 + j) * depth + p]
                                          : weight.dequantized[p * columns + column0 + j];
            ASSERT_EQ(floatBits(actual), floatBits(expected))
                << "transpose " << transposeRhs << ", doubled " << doubled << ", column "
                << column0 + j << ", depth " << p;
          }
      }
    }
}

TEST(CudaMatMulMath, Nf4PanelProductsMatchTheCpuKernel) {
  const int64_t batch = 2, rows = 9, depth = 40, columns = 50, panelColumns = 16;
  for (DType dtype : {DType::F32, DType::BF16})
    for (bool transposeRhs : {false, true}) {
      const int64_t weightRows = transposeRhs ? columns : depth;
      const int64_t weightColumns = transposeRhs ? depth : columns;
      QuantizedWeight weight = quantize(weightRows, weightColumns, true);
      OwnedTensor lhs32 = randomF32({batch, rows, depth}, 5);
      OwnedTensor lhs = tensor(dtype, lhs32.shape, lhs32.values());
      std::vector<OwnedTensor> inputs = {lhs};
      for (const OwnedTensor &operand : weight.operands)
        inputs.push_back(operand);
      Attributes attributes =
          attrs({{"weight_shape", std::vector<int64_t>{weightRows, weightColumns}},
                 {"transpose_rhs", int64_t{transposeRhs}}});
      std::vector<double> cpu =
          runKernel("matmul_nf4", inputs, {{dtype, {batch, rows, columns}}}, attributes)[0]
              .values();
      // The CUDA kernel: panels in the lhs's type, products summed in f32 and rounded once.
      std::vector<double> x = lhs.values(), gpu(batch * rows * columns);
      for (int64_t column0 = 0; column0 < columns; column0 += panelColumns) {
        const int64_t count = std::min(panelColumns, columns - column0);
        std::vector<float> panel =
            devicePanel(weight, column0, count, depth, columns, transposeRhs);
        if (dtype == DType::BF16)
          for (float &value : panel)
            value = bfloat16ToFloat(floatToBFloat16(value));
        for (int64_t i = 0; i < batch * rows; ++i)
          for (int64_t j = 0; j < count; ++j) {
            float sum = 0;
            for (int64_t p = 0; p < depth; ++p)
              sum += static_cast<float>(x[i * depth + p]) *
                     (transposeRhs ? panel[j * depth + p] : panel[p * count + j]);
            gpu[i * columns + column0 + j] =
                dtype == DType::F32 ? sum : bfloat16ToFloat(floatToBFloat16(sum));
          }
      }
      // bf16: the panel's rounding (2^-9 relative per weight) and the result's.
      const double tolerance = dtype == DType::F32 ? 1e-5 : 2e-2;
      EXPECT_TRUE(closeTo(gpu, cpu, tolerance, tolerance))
          << dtypeName(dtype) << ", transpose_rhs " << transposeRhs;
    }
}

//===----------------------------------------------------------------------===//
// im2col and col2im
//===----------------------------------------------------------------------===//

struct ConvCase {
  Shape input, weight;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
};

std::vector<ConvCase> convCases() {
  return {
      {{1, 3, 11}, {2, 3, 3}, {2}, {2, 1}, {2}, 1},
      {{1, 4, 7, 6}, {6, 2, 3, 2}, {2, 1}, {1, 0, 1, 1}, {1, 2}, 2},
      {{1, 2, 5, 5}, {2, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2},
      {{1, 2, 4, 5, 3}, {4, 2, 2, 3, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {2, 1, 1}, 1},
  };
}

ConvGeometry geometryOf(const ConvCase &c, Attributes &attributes) {
  attributes = attrs(
      {{"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dilations}, {"group", c.group}});
  Shape output = {c.input[0], c.weight[0]};
  const size_t rank = c.input.size() - 2;
  for (size_t d = 0; d < rank; ++d)
    output.push_back(windowOutputSize(c.input[d + 2], c.weight[d + 2], c.strides[d], c.pads[d],
                                      c.pads[d + rank], c.dilations[d], false));
  return ConvGeometry(c.input, c.weight, output, attributes);
}

TEST(CudaMatMulMath, Im2colReadsTheCpuColumns) {
  for (const ConvCase &c : convCases()) {
    Attributes attributes;
    ConvGeometry g = geometryOf(c, attributes);
    cuda::ConvWindow w = cuda::convWindowOf(g);
    std::vector<float> x = randomFloats(g.channels * g.inSize, 3);
    for (int64_t group = 0; group < g.group; ++group) {
      const float *image = x.data() + group * g.groupChannels * g.inSize;
      std::vector<float> expected(g.columnRows * g.outSize, -1.0f);
      buildColumns(g, image, 0, g.outputRows(), 0, g.columnRows, expected.data(), g.outSize);
      for (int64_t row = 0; row < g.columnRows; ++row)
        for (int64_t p = 0; p < g.outSize; ++p) {
          int64_t source = cuda::im2colSource(w, row, p);
          ASSERT_EQ(source < 0 ? 0.0f : image[source], expected[row * g.outSize + p])
              << formatShape(c.input) << " row " << row << " position " << p;
        }
    }
  }
}

TEST(CudaMatMulMath, Col2imGathersWhatTheCpuAddsBack) {
  for (const ConvCase &c : convCases()) {
    Attributes attributes;
    ConvGeometry g = geometryOf(c, attributes);
    cuda::ConvWindow w = cuda::convWindowOf(g);
    std::vector<float> columns = randomFloats(g.columnRows * g.outSize, 4);
    std::vector<float> cpu(g.groupChannels * g.inSize, 0.0f);
    addColumns(g, columns.data(), g.outSize, 0, g.outputRows(), 0, g.groupChannels, cpu.data());
    std::vector<double> gathered, expected(cpu.begin(), cpu.end());
    for (int64_t channel = 0; channel < g.groupChannels; ++channel)
      for (int64_t input = 0; input < g.inSize; ++input) {
        float sum = 0;
        for (int64_t tap = 0; tap < g.taps; ++tap) {
          int64_t position = cuda::col2imPosition(w, tap, input);
          if (position >= 0)
            sum += columns[(channel * g.taps + tap) * g.outSize + position];
        }
        gathered.push_back(sum);
      }
    EXPECT_TRUE(closeTo(gathered, expected, 1e-6, 1e-6)) << formatShape(c.input);
  }
}

//===----------------------------------------------------------------------===//
// linear_cross_entropy
//===----------------------------------------------------------------------===//

/// Threads of the kernels' row blocks, whose strided shares the simulation reproduces.
constexpr int64_t kRowThreads = 256;

struct HeadCase {
  DType dtype;
  bool transposeWeight, bias;
  DType labels;
};

struct Head {
  int64_t rows = 14, depth = 24, classes = 300;
  HeadCase c;
  OwnedTensor hidden, weight, bias, labels;
  Attributes attributes;

  explicit Head(HeadCase c) : c(c) {
    hidden = tensor(c.dtype, {2, 7, depth}, randomF32({rows * depth}, 21).values());
    Shape weightShape = c.transposeWeight ? Shape{classes, depth} : Shape{depth, classes};
    weight = tensor(c.dtype, weightShape, randomF32({depth * classes}, 22, 0.3).values());
    bias = tensor(c.dtype, {classes}, randomF32({classes}, 23, 0.5).values());
    std::vector<double> values;
    std::mt19937 random(24);
    for (int64_t r = 0; r < rows; ++r)
      values.push_back(r % 5 == 3 ? -100 : static_cast<double>(random() % classes));
    labels = tensor(c.labels, {2, 7}, values);
    attributes =
        attrs({{"ignore_index", int64_t{-100}}, {"transpose_weight", int64_t{c.transposeWeight}}});
  }
  double w(int64_t p, int64_t k) const {
    return weight.at(c.transposeWeight ? k * depth + p : p * classes + k);
  }
  /// A row's logits as cuBLASLt leaves them: f32 sums of the operands.
  std::vector<float> logits(int64_t r) const {
    std::vector<float> row(classes);
    for (int64_t k = 0; k < classes; ++k) {
      double sum = 0;
      for (int64_t p = 0; p < depth; ++p)
        sum += hidden.at(r * depth + p) * w(p, k);
      row[k] = static_cast<float>(sum);
    }
    return row;
  }
  const float *biasFloats(std::vector<float> &storage) const {
    if (!c.bias)
      return nullptr;
    for (int64_t k = 0; k < classes; ++k)
      storage.push_back(static_cast<float>(bias.at(k)));
    return storage.data();
  }
  int64_t target(int64_t r) const {
    int64_t target = cuda::rows::targetOf(static_cast<int64_t>(labels.at(r)), classes, -100);
    EXPECT_NE(target, cuda::rows::kLabelOutsideClasses);
    return target;
  }
};

/// Rounds to `dtype` (identity for f32), as a store of the kernels does.
double rounded(double value, DType dtype) {
  float f = static_cast<float>(value);
  if (dtype == DType::BF16)
    return bfloat16ToFloat(floatToBFloat16(f));
  if (dtype == DType::F16)
    return halfToFloat(floatToHalf(f));
  return f;
}

/// The forward as the CUDA kernels split it: each row's 256 strided shares combined.
void simulateForward(const Head &head, std::vector<double> &logSumExp, double &loss) {
  std::vector<float> biasStorage;
  const float *bias = head.biasFloats(biasStorage);
  double total = 0;
  int64_t counted = 0;
  for (int64_t r = 0; r < head.rows; ++r) {
    std::vector<float> row = head.logits(r);
    float max = -INFINITY;
    for (int64_t t = 0; t < kRowThreads; ++t)
      max = cuda::rows::maxSkippingNaN(
          max, cuda::partialMax(row.data(), bias, head.classes, t, kRowThreads));
    double sum = 0;
    for (int64_t t = 0; t < kRowThreads; ++t)
      sum += cuda::partialSumExp(row.data(), bias, head.classes, t, kRowThreads, max);
    int64_t target = head.target(r);
    double lse = cuda::rowLogSumExp(sum, max);
    logSumExp.push_back(static_cast<float>(lse));
    total += cuda::rowLoss(lse, target >= 0 ? cuda::biasedLogit(row.data(), bias, target) : 0.0f,
                           target);
    counted += target >= 0;
  }
  loss = cuda::rows::crossEntropyMean(total, counted);
}

struct Gradients {
  std::vector<double> hidden, weight, bias;
};

/// The backward as the CUDA kernels compute it, `chunkRows` rows at a time: the logits'
/// gradient rounded to the operands' type for the products, sums over chunks in f32.
Gradients simulateBackward(const Head &head, float grad, const std::vector<double> &logSumExp,
                           int64_t chunkRows) {
  const DType dtype = head.c.dtype;
  std::vector<float> biasStorage;
  const float *bias = head.biasFloats(biasStorage);
  int64_t counted = 0;
  for (int64_t r = 0; r < head.rows; ++r)
    counted += head.target(r) >= 0;
  const float scale = cuda::rows::crossEntropyGradScale(grad, counted);
  Gradients result;
  std::vector<float> weightSums(head.depth * head.classes, 0.0f), biasSums(head.classes, 0.0f);
  for (int64_t first = 0; first < head.rows; first += chunkRows) {
    const int64_t count = std::min(chunkRows, head.rows - first);
    std::vector<float> gradient(count * head.classes);
    for (int64_t i = 0; i < count; ++i) {
      std::vector<float> row = head.logits(first + i);
      for (int64_t k = 0; k < head.classes; ++k)
        gradient[i * head.classes + k] = cuda::logitGradient(
            cuda::biasedLogit(row.data(), bias, k), static_cast<float>(logSumExp[first + i]), scale,
            k, head.target(first + i));
    }
    for (int64_t k = 0; k < head.classes; ++k)
      for (int64_t i = 0; i < count; ++i)
        biasSums[k] += gradient[i * head.classes + k];
    std::vector<double> operand(gradient.size());
    for (size_t e = 0; e < gradient.size(); ++e)
      operand[e] = rounded(gradient[e], dtype);
    for (int64_t i = 0; i < count; ++i)
      for (int64_t p = 0; p < head.depth; ++p) {
        double sum = 0;
        for (int64_t k = 0; k < head.classes; ++k)
          sum += operand[i * head.classes + k] * head.w(p, k);
        result.hidden.push_back(rounded(sum, dtype));
      }
    for (int64_t p = 0; p < head.depth; ++p)
      for (int64_t k = 0; k < head.classes; ++k) {
        double sum = 0;
        for (int64_t i = 0; i < count; ++i)
          sum += head.hidden.at((first + i) * head.depth + p) * operand[i * head.classes + k];
        weightSums[p * head.classes + k] += static_cast<float>(sum);
      }
  }
  // In the weight's own layout.
  for (int64_t e = 0; e < head.depth * head.classes; ++e) {
    int64_t p = head.c.transposeWeight ? e % head.depth : e / head.classes;
    int64_t k = head.c.transposeWeight ? e / head.depth : e % head.classes;
    result.weight.push_back(rounded(weightSums[p * head.classes + k], dtype));
  }
  for (float sum : biasSums)
    result.bias.push_back(rounded(sum, dtype));
  return result;
}

TEST(CudaMatMulMath, LinearCrossEntropyRowsMatchTheCpuKernel) {
  for (HeadCase c : {HeadCase{DType::F32, false, false, DType::I64},
                     HeadCase{DType::F32, true, true, DType::I32},
                     HeadCase{DType::BF16, false, true, DType::I64},
                     HeadCase{DType::F16, true, false, DType::I32}}) {
    Head head(c);
    std::vector<OwnedTensor> inputs = {head.hidden, head.weight, head.labels};
    if (c.bias)
      inputs.push_back(head.bias);
    std::vector<OwnedTensor> forward = runKernel(
        "linear_cross_entropy", inputs, {{DType::F32, {}}, {DType::F32, {2, 7}}}, head.attributes);
    std::vector<double> logSumExp;
    double loss;
    simulateForward(head, logSumExp, loss);
    const std::string name = std::string(dtypeName(c.dtype)) + (c.transposeWeight ? " W^T" : "") +
                             (c.bias ? " bias" : "");
    EXPECT_TRUE(closeTo({loss}, {forward[0].at(0)}, 1e-5, 1e-6)) << name;
    EXPECT_TRUE(closeTo(logSumExp, forward[1].values(), 1e-5, 1e-5)) << name;

    // The backward, from the CPU's logsumexp as the graph passes it, three chunks of rows.
    OwnedTensor grad = f32({}, {1.5});
    std::vector<OwnedTensor> gradInputs = {grad, head.hidden, head.weight, head.labels, forward[1]};
    std::vector<std::pair<DType, Shape>> gradTypes = {{c.dtype, head.hidden.shape},
                                                      {c.dtype, head.weight.shape}};
    if (c.bias) {
      gradInputs.push_back(head.bias);
      gradTypes.push_back({c.dtype, {head.classes}});
    }
    std::vector<OwnedTensor> cpu =
        runKernel("linear_cross_entropy_grad", gradInputs, gradTypes, head.attributes);
    Gradients gpu = simulateBackward(head, 1.5f, forward[1].values(), 5);
    // 16-bit: the logits' gradient rounded once more (2^-9 relative for bf16) before the
    // products, besides the results' rounding.
    const double rtol = c.dtype == DType::F32 ? 1e-4 : c.dtype == DType::BF16 ? 3e-2 : 5e-3;
    const double atol = c.dtype == DType::F32 ? 1e-6 : 1e-3;
    EXPECT_TRUE(closeTo(gpu.hidden, cpu[0].values(), rtol, atol)) << name << " hidden";
    EXPECT_TRUE(closeTo(gpu.weight, cpu[1].values(), rtol, atol)) << name << " weight";
    if (c.bias) {
      EXPECT_TRUE(closeTo(gpu.bias, cpu[2].values(), rtol, atol)) << name << " bias";
    }
  }
}

TEST(CudaMatMulMath, LabelsOutsideTheClassesAreRefused) {
  using namespace cuda::rows;
  EXPECT_EQ(targetOf(-100, 10, -100), kIgnoredRow);
  EXPECT_EQ(targetOf(9, 10, -100), 9);
  EXPECT_EQ(targetOf(10, 10, -100), kLabelOutsideClasses);
  EXPECT_EQ(targetOf(-1, 10, -100), kLabelOutsideClasses);
  EXPECT_EQ(cuda::logitGradient(3.0f, 1.0f, 2.0f, 4, kIgnoredRow), 0.0f);
  EXPECT_EQ(cuda::logitGradient(3.0f, 1.0f, 2.0f, 4, kLabelOutsideClasses), 0.0f);
  EXPECT_EQ(cuda::rowLoss(3.0, 1.0f, kLabelOutsideClasses), 0.0);
  EXPECT_EQ(crossEntropyMean(5.0, 0), 0.0f);
  EXPECT_EQ(crossEntropyGradScale(5.0f, 0), 0.0f);
}

//===----------------------------------------------------------------------===//
// Workspace rules and limits
//===----------------------------------------------------------------------===//

/// The CUDA target's workspace bytes for a call of these types and shapes.
uint64_t cudaWorkspace(const std::string &op, const std::vector<std::pair<DType, Shape>> &inputs,
                       const std::vector<std::pair<DType, Shape>> &outputs,
                       const Attributes &attributes = Attributes()) {
  KernelCall call;
  for (const auto &[dtype, shape] : inputs)
    call.inputs.push_back(TensorView{nullptr, dtype, shape});
  for (const auto &[dtype, shape] : outputs)
    call.outputs.push_back(TensorView{nullptr, dtype, shape});
  call.attributes = &attributes;
  const TargetOp &target = cudaTarget().ops().at(op);
  std::string error;
  EXPECT_TRUE(!target.limits || target.limits(call, error)) << error;
  return target.workspace(call);
}

constexpr uint64_t kMiB = uint64_t{1} << 20;

/// A cuBLASLt workspace piece: its bytes plus the slack that aligns it to 256.
uint64_t gemmPiece(uint64_t bytes) { return alignedToWorkspace(bytes + 256); }

TEST(CudaMatMulMath, WorkspaceRulesSizeForTheShapes) {
  // A small product: 1 MiB and room for 8 partial results.
  EXPECT_EQ(cudaWorkspace("matmul", {{DType::F32, {64, 128}}, {DType::F32, {128, 32}}},
                          {{DType::F32, {64, 32}}}),
            gemmPiece(kMiB + 32 * 64 * 32));
  // A large one: the 32 MiB cap; an empty one: nothing.
  EXPECT_EQ(cudaWorkspace("matmul", {{DType::BF16, {8, 4096, 4096}}, {DType::BF16, {4096, 4096}}},
                          {{DType::BF16, {8, 4096, 4096}}}),
            gemmPiece(32 * kMiB));
  EXPECT_EQ(cudaWorkspace("matmul", {{DType::F32, {0, 128}}, {DType::F32, {128, 32}}},
                          {{DType::F32, {0, 32}}}),
            0u);

  // matmul_nf4, a [11008, 4096] weight used transposed with a bf16 lhs: panels of
  // 64 MiB / (4096 * 2) = 8192 columns, two of them.
  const int64_t weightCount = 11008 * 4096;
  Nf4Layout layout{weightCount};
  Attributes nf4 =
      attrs({{"weight_shape", std::vector<int64_t>{11008, 4096}}, {"transpose_rhs", int64_t{1}}});
  EXPECT_EQ(cudaWorkspace("matmul_nf4",
                          {{DType::BF16, {8, 4096}},
                           {DType::U8, {layout.packedBytes()}},
                           {DType::F32, {layout.blocks()}}},
                          {{DType::BF16, {8, 11008}}}, nf4),
            gemmPiece(kMiB + 32 * 8 * 8192) + 4096 * 8192 * 2);

  // linear_cross_entropy, 1000 rows over 50000 classes: 128 MiB / (50000 * 4) = 671 rows of
  // logits per chunk, the per-row losses; the backward (bf16) adds the gradient's bf16 copy,
  // the count, and f32 sums of the weight's and the bias's gradients.
  Attributes head = attrs({{"ignore_index", int64_t{-100}}});
  const uint64_t logits = 671 * 50000 * 4;
  EXPECT_EQ(
      cudaWorkspace("linear_cross_entropy",
                    {{DType::F32, {1000, 64}}, {DType::F32, {64, 50000}}, {DType::I64, {1000}}},
                    {{DType::F32, {}}, {DType::F32, {1000}}}, head),
      gemmPiece(32 * kMiB) + logits + alignedToWorkspace(1000 * 8));
  EXPECT_EQ(
      cudaWorkspace("linear_cross_entropy_grad",
                    {{DType::F32, {}},
                     {DType::BF16, {1000, 64}},
                     {DType::BF16, {64, 50000}},
                     {DType::I64, {1000}},
                     {DType::F32, {1000}},
                     {DType::BF16, {50000}}},
                    {{DType::BF16, {1000, 64}}, {DType::BF16, {64, 50000}}, {DType::BF16, {50000}}},
                    head),
      gemmPiece(32 * kMiB) + logits + alignedToWorkspace(8) + alignedToWorkspace(logits / 2) +
          alignedToWorkspace(64 * 50000 * 4) + alignedToWorkspace(50000 * 4));

  // A grouped 3x3 conv of two 4-channel 8x8 images: both images' columns in one chunk.
  Attributes conv = attrs({{"strides", std::vector<int64_t>{1, 1}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                           {"dilations", std::vector<int64_t>{1, 1}},
                           {"group", int64_t{2}}});
  const uint64_t columns = 2 * (2 * 18 * 64) * 4; // images x group x R x P floats
  EXPECT_EQ(cudaWorkspace("conv", {{DType::F32, {2, 4, 8, 8}}, {DType::F32, {6, 2, 3, 3}}},
                          {{DType::F32, {2, 6, 8, 8}}}, conv),
            gemmPiece(kMiB + 32 * 2 * 6 * 64) + columns);
  // conv_grad_weight (bf16) adds the chunk's gradient, copied [M, image, P].
  EXPECT_EQ(cudaWorkspace("conv_grad_weight",
                          {{DType::BF16, {2, 6, 8, 8}}, {DType::BF16, {2, 4, 8, 8}}},
                          {{DType::BF16, {6, 2, 3, 3}}}, conv),
            gemmPiece(kMiB + 32 * 6 * 18) + columns / 2 + 2 * 6 * 64 * 2);
}

TEST(CudaMatMulMath, LimitsRefuseWhatTheKernelsDoNotCover) {
  Attributes none;
  KernelCall call;
  call.inputs = {TensorView{nullptr, DType::I64, {4, 5}}, TensorView{nullptr, DType::I64, {5, 6}}};
  call.outputs = {TensorView{nullptr, DType::I64, {4, 6}}};
  call.attributes = &none;
  std::string error;
  EXPECT_FALSE(cudaTarget().ops().at("matmul").limits(call, error));
  EXPECT_NE(error.find("f32, f16 and bf16"), std::string::npos) << error;
  call.inputs = {TensorView{nullptr, DType::F32, {1, 1, 2, 2, 2, 2}},
                 TensorView{nullptr, DType::F32, {1, 1, 1, 1, 1, 1}}};
  call.outputs = {TensorView{nullptr, DType::F32, {1, 1, 2, 2, 2, 2}}};
  EXPECT_FALSE(cudaTarget().ops().at("conv").limits(call, error));
  EXPECT_NE(error.find("1 to 3 spatial dimensions"), std::string::npos) << error;
}

TEST(CublasLtGemm, Tf32OnlyWhereTheStepAllowsItAndTheInputsAreF32) {
  Attributes allowed;
  allowed.set(kAllowTf32Attribute, int64_t{1});
  KernelCall call;
  EXPECT_FALSE(allowsTf32(call));
  call.attributes = &allowed;
  EXPECT_TRUE(allowsTf32(call));
  RowMajorGemm gemm;
  EXPECT_FALSE(cuda::usesTf32(gemm));
  gemm.tf32 = allowsTf32(call);
  EXPECT_TRUE(cuda::usesTf32(gemm));
  gemm.inputType = DType::BF16; // 16-bit products are tensor-core products already
  EXPECT_FALSE(cuda::usesTf32(gemm));
  for (const char *kernel : {"matmul", "linear_cross_entropy_grad", "conv_grad_weight"})
    EXPECT_TRUE(takesTf32(kernel)) << kernel;
  EXPECT_FALSE(takesTf32("add"));
}

} // namespace
} // namespace memc::kernels::testing
