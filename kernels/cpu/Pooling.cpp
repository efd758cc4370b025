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

/// Pools the window of output position `out` over one plane; `tap` is scratch of the rank.
template <bool Average, typename T>
float pool(const PoolWindows &windows, const T *plane, const std::vector<int64_t> &out,
           std::vector<int64_t> &tap) {
  if constexpr (Average) {
    float sum = 0.0f;
    windows.forEachTap(out, tap, [&](int64_t offset) { sum += Element<T>::load(plane[offset]); });
    int64_t divisor = windows.divisor(out);
    return divisor == 0 ? 0.0f : sum / static_cast<float>(divisor);
  } else {
    float max = -std::numeric_limits<float>::infinity();
    windows.forEachTap(out, tap, [&](int64_t offset) {
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
                  std::vector<int64_t> out(windows.rank()), tap(windows.rank());
                  for (int64_t plane = begin; plane < end; ++plane) {
                    std::fill(out.begin(), out.end(), 0);
                    for (int64_t p = 0; p < outSize; ++p, windows.next(out))
                      y[plane * outSize + p] =
                          Element<T>::store(pool<Average>(windows, x + plane * inSize, out, tap));
                  }
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
