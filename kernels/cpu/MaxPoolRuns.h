//===- MaxPoolRuns.h - max_pool's argmax over runs of windows ----*- C++ -*-===//
//
// max_pool and max_pool_grad pick each window's maximum tap as PyTorch does: the first maximum,
// unless a NaN comes later (the last NaN wins), and the first tap inside the input when every
// value is -inf. A window at a time, that is a chain of dependent compares whose branches random
// data mispredicts; the runs of PoolWindows::forEachWindowInRuns (2-D windows wholly inside the
// input's columns) are searched here 8 windows to a vector instead, with selects. The kernels
// read the values (max_pool) or route the gradient (max_pool_grad) through the offsets.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_MAXPOOLRUNS_H
#define MEMC_KERNELS_CPU_MAXPOOLRUNS_H

#include "kernels/Float16.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/PoolWindows.h"

#include <cstdint>
#include <limits>

namespace memc::kernels {

/// A run's windows are searched kMaxPoolLanes side by side (8 f32 lanes: one AVX register); the
/// kernels ask forEachWindowInRuns for runs of kMaxPoolLanes to kMaxPoolRun windows.
constexpr int64_t kMaxPoolLanes = 8, kMaxPoolRun = 64;

/// The offset in input plane `in` of the maximum tap of one window (PoolWindows::forEachWindow),
/// by the same rule; -1 for a window entirely in the padding. For the windows beside the runs.
template <typename T, typename Window> int64_t windowArgmax(const Window &window, const T *in) {
  int64_t argmax = -1;
  float max = -std::numeric_limits<float>::infinity();
  window.forEachTap([&](int64_t offset) {
    float value = Element<T>::load(in[offset]);
    bool replaces = (argmax < 0) | (value > max) | (value != value);
    max = replaces ? value : max;
    argmax = replaces ? offset : argmax;
  });
  return argmax;
}

/// The offset in its input plane `in` of each window's maximum tap, into argmax[0 ..
/// run.windows); `limit` is the elements readable from `in` (the plane and the planes after it).
void maxPoolRunArgmax(const float *in, int64_t limit, const PoolWindows::TapRun &run,
                      int32_t *argmax);
void maxPoolRunArgmax(const Half *in, int64_t limit, const PoolWindows::TapRun &run,
                      int32_t *argmax);
void maxPoolRunArgmax(const BFloat16 *in, int64_t limit, const PoolWindows::TapRun &run,
                      int32_t *argmax);

/// Calls visit(p, argmax) for every output position p of input plane `in` (of the planes
/// `limit` elements readable from it) in order, with the offset of its window's maximum tap in
/// the plane, -1 for a window entirely in the padding: runs of windows in vector lanes, the rest
/// a window at a time. The one argmax loop of max_pool, max_pool_with_argmax and max_pool_grad.
template <typename T, typename Visit>
void forEachWindowArgmax(const PoolWindows &windows, const T *in, int64_t limit, Visit &&visit) {
  auto visitWindow = [&](int64_t p, const auto &window) { visit(p, windowArgmax(window, in)); };
  // The runs' argmax offsets are int32 lanes.
  if (windows.inputPlaneSize() > std::numeric_limits<int32_t>::max()) {
    windows.forEachWindow(visitWindow);
    return;
  }
  windows.forEachWindowInRuns<kMaxPoolLanes, kMaxPoolRun>(
      visitWindow, [&](int64_t p, const PoolWindows::TapRun &run) {
        int32_t argmax[kMaxPoolRun];
        if (run.rows > 0)
          maxPoolRunArgmax(in, limit, run, argmax);
        for (int64_t w = 0; w < run.windows; ++w)
          visit(p + w, run.rows > 0 ? argmax[w] : int64_t{-1});
      });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_MAXPOOLRUNS_H
