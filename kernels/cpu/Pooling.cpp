//===- Pooling.cpp - max_pool and avg_pool over N-d windows ---------------===//
//
// Each (image, channel) plane is pooled independently, planes spread over threads, window by
// window (PoolWindows.h).
//
// max_pool treats padding as -inf (a window entirely in padding gives -inf) and propagates
// NaN, as PyTorch does: each window's value is its argmax tap's (MaxPoolRuns.h: the rule
// max_pool_grad routes by, runs of windows side by side in vector lanes). avg_pool divides, as
// PyTorch does, by the taps inside the padded input (count_include_pad; a ceil_mode window
// hanging past the end padding is clipped there) or by the taps inside the input itself; a
// window with nothing to count gives 0.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/MaxPoolRuns.h"
#include "kernels/cpu/PoolWindows.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/WindowTapIndex.h"

#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

/// Averages one window (PoolWindows::forEachWindow) of a plane.
template <typename T, typename Window> float average(const Window &window, const T *plane) {
  float sum = 0.0f;
  window.forEachTap([&](int64_t offset) { sum += Element<T>::load(plane[offset]); });
  int64_t divisor = window.divisor();
  return divisor == 0 ? 0.0f : sum / static_cast<float>(divisor);
}

/// The value max_pool gives a window whose maximum tap is at `argmax` of input plane `in`.
template <typename T> T maxAt(const T *in, int64_t argmax) {
  return argmax < 0 ? Element<T>::store(-std::numeric_limits<float>::infinity())
                    : Element<T>::store(Element<T>::load(in[argmax]));
}

/// Pools plane `plane` of `x` into `y`'s, and tells `alsoArgmax(p, argmax)` each output's
/// maximum tap (its offset in the plane, -1 for none).
template <typename T, typename AlsoArgmax>
void maxPoolPlane(const PoolWindows &windows, const T *x, int64_t readable, T *y, int64_t plane,
                  AlsoArgmax alsoArgmax) {
  int64_t inSize = windows.inputPlaneSize(), outSize = windows.outputPlaneSize();
  const T *in = x + plane * inSize;
  T *out = y + plane * outSize;
  forEachWindowArgmax(windows, in, readable - plane * inSize, [&](int64_t p, int64_t argmax) {
    out[p] = maxAt(in, argmax);
    alsoArgmax(p, argmax);
  });
}

template <bool Average> bool runPool(KernelContext &, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  PoolWindows windows(input.shape, output.shape, attributesOf(call));
  int64_t inSize = windows.inputPlaneSize(), outSize = windows.outputPlaneSize();
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = output.as<T>();
    parallelFor(0, windows.planes(), std::max<int64_t>(1, kExpensiveGrain / outSize),
                [&](int64_t begin, int64_t end) {
                  for (int64_t plane = begin; plane < end; ++plane) {
                    if constexpr (Average)
                      windows.forEachWindow([&](int64_t p, const auto &window) {
                        y[plane * outSize + p] =
                            Element<T>::store(average(window, x + plane * inSize));
                      });
                    else
                      maxPoolPlane(windows, x, input.numElements(), y, plane,
                                   [](int64_t, int64_t) {});
                  }
                });
  });
  return true;
}

/// max_pool(input) -> (result, argmax): max_pool's result, and each output's maximum tap as
/// its u8 index in the whole window (WindowTapIndex.h; 0 for a window entirely in the
/// padding, whose tap 0 is padding), for max_pool_grad_argmax.
bool runMaxPoolWithArgmax(KernelContext &, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0], &taps = call.outputs[1];
  if (output.numElements() == 0)
    return true;
  PoolWindows windows(input.shape, output.shape, attributesOf(call));
  WindowTapIndex tapIndexes(windows);
  int64_t outSize = windows.outputPlaneSize();
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = output.as<T>();
    uint8_t *tapIndex = taps.as<uint8_t>();
    parallelFor(0, windows.planes(), std::max<int64_t>(1, kExpensiveGrain / outSize),
                [&](int64_t begin, int64_t end) {
                  for (int64_t plane = begin; plane < end; ++plane) {
                    uint8_t *index = tapIndex + plane * outSize;
                    maxPoolPlane(windows, x, input.numElements(), y, plane,
                                 [&](int64_t p, int64_t argmax) {
                                   index[p] = argmax < 0 ? 0 : tapIndexes.tapIndexOf(p, argmax);
                                 });
                  }
                });
  });
  return true;
}

} // namespace

void addPoolingKernels(KernelRuns &table) {
  table["max_pool"] = &runPool<false>;
  table["max_pool_with_argmax"] = &runMaxPoolWithArgmax;
  table["avg_pool"] = &runPool<true>;
}

} // namespace memc::kernels
