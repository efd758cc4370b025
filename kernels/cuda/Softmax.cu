//===- Softmax.cu - softmax, log_softmax and their gradients on CUDA ------===//
//
// The input is [outer, length, inner] around the axis. Along the innermost axis (inner == 1)
// a block shares each row: the row maximum, then the sum of e^(x - max), each a block
// reduction, then the outputs (RowMath.h's formulas). Along another axis each thread owns one
// of the interleaved rows (stride inner; adjacent threads take adjacent rows, so loads
// coalesce) and runs RowMath.h's serial row functions, as it does a row shorter than a warp.
// The gradients work from the forward output y the same way:
//   softmax:     dx = y * (dy - sum(dy * y))
//   log_softmax: dx = dy - e^y * sum(dy)
// A block reads its whole row before writing any of it, and a thread its own row, so the
// result may share the input's (or grad's, or y's) buffer.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/cuda/RowKernels.cuh"

namespace memc::kernels::cuda::rows {
namespace {

/// A block per row of n contiguous elements.
template <typename T, bool Log>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmaxByBlocks(const T *x, T *y, int64_t rows, int64_t n) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    RowOf<const T> in{x + row * n, 1};
    RowOf<T> out{y + row * n, 1};
    SoftmaxStatistics statistics = blockSoftmaxStatistics(in, n);
    float scale = softmaxScale<Log>(statistics.sum);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      out.store(j, softmaxOutput<Log>(in.load(j), statistics.max, scale));
  }
}

/// A thread per row: outer * inner rows of `length` elements `inner` apart.
template <typename T, bool Log>
__global__ void softmaxByThreads(const T *x, T *y, int64_t outer, int64_t length, int64_t inner) {
  int64_t rows = outer * inner;
  for (int64_t i = gridThreadIndex(); i < rows; i += gridThreads()) {
    int64_t base = (i / inner) * length * inner + i % inner;
    softmaxRow<Log>(RowOf<const T>{x + base, inner}, RowOf<T>{y + base, inner}, length);
  }
}

template <typename T, bool Log>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmaxGradByBlocks(const T *dy, const T *y, T *dx, int64_t rows, int64_t n) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    RowOf<const T> grad{dy + row * n, 1}, out{y + row * n, 1};
    RowOf<T> result{dx + row * n, 1};
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += softmaxGradTerm<Log>(grad.load(j), out.load(j));
    auto rounded = static_cast<float>(blockAllReduce(sum, Add{}));
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      result.store(j, softmaxGradOutput<Log>(grad.load(j), out.load(j), rounded));
  }
}

template <typename T, bool Log>
__global__ void softmaxGradByThreads(const T *dy, const T *y, T *dx, int64_t outer, int64_t length,
                                     int64_t inner) {
  int64_t rows = outer * inner;
  for (int64_t i = gridThreadIndex(); i < rows; i += gridThreads()) {
    int64_t base = (i / inner) * length * inner + i % inner;
    softmaxGradRow<Log>(RowOf<const T>{dy + base, inner}, RowOf<const T>{y + base, inner},
                        RowOf<T>{dx + base, inner}, length);
  }
}

/// Whether blocks share the rows (along the innermost axis, at least a warp long); otherwise
/// each thread walks one.
bool sharedRows(const AxisExtents &e) { return e.inner == 1 && e.length >= kWarpSize; }

template <bool Log> bool runSoftmax(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0];
  if (input.numElements() == 0)
    return true;
  AxisExtents e = extentsAroundAxis(input.shape, attributesOf(call).intOr("axis", 0));
  cudaStream_t stream = streamOf(context);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    if (sharedRows(e))
      softmaxByBlocks<T, Log>
          <<<blocksFor(e.outer), rowThreads(e.length), 0, stream>>>(x, y, e.outer, e.length);
    else
      softmaxByThreads<T, Log><<<gridFor(e.outer * e.inner), kBlockThreads, 0, stream>>>(
          x, y, e.outer, e.length, e.inner);
  });
  return launched(context, Log ? "log_softmax" : "softmax");
}

template <bool Log> bool runSoftmaxGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0];
  if (grad.numElements() == 0)
    return true;
  AxisExtents e = extentsAroundAxis(grad.shape, attributesOf(call).intOr("axis", 0));
  cudaStream_t stream = streamOf(context);
  visitFloat(grad.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = grad.as<T>(), *y = call.inputs[1].as<T>();
    T *dx = call.outputs[0].as<T>();
    if (sharedRows(e))
      softmaxGradByBlocks<T, Log>
          <<<blocksFor(e.outer), rowThreads(e.length), 0, stream>>>(dy, y, dx, e.outer, e.length);
    else
      softmaxGradByThreads<T, Log><<<gridFor(e.outer * e.inner), kBlockThreads, 0, stream>>>(
          dy, y, dx, e.outer, e.length, e.inner);
  });
  return launched(context, Log ? "log_softmax_grad" : "softmax_grad");
}

} // namespace

void addSoftmaxCudaKernels(CudaKernelRuns &runs) {
  runs["softmax"] = &runSoftmax<false>;
  runs["log_softmax"] = &runSoftmax<true>;
  runs["softmax_grad"] = &runSoftmaxGrad<false>;
  runs["log_softmax_grad"] = &runSoftmaxGrad<true>;
}

} // namespace memc::kernels::cuda::rows
