//===- Pooling.cpp - max_pool and avg_pool over N-d windows ---------------===//
//
// Each (image, channel) plane is pooled independently, planes spread over threads, window by
// window (PoolWindows.h).
//
// max_pool treats padding as -inf (a window entirely in padding gives -inf) and propagates
// NaN, as PyTorch does. avg_pool divides, as PyTorch does, by the taps inside the padded input
// (count_include_pad; a ceil_mode window hanging past the end padding is clipped there) or by
// the taps inside the input itself; a window with nothing to count gives 0.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/PoolWindows.h"
#include "kernels/cpu/ThreadPool.h"

#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

/// Pools one window (PoolWindows::forEachWindow) of a plane.
template <bool Average, typename T, typename Window>
float pool(const Window &window, const T *plane) {
  if constexpr (Average) {
    float sum = 0.0f;
    window.forEachTap([&](int64_t offset) { sum += Element<T>::load(plane[offset]); });
    int64_t divisor = window.divisor();
    return divisor == 0 ? 0.0f : sum / static_cast<float>(divisor);
  } else {
    float max = -std::numeric_limits<float>::infinity();
    window.forEachTap([&](int64_t offset) {
      float value = Element<T>::load(plane[offset]);
      if (value > max || std::isnan(value))
        max = value;
    });
    return max;
  }
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
                  for (int64_t plane = begin; plane < end; ++plane)
                    windows.forEachWindow([&](int64_t p, const auto &window) {
                      y[plane * outSize + p] =
                          Element<T>::store(pool<Average>(window, x + plane * inSize));
                    });
                });
  });
  return true;
}

} // namespace

void addPoolingKernels(KernelRuns &table) {
  table["max_pool"] = &runPool<false>;
  table["avg_pool"] = &runPool<true>;
}

} // namespace memc::kernels
