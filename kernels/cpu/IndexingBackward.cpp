//===- IndexingBackward.cpp - gather_grad and slice_grad ------------------===//
//
// Both scatter a gradient into zeros of the forward input's shape.
//
// gather_grad validates every index before writing anything (indices are data), then sorts the
// index positions by destination (a stable counting sort), so that each destination slice is
// written by one task that adds its sources in index order: threads never share a
// destination, repeated indices accumulate in the order a serial scatter-add would, and every
// result element is written exactly once. Sums run in f32 (f16/bf16 round once).
//
// slice_grad zeroes the result (unless the slice covers it all) and copies the gradient to the
// sliced positions in one strided walk, as slice reads them; it moves bits, so it takes every
// element type.
//
// Workspace (gather_grad only): the validated rows, the sorted positions and the group bounds,
// plus for f16/bf16 one f32 destination row per slot (slices run in at most kMaxWorkspaceSlots
// pieces). slice_grad needs none.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/IndexingBackwardWorkspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/StridedLayout.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <cstring>

namespace memc::kernels {

namespace {

//===----------------------------------------------------------------------===//
// gather_grad
//===----------------------------------------------------------------------===//

/// The row (in [0, dim)) each index takes; false with a message if one is outside
/// [-dim, dim).
bool validateIndices(const TensorView &indices, int64_t axis, int64_t dim, int64_t *rows,
                     std::string &error) {
  int64_t count = indices.numElements();
  return visitIndex(indices.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I *values = indices.as<I>();
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = values[i];
      if (index < -dim || index >= dim) {
        error = "gather_grad index " + std::to_string(index) + " (at position " +
                std::to_string(i) + ") out of range for dimension " + std::to_string(axis) +
                " of size " + std::to_string(dim);
        return false;
      }
      rows[i] = index < 0 ? index + dim : index;
    }
    return true;
  });
}

/// The index positions grouped by row, each group in position order (a stable counting sort):
/// group r is order[starts[r], starts[r + 1]).
void groupByRow(const int64_t *rows, int64_t count, int64_t dim, int64_t *starts, int64_t *order) {
  std::fill(starts, starts + dim + 1, 0);
  for (int64_t i = 0; i < count; ++i)
    ++starts[rows[i] + 1];
  for (int64_t r = 0; r < dim; ++r)
    starts[r + 1] += starts[r];
  // starts[r] serves as group r's cursor and ends at group r's end, which is group r + 1's
  // start: shifting the bounds back afterwards saves an array of cursors.
  for (int64_t i = 0; i < count; ++i)
    order[starts[rows[i]]++] = i;
  for (int64_t r = dim - 1; r > 0; --r)
    starts[r] = starts[r - 1];
  starts[0] = 0;
}

/// sums[j] += source[j] in f32.
template <typename T> void addRow(const T *source, float *sums, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    sums[j] += Element<T>::load(source[j]);
}

bool runGatherGrad(KernelContext &context, const KernelCall &call) {
  std::string error;
  const TensorView &grad = call.inputs[0], &indices = call.inputs[1], &result = call.outputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  WorkspaceCarver carver(call);
  GatherGradScratch scratch = carveGatherGrad(call, carver);
  if (!carver.fits(context))
    return false;
  GatherGradTasks tasks(call);
  int64_t dim = tasks.dim, count = tasks.count, inner = tasks.inner;
  if (!validateIndices(indices, axis, dim, scratch.rows, error))
    return context.fail(error);
  if (result.numElements() == 0)
    return true;
  groupByRow(scratch.rows, count, dim, scratch.starts, scratch.order);
  const int64_t *starts = scratch.starts, *order = scratch.order;
  visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = grad.as<T>();
    T *dx = result.as<T>();
    // Tasks are summed in the f32 result itself or in an f32 row rounded once.
    parallelForSlots(0, tasks.tasks(), tasks.grain, [&](int64_t slot, int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        int64_t o = task / dim, row = task % dim;
        T *destination = dx + task * inner;
        float *sums;
        if constexpr (std::is_same_v<T, float>)
          sums = destination;
        else
          sums = scratch.sums + slot * inner;
        std::fill(sums, sums + inner, 0.0f);
        for (int64_t k = starts[row]; k < starts[row + 1]; ++k)
          addRow(dy + (o * count + order[k]) * inner, sums, inner);
        if constexpr (!std::is_same_v<T, float>)
          for (int64_t j = 0; j < inner; ++j)
            destination[j] = Element<T>::store(sums[j]);
      }
    });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// slice_grad
//===----------------------------------------------------------------------===//

bool runSliceGrad(KernelContext &, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  std::vector<int64_t> starts, steps;
  attributesOf(call).getInts("starts", starts);
  attributesOf(call).getInts("steps", steps);
  // A slice takes distinct positions: one as large as the result takes them all.
  if (grad.numElements() < result.numElements()) {
    auto *bytes = static_cast<char *>(result.data);
    parallelFor(0, static_cast<int64_t>(result.sizeBytes()), kElementwiseGrain * 8,
                [&](int64_t begin, int64_t end) { std::memset(bytes + begin, 0, end - begin); });
  }
  if (grad.numElements() == 0)
    return true;
  Shape resultStrides = contiguousStrides(result.shape), strides;
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) {
    base += starts[d] * resultStrides[d];
    strides.push_back(boundedSliceStep(steps[d], result.shape[d]) * resultStrides[d]);
  }
  StridedLayout<1> layout(grad.shape, {strides});
  visitBits(grad.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = grad.as<T>();
    T *dx = result.as<T>() + base;
    int64_t stride = layout.innerStride(0);
    parallelFor(0, layout.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      layout.forEachRun(begin, end,
                        [&](int64_t out, const std::array<int64_t, 1> &offsets, int64_t count) {
                          T *to = dx + offsets[0];
                          if (stride == 1)
                            std::memcpy(to, dy + out, count * sizeof(T));
                          else
                            for (int64_t i = 0; i < count; ++i)
                              to[i * stride] = dy[out + i];
                        });
    });
  });
  return true;
}

} // namespace

void addIndexingBackwardKernels(KernelRuns &table) {
  table["gather_grad"] = &runGatherGrad;
  table["slice_grad"] = &runSliceGrad;
}

} // namespace memc::kernels
