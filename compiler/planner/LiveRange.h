//===- LiveRange.h - what the static memory planner is asked to place ---*- C++ -*-===//
//
// The planner's input: buffers with byte sizes and inclusive live ranges over a linear schedule.
// Steps are whatever the caller numbers them by (only their order matters); two buffers conflict
// when their ranges share a step. This header, like the whole planner, depends on the standard
// library only, so the lowering, the runtime's tests and the benchmarks can all call it.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_LIVERANGE_H
#define MEMC_COMPILER_PLANNER_LIVERANGE_H

#include <cstdint>
#include <vector>

namespace memc::planner {

/// Offsets are multiples of this and sizes are rounded up to it unless the caller says otherwise:
/// 256 bytes covers every vector width and what cudaMalloc guarantees.
constexpr uint64_t kDefaultAlignment = 256;

/// A buffer of `size` bytes that is live at every step in [firstStep, lastStep].
/// Precondition everywhere: firstStep <= lastStep.
struct BufferRequest {
  uint64_t size = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// `target` may occupy exactly `source`'s bytes (same offset): the op at step source.lastStep ==
/// target.firstStep reads `source` and writes `target` in place. The caller decides that the op
/// allows it; the planner decides whether taking the hint pays, and only takes hints whose
/// ranges meet at that one step. Each buffer lends its bytes to at most one target.
struct InPlaceHint {
  int32_t source = 0;
  int32_t target = 0;
};

/// `bytes` rounded up to a multiple of `alignment` (an alignment of 0 counts as 1).
uint64_t alignTo(uint64_t bytes, uint64_t alignment);

/// Whether the two live ranges share a step.
inline bool liveRangesOverlap(const BufferRequest &a, const BufferRequest &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

/// The largest sum of aligned sizes of the buffers live at one step. No placement can use an
/// arena smaller than this unless it takes in-place hints. O(n log n).
uint64_t lowerBound(const std::vector<BufferRequest> &buffers,
                    uint64_t alignment = kDefaultAlignment);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_LIVERANGE_H
