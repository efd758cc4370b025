//===- Scan.cu - cumsum on CUDA -------------------------------------------===//
//
// The input is [outer, length, inner] around the scanned axis; floats accumulate in f64 and
// integers in i64 with wrap-around (ReductionMath.h's SumReducer), as the CPU kernel does.
//  - inner > 1: a thread per row (adjacent threads adjacent rows, so loads coalesce) walks it
//    with ReductionMath.h's cumsumRow, as it walks a row shorter than a warp.
//  - inner == 1: a block per row, in spans of kScanItems consecutive elements per thread: each
//    thread sums its elements, a block scan gives each thread the sum before its own, and the
//    span's total carries into the next span. With `reverse` the row is walked from its end.
// Every thread reads its elements of a span before the block scan's barrier and writes them
// after, so the output may share the input's buffer.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/cuda/ReductionMath.h"
#include "kernels/cuda/RowKernels.cuh"

namespace memc::kernels::cuda::rows {
namespace {

constexpr int kScanItems = 4;
constexpr int kMaxScanThreads = 256;

template <typename T> struct AddWide {
  __device__ WideOf<T> operator()(WideOf<T> a, WideOf<T> b) const {
    return SumReducer<T>::combine(a, b);
  }
};

/// The sum of `value` over the block's threads before this one (zero for thread 0); `total` is
/// the sum over all of them.
template <typename T> __device__ WideOf<T> blockExclusiveSum(WideOf<T> value, WideOf<T> &total) {
  using Acc = WideOf<T>;
  __shared__ Acc warpTotals[kMaxScanThreads / kWarpSize];
  AddWide<T> add;
  int lane = threadIdx.x % kWarpSize, warp = threadIdx.x / kWarpSize;
  Acc inclusive = value;
  for (int delta = 1; delta < kWarpSize; delta *= 2) {
    Acc below = shuffleUp(inclusive, delta);
    if (lane >= delta)
      inclusive = add(below, inclusive);
  }
  if (lane == kWarpSize - 1)
    warpTotals[warp] = inclusive;
  __syncthreads();
  Acc before = 0;
  total = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x / kWarpSize); ++w) {
    if (w < warp)
      before = add(before, warpTotals[w]);
    total = add(total, warpTotals[w]);
  }
  __syncthreads();
  Acc lanesBelow = shuffleUp(inclusive, 1);
  return lane == 0 ? before : add(before, lanesBelow);
}

/// A block per row of `length` contiguous elements, a span of kScanItems per thread at a time.
template <typename T>
__global__ void __launch_bounds__(kMaxScanThreads)
    cumsumByBlocks(const T *x, T *y, int64_t rows, int64_t length, bool exclusive, bool reverse) {
  using Sum = SumReducer<T>;
  using Acc = WideOf<T>;
  AddWide<T> add;
  int64_t span = int64_t{blockDim.x} * kScanItems;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *in = x + row * length;
    T *out = y + row * length;
    Acc carry = 0;
    for (int64_t start = 0; start < length; start += span) {
      int64_t first = start + int64_t{threadIdx.x} * kScanItems;
      Acc values[kScanItems], own = 0;
      for (int k = 0; k < kScanItems; ++k) {
        int64_t j = first + k;
        values[k] = j < length
                        ? static_cast<Acc>(Element<T>::load(in[reverse ? length - 1 - j : j]))
                        : Acc(0);
        own = add(own, values[k]);
      }
      Acc spanTotal;
      Acc running = add(carry, blockExclusiveSum<T>(own, spanTotal));
      for (int k = 0; k < kScanItems; ++k) {
        int64_t j = first + k;
        if (j >= length)
          break;
        Acc before = running;
        running = add(running, values[k]);
        out[reverse ? length - 1 - j : j] = Sum::finish(exclusive ? before : running, 0);
      }
      carry = add(carry, spanTotal);
    }
  }
}

/// A thread per row: outer * inner rows of `length` elements `inner` apart.
template <typename T>
__global__ void cumsumByThreads(const T *x, T *y, int64_t outer, int64_t length, int64_t inner,
                                bool exclusive, bool reverse) {
  int64_t rows = outer * inner;
  for (int64_t i = gridThreadIndex(); i < rows; i += gridThreads()) {
    int64_t base = (i / inner) * length * inner + i % inner;
    cumsumRow(x + base, y + base, length, inner, exclusive, reverse);
  }
}

bool runCumSum(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0];
  if (input.numElements() == 0)
    return true;
  const Attributes &attributes = attributesOf(call);
  AxisExtents e = extentsAroundAxis(input.shape, attributes.intOr("axis", 0));
  bool exclusive = attributes.intOr("exclusive", 0) != 0;
  bool reverse = attributes.intOr("reverse", 0) != 0;
  cudaStream_t stream = streamOf(context);
  visitNumeric(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    if (e.inner == 1 && e.length >= kWarpSize)
      cumsumByBlocks<T>
          <<<blocksFor(e.outer), rowThreads(e.length, kScanItems, kMaxScanThreads), 0, stream>>>(
              x, y, e.outer, e.length, exclusive, reverse);
    else
      cumsumByThreads<T><<<gridFor(e.outer * e.inner), kBlockThreads, 0, stream>>>(
          x, y, e.outer, e.length, e.inner, exclusive, reverse);
  });
  return launched(context, "cumsum");
}

} // namespace

void addScanCudaKernels(CudaKernelRuns &runs) { runs["cumsum"] = &runCumSum; }

} // namespace memc::kernels::cuda::rows
