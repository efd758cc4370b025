//===- MatMulMath.h - the arithmetic of the CUDA matmul kernels --*- C++ -*-===//
//
// Plain C++ shared by the CUDA matmul kernels (MatMul.cu, MatMulNf4.cu) and the host tests that
// check them against the CPU kernels (test/kernels/cuda/MatMulMathTest.cpp):
//  - matmul's batch as cuBLASLt launches: numpy broadcasting of the batch dims becomes strided
//    batches (stride 0 for an operand that broadcasts) over the innermost dims that merge, and a
//    loop of launches over the rest (none in the common cases);
//  - where matmul_nf4's dequantized panel reads the packed weight, and the signed dynamic code
//    of double-quantized absmax computed without a table (the device has none).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_MATMULMATH_H
#define MEMC_KERNELS_CUDA_MATMULMATH_H

#include "kernels/HostDevice.h"
#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace memc::kernels::cuda {

/// matmul's product after numpy's 1-D promotion and the transposes, and its batch broadcast:
/// each batch shape padded with leading 1s to the result's batch rank.
struct MatMulProblem {
  int64_t m = 0, n = 0, k = 0;
  bool transposeLhs = false, transposeRhs = false;
  Shape batch, lhsBatch, rhsBatch;
  int64_t batchCount = 1, lhsCount = 1, rhsCount = 1;

  MatMulProblem(const Shape &lhs, const Shape &rhs, bool transposeLhs, bool transposeRhs)
      : transposeLhs(transposeLhs), transposeRhs(transposeRhs) {
    Shape a = lhs, b = rhs;
    if (a.size() == 1)
      a.insert(a.begin(), 1);
    if (b.size() == 1)
      b.push_back(1);
    m = transposeLhs ? a.back() : a[a.size() - 2];
    k = transposeLhs ? a[a.size() - 2] : a.back();
    n = transposeRhs ? b[b.size() - 2] : b.back();
    lhsBatch.assign(a.begin(), a.end() - 2);
    rhsBatch.assign(b.begin(), b.end() - 2);
    size_t rank = std::max(lhsBatch.size(), rhsBatch.size());
    lhsBatch.insert(lhsBatch.begin(), rank - lhsBatch.size(), 1);
    rhsBatch.insert(rhsBatch.begin(), rank - rhsBatch.size(), 1);
    for (size_t d = 0; d < rank; ++d) {
      batch.push_back(std::max(lhsBatch[d], rhsBatch[d]));
      if (lhsBatch[d] == 0 || rhsBatch[d] == 0)
        batch.back() = 0;
      batchCount *= batch.back();
      lhsCount *= lhsBatch[d];
      rhsCount *= rhsBatch[d];
    }
  }

  explicit MatMulProblem(const KernelCall &call)
      : MatMulProblem(call.inputs[0].shape, call.inputs[1].shape,
                      attributesOf(call).intOr("transpose_lhs", 0) == 1,
                      attributesOf(call).intOr("transpose_rhs", 0) == 1) {}

  /// Stored leading dimensions: a transposed lhs is [K, M], a transposed rhs [N, K].
  int64_t lda() const { return transposeLhs ? m : k; }
  int64_t ldb() const { return transposeRhs ? k : n; }

  /// One right-hand matrix for a whole, unbroadcast left-hand batch: one tall product of all
  /// the stacked rows (a transposed lhs's rows are not stacked in memory).
  bool stacksRows() const {
    return rhsCount == 1 && lhsCount == batchCount && !transposeLhs &&
           batchCount * m <= std::numeric_limits<int32_t>::max();
  }
};

/// The result's batch as cuBLASLt launches: launch i runs `count` products, product j of it
/// multiplying lhs matrix lhs0 + j * lhsStride by rhs matrix rhs0 + j * rhsStride into result
/// matrix out0 + j (offsets in matrices, from start(i)). The strided products are the
/// innermost batch dims that merge into one run; the other dims loop. For a non-empty batch.
struct MatMulLaunches {
  int64_t count = 1, lhsStride = 0, rhsStride = 0;
  /// The looped dims, outermost first, with each operand's matrix stride along them.
  Shape outer, outerLhs, outerRhs, outerOut;

  int64_t launches() const {
    int64_t total = 1;
    for (int64_t size : outer)
      total *= size;
    return total;
  }

  /// The first matrices of launch `index`.
  void start(int64_t index, int64_t &lhs0, int64_t &rhs0, int64_t &out0) const {
    lhs0 = rhs0 = out0 = 0;
    for (size_t d = outer.size(); d-- > 0;) {
      int64_t position = index % outer[d];
      index /= outer[d];
      lhs0 += position * outerLhs[d];
      rhs0 += position * outerRhs[d];
      out0 += position * outerOut[d];
    }
  }
};

inline MatMulLaunches matmulLaunches(const MatMulProblem &problem) {
  // Matrix strides per batch dim; 0 where an operand broadcasts. Dims of size 1 drop out.
  struct Dim {
    int64_t size, lhs, rhs, out;
  };
  std::vector<Dim> dims;
  int64_t lhsStride = 1, rhsStride = 1, outStride = 1;
  for (size_t d = problem.batch.size(); d-- > 0;) {
    int64_t size = problem.batch[d];
    if (size != 1)
      dims.insert(dims.begin(), Dim{size, problem.lhsBatch[d] == 1 ? 0 : lhsStride,
                                    problem.rhsBatch[d] == 1 ? 0 : rhsStride, outStride});
    lhsStride *= problem.lhsBatch[d];
    rhsStride *= problem.rhsBatch[d];
    outStride *= size;
  }
  MatMulLaunches launches;
  size_t run = dims.size();
  if (run > 0) {
    const Dim &inner = dims.back();
    launches.count = inner.size;
    launches.lhsStride = inner.lhs;
    launches.rhsStride = inner.rhs;
    // A dim joins the run when every operand steps over it as over the run's products.
    for (--run; run > 0; --run) {
      const Dim &dim = dims[run - 1];
      if (dim.lhs != inner.lhs * launches.count || dim.rhs != inner.rhs * launches.count ||
          dim.out != launches.count)
        break;
      launches.count *= dim.size;
    }
  }
  for (size_t d = 0; d < run; ++d) {
    launches.outer.push_back(dims[d].size);
    launches.outerLhs.push_back(dims[d].lhs);
    launches.outerRhs.push_back(dims[d].rhs);
    launches.outerOut.push_back(dims[d].out);
  }
  return launches;
}

/// matmul_nf4's product: rows of the lhs (its leading dims together), depth K, columns N.
struct Nf4Problem {
  int64_t rows = 0, depth = 0, columns = 0;
  bool transposeRhs = false;

  explicit Nf4Problem(const KernelCall &call) {
    transposeRhs = attributesOf(call).intOr("transpose_rhs", 0) == 1;
    depth = call.inputs[0].shape.back();
    columns = call.outputs[0].shape.back();
    rows = 1;
    for (size_t d = 0; d + 1 < call.inputs[0].shape.size(); ++d)
      rows *= call.inputs[0].shape[d];
  }
};

/// The flat index in the weight of element `e` of the dequantized panel of op(W)'s columns
/// [column0, column0 + count): the panel is [count, K] (rows of a transposed [N, K] weight,
/// read transposed by the product) or [K, count] (columns of a [K, N] weight).
MEMC_HOST_DEVICE inline int64_t nf4PanelSource(int64_t e, int64_t column0, int64_t count,
                                               int64_t depth, int64_t columns, bool transposeRhs) {
  if (transposeRhs)
    return column0 * depth + e;
  return (e / count) * columns + column0 + e % count;
}

/// Value `index` of the signed dynamic code (DynamicQuantization.h's makeDynamicCode(true)), the
/// same double arithmetic without its sort: the code's levels do not overlap, so its 127
/// positive values ascend level by level, part by part; the negatives mirror them below 0, and
/// 1 closes the code.
MEMC_HOST_DEVICE inline float signedDynamicCodeValue(int index) {
  if (index == 127)
    return 0.0f;
  if (index == 255)
    return 1.0f;
  const bool negative = index < 127;
  const int rank = negative ? 126 - index : index - 128;
  int level = 0;
  while ((2 << level) - 1 <= rank) // level l holds ranks [2^l - 1, 2^(l+1) - 1)
    ++level;
  const int parts = 1 << level, part = rank - (parts - 1);
  double scale = 1.0;
  for (int k = level; k < 6; ++k)
    scale /= 10.0;
  const double low = 0.1 + 0.9 * part / parts, high = 0.1 + 0.9 * (part + 1) / parts;
  const double value = scale * (low + high) / 2.0;
  return static_cast<float>(negative ? -value : value);
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_MATMULMATH_H
