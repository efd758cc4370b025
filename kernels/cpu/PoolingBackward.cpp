//===- PoolingBackward.cpp - max_pool_grad and avg_pool_grad --------------===//
//
// Each (image, channel) plane is independent: planes spread over threads, and within a plane
// the output positions are visited in order, so overlapping windows add up deterministically.
// Sums run in f32, into the output plane or (f16/bf16) into f32 scratch rounded once.
//
// max_pool_grad recomputes each window's argmax as max_pool picks its maximum (MaxPoolRuns.h:
// PyTorch's rule, runs of windows side by side in vector lanes), then routes the gradients in
// output order, so the sums are the same to the bit as a window at a time. Padding is never
// selected; a window entirely in the padding (memc allows pads PyTorch rejects) routes its
// gradient nowhere. avg_pool_grad spreads grad / divisor over the window's taps inside the
// input, with the forward kernel's divisor. max_pool_grad_argmax routes by the window taps that
// max_pool_with_argmax saved, visiting the outputs in the same order.
//
// Workspace: for an f16/bf16 result, one f32 input plane per slot (planes run in at most
// kMaxWorkspaceSlots pieces); none for f32.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/MaxPoolRuns.h"
#include "kernels/cpu/PoolWindows.h"
#include "kernels/cpu/PoolingBackwardWorkspace.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/WindowTapIndex.h"

#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

/// Runs addPlane(plane, sums) for every (image, channel) plane over threads: `sums` is the
/// plane of the f32 result, or the slot's plane of `scratch` (carvePlanes) that is rounded into
/// the result afterwards, zeroed either way.
template <typename T, typename AddPlane>
void forEachResultPlane(const TensorView &result, const PoolWindows &windows, float *scratch,
                        AddPlane addPlane) {
  int64_t inSize = windows.inputPlaneSize();
  T *y = result.as<T>();
  parallelForSlots(0, windows.planes(), planeGrain(windows),
                   [&](int64_t slot, int64_t begin, int64_t end) {
                     for (int64_t plane = begin; plane < end; ++plane) {
                       float *sums;
                       if constexpr (std::is_same_v<T, float>)
                         sums = y + plane * inSize;
                       else
                         sums = scratch + slot * inSize;
                       std::fill(sums, sums + inSize, 0.0f);
                       addPlane(plane, sums);
                       if constexpr (!std::is_same_v<T, float>)
                         for (int64_t i = 0; i < inSize; ++i)
                           y[plane * inSize + i] = Element<T>::store(sums[i]);
                     }
                   });
}

bool runMaxPoolGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &input = call.inputs[1], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  float *scratch = carveMaxPoolGrad(call, carver);
  if (!carver.fits(context))
    return false;
  PoolWindows windows(input.shape, grad.shape, attributesOf(call));
  int64_t inSize = windows.inputPlaneSize(), outSize = windows.outputPlaneSize();
  visitFloat(input.dtype, [&](auto inputTag) {
    using T = typename decltype(inputTag)::type;
    visitFloat(grad.dtype, [&](auto gradTag) {
      using G = typename decltype(gradTag)::type;
      const T *x = input.as<T>();
      const G *dy = grad.as<G>();
      forEachResultPlane<T>(result, windows, scratch, [&](int64_t plane, float *sums) {
        const T *in = x + plane * inSize;
        const G *dyPlane = dy + plane * outSize;
        forEachWindowArgmax(windows, in, input.numElements() - plane * inSize,
                            [&](int64_t p, int64_t argmax) {
                              if (argmax >= 0)
                                sums[argmax] += Element<G>::load(dyPlane[p]);
                            });
      });
    });
  });
  return true;
}

/// max_pool_grad_argmax(grad, argmax) -> result: max_pool_grad with the maximum taps that
/// max_pool_with_argmax saved, in the same output order, so the sums are max_pool_grad's.
bool runMaxPoolGradArgmax(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &taps = call.inputs[1], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  float *scratch = carveMaxPoolGradArgmax(call, carver);
  if (!carver.fits(context))
    return false;
  PoolWindows windows(result.shape, grad.shape, attributesOf(call));
  WindowTapIndex tapIndexes(windows);
  int64_t outSize = windows.outputPlaneSize();
  const uint8_t *tapIndex = taps.as<uint8_t>();
  visitFloat(result.dtype, [&](auto resultTag) {
    using T = typename decltype(resultTag)::type;
    visitFloat(grad.dtype, [&](auto gradTag) {
      using G = typename decltype(gradTag)::type;
      const G *dy = grad.as<G>();
      forEachResultPlane<T>(result, windows, scratch, [&](int64_t plane, float *sums) {
        const G *dyPlane = dy + plane * outSize;
        const uint8_t *index = tapIndex + plane * outSize;
        tapIndexes.forEachTapOffset(index, [&](int64_t p, int64_t offset) {
          if (offset >= 0)
            sums[offset] += Element<G>::load(dyPlane[p]);
        });
      });
    });
  });
  return true;
}

bool runAvgPoolGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  float *scratch = carveAvgPoolGrad(call, carver);
  if (!carver.fits(context))
    return false;
  PoolWindows windows(result.shape, grad.shape, attributesOf(call));
  int64_t outSize = windows.outputPlaneSize();
  visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = grad.as<T>();
    forEachResultPlane<T>(result, windows, scratch, [&](int64_t plane, float *sums) {
      windows.forEachWindow([&](int64_t p, const auto &window) {
        int64_t divisor = window.divisor();
        if (divisor == 0)
          return;
        float share = Element<T>::load(dy[plane * outSize + p]) / static_cast<float>(divisor);
        window.forEachTap([&](int64_t offset) { sums[offset] += share; });
      });
    });
  });
  return true;
}

} // namespace

void addPoolingBackwardKernels(KernelRuns &table) {
  table["max_pool_grad"] = &runMaxPoolGrad;
  table["max_pool_grad_argmax"] = &runMaxPoolGradArgmax;
  table["avg_pool_grad"] = &runAvgPoolGrad;
}

} // namespace memc::kernels
