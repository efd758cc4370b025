//===- MaxPoolRuns.cpp - max_pool's argmax over runs of windows -----------===//
//
// GCC's generic vectors of kMaxPoolLanes f32 / i32 lanes: the x86-64-v3 and v4 clones compare
// and blend whole vectors, the baseline clone lane by lane.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/MaxPoolRuns.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

namespace memc::kernels {

namespace {

using LaneFloats = float __attribute__((vector_size(kMaxPoolLanes * sizeof(float))));
using LaneInts = int32_t __attribute__((vector_size(kMaxPoolLanes * sizeof(int32_t))));

/// The argmax offsets of a run's windows by PyTorch's rule (MaxPoolRuns.h): the first tap, then
/// each tap greater or NaN (from a maximum of -inf, the first tap is that and keeps an all -inf
/// window on it), as selects, not branches. WindowStep is the column stride when known at compile
/// time (1, 2), else 0 (run.windowStep). An f32 tap's lanes at stride 1 are one load, at stride 2
/// the even lanes of two (reading one element past the last lane: `limit`, the elements readable
/// from `in`, says whether that is in bounds).
template <int64_t WindowStep, typename T>
MEMC_VECTOR_CLONES void runArgmax(const T *in, int64_t limit, const PoolWindows::TapRun &run,
                                  int32_t *argmax) {
  int64_t step = WindowStep > 0 ? WindowStep : run.windowStep;
  int64_t lastRead = run.first + (run.windows - 1) * step + (run.rows - 1) * run.rowStep +
                     (run.columns - 1) * run.columnStep;
  bool pairs = std::is_same_v<T, float> && WindowStep == 2 && lastRead + 1 < limit;
  LaneInts laneOffsets;
  for (int64_t lane = 0; lane < kMaxPoolLanes; ++lane)
    laneOffsets[lane] = static_cast<int32_t>(lane * step);
  // Blocks of kMaxPoolLanes windows, the last one ending at the run's end (overlapping the one
  // before where kMaxPoolLanes does not divide the run), two at a time: two independent
  // compare-select chains hide each other's latency. With an odd count of blocks the last pair
  // is the last block twice.
  int64_t lastBlock = run.windows - kMaxPoolLanes;
  for (int64_t block = 0; block < run.windows; block += 2 * kMaxPoolLanes) {
    int64_t firsts[2] = {run.first + std::min(block, lastBlock) * step,
                         run.first + std::min(block + kMaxPoolLanes, lastBlock) * step};
    LaneFloats max[2];
    LaneInts arg[2];
    for (int pair = 0; pair < 2; ++pair) {
      max[pair] = LaneFloats{} - std::numeric_limits<float>::infinity();
      arg[pair] = static_cast<int32_t>(firsts[pair]) + laneOffsets;
    }
    for (int64_t r = 0; r < run.rows; ++r)
      for (int64_t c = 0; c < run.columns; ++c)
        for (int pair = 0; pair < 2; ++pair) {
          int64_t offset = firsts[pair] + r * run.rowStep + c * run.columnStep;
          LaneFloats values;
          if constexpr (std::is_same_v<T, float> && WindowStep == 1) {
            std::memcpy(&values, in + offset, sizeof values);
          } else if (pairs) {
            LaneFloats low, high;
            std::memcpy(&low, in + offset, sizeof low);
            std::memcpy(&high, in + offset + kMaxPoolLanes, sizeof high);
            values = __builtin_shufflevector(low, high, 0, 2, 4, 6, 8, 10, 12, 14);
          } else {
            for (int64_t lane = 0; lane < kMaxPoolLanes; ++lane)
              values[lane] = Element<T>::load(in[offset + lane * step]);
          }
          LaneInts replaces = (values > max[pair]) | (values != values);
          max[pair] = replaces ? values : max[pair];
          arg[pair] = replaces ? static_cast<int32_t>(offset) + laneOffsets : arg[pair];
        }
    for (int pair = 0; pair < 2; ++pair)
      std::memcpy(argmax + (firsts[pair] - run.first) / step, &arg[pair], sizeof arg[pair]);
  }
}

/// runArgmax for the run's column stride.
template <typename T>
void runArgmaxOfStride(const T *in, int64_t limit, const PoolWindows::TapRun &run,
                       int32_t *argmax) {
  if (run.windowStep == 1)
    runArgmax<1>(in, limit, run, argmax);
  else if (run.windowStep == 2)
    runArgmax<2>(in, limit, run, argmax);
  else
    runArgmax<0>(in, limit, run, argmax);
}

} // namespace

void maxPoolRunArgmax(const float *in, int64_t limit, const PoolWindows::TapRun &run,
                      int32_t *argmax) {
  runArgmaxOfStride(in, limit, run, argmax);
}

void maxPoolRunArgmax(const Half *in, int64_t limit, const PoolWindows::TapRun &run,
                      int32_t *argmax) {
  runArgmaxOfStride(in, limit, run, argmax);
}

void maxPoolRunArgmax(const BFloat16 *in, int64_t limit, const PoolWindows::TapRun &run,
                      int32_t *argmax) {
  runArgmaxOfStride(in, limit, run, argmax);
}

} // namespace memc::kernels
