//===- ArenaPlanner.h - memc's static memory planner --------------------*- C++ -*-===//
//
// Places every buffer of a linear schedule at an offset in one arena so that buffers live at a
// common step never share bytes, aiming for an arena close to the lower bound (the most bytes
// live at one step). The lowering calls planArena on the live ranges of the training step, and
// verifyAssignment on its result, before it writes the plan.
//
// How: a portfolio of greedy placements (several buffer orders, each with best-fit and first-fit
// gap choice, plus the schedule-order allocator), then a search that re-orders the buffers that
// end highest in the best placement and places again. The search is bounded by a work budget
// counted in buffer visits, never by a clock, so a plan is a pure function of its input.
//
// Cost: building the problem is O(n log n); one greedy pass is O(sum over buffers b of
// overlap(b) * log overlap(b)), overlap(b) = how many buffers share a step with b. Passes run
// while the budget lasts, so when buffers overlap massively (a 100k-buffer graph whose
// activations all live at the forward/backward boundary) the planner falls back to the
// O(n log n) schedule-order allocators.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_ARENAPLANNER_H
#define MEMC_COMPILER_PLANNER_ARENAPLANNER_H

#include "compiler/planner/Assignment.h"

namespace memc::planner {

struct PlanOptions {
  uint64_t alignment = kDefaultAlignment;
  /// In-place opportunities; the planner takes a hint when the partner's offset is free for the
  /// whole range and taking it raises the arena no more than the best gap would.
  std::vector<InPlaceHint> inPlaceHints;
  /// Work budget in buffer visits (a visit costs a few nanoseconds). The O(n log n)
  /// schedule-order allocators always run; a gap-placing pass runs only if its cost fits in what
  /// is left.
  uint64_t effort = 200'000'000;
};

/// memc's planner. The returned assignment never has a larger arena than planGreedyBySize or
/// planHeapSimulatorBestFit on the same requests whenever the budget covers their passes (it
/// runs them first), and always passes verifyAssignment.
Assignment planArena(const std::vector<BufferRequest> &buffers, const PlanOptions &options = {});

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_ARENAPLANNER_H
