//===- MatMul.cpp - numpy.matmul ------------------------------------------===//
//
// Floats go through OpenBLAS sgemm: f16/bf16 operands are widened to f32 scratch first and the
// f32 product rounded once. A batch that shares one right-hand matrix (x @ W, the common case)
// is one tall product; other batches are a loop of products, spread over threads by batch when
// the matrices are small. Integer matmul is a plain loop whose products and sums wrap.
//
// Scratch: std::vector for the widened operands and the f32 result, for now; the plan will
// account for kernel workspace later.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/StridedLayout.h"
#include "kernels/cpu/ThreadPool.h"

#include <utility>

namespace memc::kernels {

namespace {

/// The operands' shapes after numpy's 1-D promotion, and the product's dimensions.
struct MatMulDims {
  Shape lhsBatch, rhsBatch, batch;
  int64_t m = 0, n = 0, k = 0;
  int64_t batchCount = 1;

  MatMulDims(const Shape &lhs, const Shape &rhs) {
    Shape a = lhs, b = rhs;
    if (a.size() == 1)
      a.insert(a.begin(), 1);
    if (b.size() == 1)
      b.push_back(1);
    m = a[a.size() - 2];
    k = a.back();
    n = b.back();
    lhsBatch.assign(a.begin(), a.end() - 2);
    rhsBatch.assign(b.begin(), b.end() - 2);
    std::string unused;
    broadcastShapes({lhsBatch, rhsBatch}, batch, unused);
    for (int64_t dim : batch)
      batchCount *= dim;
  }

  /// For each batch of the result, the batch indices of lhs and rhs it multiplies.
  std::vector<std::pair<int64_t, int64_t>> batchPairs() const {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    pairs.reserve(batchCount);
    StridedLayout<2> layout = broadcastLayout<2>(batch, {&lhsBatch, &rhsBatch});
    layout.forEachRun(0, layout.numElements(),
                      [&](int64_t, const std::array<int64_t, 2> &offsets, int64_t count) {
                        for (int64_t i = 0; i < count; ++i)
                          pairs.emplace_back(offsets[0] + i * layout.innerStride(0),
                                             offsets[1] + i * layout.innerStride(1));
                      });
    return pairs;
  }
};

bool checkMatMul(const KernelCall &call, std::string &error) {
  Shape expected;
  if (!checkCall(call, 2, 2, 1, error) ||
      !checkDType(call.inputs[0], kNumericTypes, "lhs", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "rhs", "lhs", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "lhs", error) ||
      !matmulShape(call.inputs[0].shape, call.inputs[1].shape, expected, error) ||
      !checkShape(call.outputs[0], expected, "output", error))
    return false;
  MatMulDims dims(call.inputs[0].shape, call.inputs[1].shape);
  if (dims.m > kMaxGemmDimension || dims.n > kMaxGemmDimension || dims.k > kMaxGemmDimension) {
    error = "matmul dimensions exceed 2^31 - 1";
    return false;
  }
  return true;
}

void matmulFloat(const MatMulDims &dims, const float *a, const float *b, float *c) {
  int64_t m = dims.m, n = dims.n, k = dims.k;
  int64_t lhsCount = 1, rhsCount = 1;
  for (int64_t dim : dims.lhsBatch)
    lhsCount *= dim;
  for (int64_t dim : dims.rhsBatch)
    rhsCount *= dim;
  // One shared right-hand matrix and no broadcast of the left: stack the batch into rows.
  if (rhsCount == 1 && lhsCount == dims.batchCount && dims.batchCount * m <= kMaxGemmDimension) {
    gemmParallel(dims.batchCount * m, n, k, a, k, b, n, c, n);
    return;
  }
  std::vector<std::pair<int64_t, int64_t>> pairs = dims.batchPairs();
  auto multiply = [&](int64_t batch, bool parallel) {
    const float *lhs = a + pairs[batch].first * m * k;
    const float *rhs = b + pairs[batch].second * k * n;
    float *out = c + batch * m * n;
    if (parallel)
      gemmParallel(m, n, k, lhs, k, rhs, n, out, n);
    else
      gemmSerial(m, n, k, lhs, k, rhs, n, out, n);
  };
  double work = static_cast<double>(m) * static_cast<double>(n) * std::max<double>(k, 1);
  if (work >= 4.0 * kGemmParallelWork) {
    for (int64_t batch = 0; batch < dims.batchCount; ++batch)
      multiply(batch, true);
    return;
  }
  parallelFor(0, dims.batchCount,
              std::max<int64_t>(1, static_cast<int64_t>(kGemmParallelWork / work)),
              [&](int64_t begin, int64_t end) {
                for (int64_t batch = begin; batch < end; ++batch)
                  multiply(batch, false);
              });
}

template <typename T> void matmulInteger(const MatMulDims &dims, const T *a, const T *b, T *c) {
  using U = std::make_unsigned_t<T>;
  int64_t m = dims.m, n = dims.n, k = dims.k;
  std::vector<std::pair<int64_t, int64_t>> pairs = dims.batchPairs();
  parallelFor(0, dims.batchCount * m, std::max<int64_t>(1, kElementwiseGrain / (n * k + 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  int64_t batch = row / m, i = row % m;
                  const T *lhs = a + pairs[batch].first * m * k + i * k;
                  const T *rhs = b + pairs[batch].second * k * n;
                  U *out = reinterpret_cast<U *>(c + row * n);
                  std::fill(out, out + n, U(0));
                  for (int64_t p = 0; p < k; ++p) {
                    U scale = static_cast<U>(lhs[p]);
                    for (int64_t j = 0; j < n; ++j)
                      out[j] += scale * static_cast<U>(rhs[p * n + j]);
                  }
                }
              });
}

/// The tensor's values as f32: its own buffer for f32, else a widened copy in `scratch`.
template <typename T> const float *asFloat(const TensorView &tensor, std::vector<float> &scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return tensor.as<float>();
  } else {
    scratch.resize(static_cast<size_t>(tensor.numElements()));
    const T *data = tensor.as<T>();
    parallelFor(0, tensor.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        scratch[i] = Element<T>::load(data[i]);
    });
    return scratch.data();
  }
}

bool runMatMul(const KernelCall &call, std::string &) {
  const TensorView &output = call.outputs[0];
  MatMulDims dims(call.inputs[0].shape, call.inputs[1].shape);
  if (output.numElements() == 0)
    return true;
  visitNumeric(output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      matmulInteger<T>(dims, call.inputs[0].as<T>(), call.inputs[1].as<T>(), output.as<T>());
    } else {
      std::vector<float> lhsScratch, rhsScratch, outScratch;
      const float *a = asFloat<T>(call.inputs[0], lhsScratch);
      const float *b = asFloat<T>(call.inputs[1], rhsScratch);
      if constexpr (std::is_same_v<T, float>) {
        matmulFloat(dims, a, b, output.as<float>());
      } else {
        outScratch.resize(static_cast<size_t>(output.numElements()));
        matmulFloat(dims, a, b, outScratch.data());
        T *y = output.as<T>();
        parallelFor(0, output.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            y[i] = Element<T>::store(outScratch[i]);
        });
      }
    }
  });
  return true;
}

} // namespace

void addMatMulKernels(KernelTable &table) { table["matmul"] = Kernel{&checkMatMul, &runMatMul}; }

} // namespace memc::kernels
