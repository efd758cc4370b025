//===- Indexing.cu - the CUDA kernels that read or produce indices --------===//
//
// gather, gather_grad and top_k, with LayoutMath.h's index arithmetic.
//
// Indices are data: one kernel checks them all and records the first out-of-range one it meets
// (kIndexOutOfRange: index, position, axis, dimension size); the moving kernels never follow an
// out-of-range index (gather writes zeros in its place, gather_grad drops its row), so nothing
// is read or written out of bounds whatever the values. The outputs of a failed call are
// unspecified, as on the CPU.
//
// gather moves bits in the widest unit the rows allow, like the layout kernels.
//
// gather_grad adds each gradient row into its destination with f32 atomics, into the result
// itself for f32 and into an f32 workspace (rounded once into the result) for f16/bf16, as the
// CPU sums in f32 and rounds once. Not bitwise deterministic: where an index repeats, the
// order in which its rows are added (and so the f32 rounding of the sum) varies from run to
// run. A destination that one index takes is exact.
//
// top_k gives each line (an [outer, inner] position) one warp, which selects k times the best
// element after the previous one in top_k's total order (LayoutMath.h): O(k * length) per
// line, so the target limits k (kMaxTopK). Values are copied from the input, bit for bit.
//
//===----------------------------------------------------------------------===//
#include "kernels/ElementVisitors.h"
#include "kernels/Workspace.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"
#include "kernels/cuda/LayoutMath.h"

#include <type_traits>

namespace memc::kernels {
namespace cuda {
namespace {

/// Records the first index outside [-dim, dim) the threads meet.
template <typename I>
__global__ void checkIndices(const I *indices, int64_t count, int64_t dim, int64_t axis,
                             DeviceErrorRecord *errors, uint32_t step) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    int64_t row;
    if (!indexRow(indices[i], dim, row))
      recordDeviceError(errors, step, kIndexOutOfRange, indices[i], i, axis, dim);
  }
}

bool launchCheckIndices(KernelContext &context, const char *op, const TensorView &indices,
                        int64_t dim, int64_t axis) {
  int64_t count = indices.numElements();
  if (count == 0)
    return true;
  visitIndex(indices.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    checkIndices<I><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
        indices.as<I>(), count, dim, axis, context.deviceErrors, context.step);
  });
  return launched(context, op);
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

template <typename Unit, typename I, typename Index>
__global__ void gatherUnits(const Unit *data, const I *indices, Unit *out, GatherIndex gather,
                            int64_t count) {
  for (int64_t e = gridThreadIndex(); e < count; e += gridThreads()) {
    Index unit = static_cast<Index>(e);
    int64_t row;
    if (indexRow(indices[gatherPosition<Index>(gather, unit)], gather.dim, row))
      out[e] = data[gatherSource<Index>(gather, unit, static_cast<Index>(row))];
    else
      out[e] = Unit{};
  }
}

bool runGather(KernelContext &context, const KernelCall &call) {
  const TensorView &data = call.inputs[0], &indices = call.inputs[1], &output = call.outputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  if (!launchCheckIndices(context, "gather", indices, data.shape[axis], axis))
    return false;
  if (output.numElements() == 0)
    return true;
  int64_t unitBytes;
  GatherIndex gather = gatherIndex(data, indices, output, axis, true, unitBytes);
  int64_t count = static_cast<int64_t>(output.sizeBytes()) / unitBytes;
  bool narrow = fitsIn32Bits(output.numElements(), data.numElements());
  visitUnit(unitBytes, [&](auto unitTag) {
    using Unit = typename decltype(unitTag)::type;
    visitIndex(indices.dtype, [&](auto indexTag) {
      using I = typename decltype(indexTag)::type;
      if (narrow)
        gatherUnits<Unit, I, uint32_t><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
            data.as<Unit>(), indices.as<I>(), output.as<Unit>(), gather, count);
      else
        gatherUnits<Unit, I, int64_t><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
            data.as<Unit>(), indices.as<I>(), output.as<Unit>(), gather, count);
    });
  });
  return launched(context, "gather");
}

//===----------------------------------------------------------------------===//
// gather_grad
//===----------------------------------------------------------------------===//

/// sums[row of e's index, e's column] += grad[e], for every gradient element e.
template <typename T, typename I, typename Index>
__global__ void scatterAddRows(const T *grad, const I *indices, float *sums, GatherIndex gather,
                               int64_t count) {
  for (int64_t e = gridThreadIndex(); e < count; e += gridThreads()) {
    Index element = static_cast<Index>(e);
    int64_t row;
    if (indexRow(indices[gatherPosition<Index>(gather, element)], gather.dim, row))
      atomicAdd(&sums[gatherSource<Index>(gather, element, static_cast<Index>(row))],
                loadFloat(grad, e));
  }
}

/// The result's sums, then for f16/bf16 their rounding into the result.
template <typename T> bool scatterAdd(KernelContext &context, const KernelCall &call, float *sums) {
  const TensorView &grad = call.inputs[0], &indices = call.inputs[1], &result = call.outputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  int64_t total = result.numElements(), count = grad.numElements(), unitBytes;
  GatherIndex gather = gatherIndex(result, indices, grad, axis, false, unitBytes);
  cudaMemsetAsync(sums, 0, static_cast<size_t>(total) * sizeof(float), streamOf(context));
  if (!launched(context, "gather_grad"))
    return false;
  if (count > 0) {
    bool narrow = fitsIn32Bits(count, total);
    visitIndex(indices.dtype, [&](auto tag) {
      using I = typename decltype(tag)::type;
      if (narrow)
        scatterAddRows<T, I, uint32_t><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
            grad.as<T>(), indices.as<I>(), sums, gather, count);
      else
        scatterAddRows<T, I, int64_t><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
            grad.as<T>(), indices.as<I>(), sums, gather, count);
    });
    if (!launched(context, "gather_grad"))
      return false;
  }
  if constexpr (!std::is_same_v<T, float>) {
    storeRounded<T>
        <<<gridFor(total), kBlockThreads, 0, streamOf(context)>>>(sums, total, result.as<T>());
    return launched(context, "gather_grad");
  }
  return true;
}

bool runGatherGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &indices = call.inputs[1], &result = call.outputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  WorkspaceCarver carver(call);
  float *sums = carveGatherGradSums(call, carver);
  if (!carver.fits(context))
    return false;
  if (!launchCheckIndices(context, "gather_grad", indices, result.shape[axis], axis))
    return false;
  if (result.numElements() == 0)
    return true;
  return visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return scatterAdd<T>(context, call, std::is_same_v<T, float> ? result.as<float>() : sums);
  });
}

//===----------------------------------------------------------------------===//
// top_k
//===----------------------------------------------------------------------===//

constexpr int kWarpSize = 32;

/// The lines of top_k: the input [outer, length, inner], the outputs [outer, k, inner].
struct TopKLines {
  int64_t lines, length, inner, k;
};

/// What top_k compares a stored element as: f16/bf16 as f32, integers as themselves.
template <typename T> using RankOf = std::conditional_t<std::is_integral_v<T>, T, float>;

template <typename T> __device__ inline RankOf<T> rankValue(const T *x, int64_t i) {
  if constexpr (std::is_integral_v<T>)
    return x[i];
  else
    return loadFloat(x, i);
}

template <typename T>
__global__ void topKLines(const T *x, T *values, int64_t *indices, TopKLines lines, bool largest) {
  using C = RankOf<T>;
  int lane = threadIdx.x % kWarpSize;
  int64_t warps = gridThreads() / kWarpSize;
  // A whole warp takes each line, so the shuffles below always see all 32 lanes.
  for (int64_t line = gridThreadIndex() / kWarpSize; line < lines.lines; line += warps) {
    int64_t outer = line / lines.inner, inner = line % lines.inner;
    const T *in = x + outer * lines.length * lines.inner + inner;
    int64_t out = outer * lines.k * lines.inner + inner;
    Ranked<C> previous{C(), -1};
    for (int64_t selected = 0; selected < lines.k; ++selected) {
      Ranked<C> best{C(), -1};
      for (int64_t j = lane; j < lines.length; j += kWarpSize) {
        Ranked<C> candidate{rankValue(in, j * lines.inner), j};
        if (topKAfter(previous, candidate, largest))
          best = topKFirst(best, candidate, largest);
      }
      for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
        Ranked<C> other{__shfl_xor_sync(0xffffffffu, best.value, offset),
                        __shfl_xor_sync(0xffffffffu, best.index, offset)};
        best = topKFirst(best, other, largest);
      }
      // Every lane now holds the same best, a real element: selected < k <= length.
      if (lane == 0) {
        values[out + selected * lines.inner] = in[best.index * lines.inner];
        indices[out + selected * lines.inner] = best.index;
      }
      previous = best;
    }
  }
}

template <typename T> void launchTopK(KernelContext &context, const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  int64_t axis = attributes.intOr("axis", 0);
  AxisExtents extents = extentsAroundAxis(call.inputs[0].shape, axis);
  TopKLines lines{extents.outer * extents.inner, extents.length, extents.inner,
                  attributes.intOr("k", 0)};
  bool largest = attributes.intOr("largest", 1) != 0;
  topKLines<T><<<gridFor(lines.lines * kWarpSize), kBlockThreads, 0, streamOf(context)>>>(
      call.inputs[0].as<T>(), call.outputs[0].as<T>(), call.outputs[1].as<int64_t>(), lines,
      largest);
}

bool runTopK(KernelContext &context, const KernelCall &call) {
  if (call.outputs[0].numElements() == 0)
    return true;
  visitNumeric(call.inputs[0].dtype,
               [&](auto tag) { launchTopK<typename decltype(tag)::type>(context, call); });
  return launched(context, "top_k");
}

} // namespace
} // namespace cuda

void addIndexingCudaKernels(CudaKernelRuns &runs) {
  runs["gather"] = &cuda::runGather;
  runs["gather_grad"] = &cuda::runGatherGrad;
  runs["top_k"] = &cuda::runTopK;
}

} // namespace memc::kernels
