//===- PoolingBackward.cpp - max_pool_grad and avg_pool_grad --------------===//
//
// Each (image, channel) plane is independent: planes spread over threads, and within a plane
// the output positions are visited in order, so overlapping windows add up deterministically.
// Sums run in f32, into the output plane or (f16/bf16) into f32 scratch rounded once.
//
// max_pool_grad recomputes each window's argmax as PyTorch's max_pool kernels pick it: the
// first maximum, unless a NaN comes later (the last NaN wins), and the first tap inside the
// input when every value is -inf. Padding is never selected; a window entirely in the padding
// (memc allows pads PyTorch rejects) routes its gradient nowhere. avg_pool_grad spreads
// grad / divisor over the window's taps inside the input, with the forward kernel's divisor.
//
// Workspace: for an f16/bf16 result, one f32 input plane per slot (planes run in at most
// kMaxWorkspaceSlots pieces); none for f32.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/PoolWindows.h"
#include "kernels/cpu/ThreadPool.h"

#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

// max_pool_grad(grad, input) -> result: the grad may have its own float type.
bool checkMaxPoolGrad(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 2, 2, 1, error))
    return false;
  const TensorView &grad = call.inputs[0], &input = call.inputs[1];
  return checkDType(grad, kFloatTypes, "grad", error) &&
         checkDType(input, kFloatTypes, "input", error) &&
         checkRankAtLeast(input, 3, "input", error) &&
         checkSameDType(call.outputs[0], input, "result", "input", error) &&
         checkShape(call.outputs[0], input.shape, "result", error) &&
         checkPoolWindows(input, grad, false, attributesOf(call), "grad", error);
}

// avg_pool_grad(grad) -> result, the forward input's shape.
bool checkAvgPoolGrad(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "grad", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         checkRankAtLeast(call.outputs[0], 3, "result", error) &&
         checkPoolWindows(call.outputs[0], call.inputs[0], true, attributesOf(call), "grad", error);
}

/// Planes of the result go in pieces of at least this many.
int64_t planeGrain(const PoolWindows &windows) {
  return std::max<int64_t>(1, kExpensiveGrain / std::max<int64_t>(windows.outputPlaneSize(), 1));
}

/// The f32 planes an f16/bf16 result sums into, one per slot; null for an f32 result.
float *carvePlanes(const TensorView &result, const PoolWindows &windows, WorkspaceCarver &carver) {
  if (result.dtype == DType::F32)
    return nullptr;
  return carver.take<float>(workspaceSlots(0, windows.planes(), planeGrain(windows)) *
                            windows.inputPlaneSize());
}

float *carveMaxPoolGrad(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return nullptr;
  PoolWindows windows(call.inputs[1].shape, call.inputs[0].shape, attributesOf(call));
  return carvePlanes(call.outputs[0], windows, carver);
}

float *carveAvgPoolGrad(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return nullptr;
  PoolWindows windows(call.outputs[0].shape, call.inputs[0].shape, attributesOf(call));
  return carvePlanes(call.outputs[0], windows, carver);
}

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
  std::string error;
  const TensorView &grad = call.inputs[0], &input = call.inputs[1], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  float *scratch = carveMaxPoolGrad(call, carver);
  if (!carver.fits(error))
    return context.fail(error);
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
        std::vector<int64_t> out(windows.rank(), 0), tap(windows.rank());
        for (int64_t p = 0; p < outSize; ++p, windows.next(out)) {
          int64_t argmax = -1;
          float max = -std::numeric_limits<float>::infinity();
          windows.forEachTap(out, tap, [&](int64_t offset) {
            float value = Element<T>::load(in[offset]);
            if (argmax < 0)
              argmax = offset;
            if (value > max || std::isnan(value)) {
              max = value;
              argmax = offset;
            }
          });
          if (argmax >= 0)
            sums[argmax] += Element<G>::load(dy[plane * outSize + p]);
        }
      });
    });
  });
  return true;
}

bool runAvgPoolGrad(KernelContext &context, const KernelCall &call) {
  std::string error;
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  float *scratch = carveAvgPoolGrad(call, carver);
  if (!carver.fits(error))
    return context.fail(error);
  PoolWindows windows(result.shape, grad.shape, attributesOf(call));
  int64_t outSize = windows.outputPlaneSize();
  visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = grad.as<T>();
    forEachResultPlane<T>(result, windows, scratch, [&](int64_t plane, float *sums) {
      std::vector<int64_t> out(windows.rank(), 0), tap(windows.rank());
      for (int64_t p = 0; p < outSize; ++p, windows.next(out)) {
        int64_t divisor = windows.divisor(out);
        if (divisor == 0)
          continue;
        float share = Element<T>::load(dy[plane * outSize + p]) / static_cast<float>(divisor);
        windows.forEachTap(out, tap, [&](int64_t offset) { sums[offset] += share; });
      }
    });
  });
  return true;
}

} // namespace

void addPoolingBackwardKernels(KernelTable &table) {
  table["max_pool_grad"] =
      Kernel{&checkMaxPoolGrad, &runMaxPoolGrad, &carvedWorkspaceBytes<carveMaxPoolGrad>};
  table["avg_pool_grad"] =
      Kernel{&checkAvgPoolGrad, &runAvgPoolGrad, &carvedWorkspaceBytes<carveAvgPoolGrad>};
}

} // namespace memc::kernels
