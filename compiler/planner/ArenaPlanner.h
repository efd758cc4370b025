//===- ArenaPlanner.h - memc's static memory planner --------------------*- C++ -*-===//
//
// Places every buffer of a linear schedule at an offset in one arena so that buffers live at a
// common step never share bytes, aiming for an arena close to the lower bound (the most bytes
// live at one step). The lowering calls planArena on the live ranges of the training step, and
// verifyAssignment on its result, before it writes the plan.
//
// How, in three phases that share one work budget:
//  1. the schedule-order best-fit allocator, forward and backward in time (O(n log n));
//  2. a portfolio of greedy gap placements: the baselines' configurations first (XLA's spatial
//     and temporal best-fit, TFLite's greedy by size), then greedy by breadth, by conflict
//     bytes, by size x duration, by start and by end, each with best- and first-fit, each with
//     and without in-place hints when there are hints;
//  3. squeaky-wheel search from the best three placements: place again asking for a smaller
//     arena, and move the buffer at which that fails to the front of the order, until 500
//     attempts in a row fail.
// Every phase stops once the arena reaches the lower bound (with hints, a bound that credits
// every hint). The budget counts work units (about 3-5 ns each), never wall time, so a plan is a
// pure function of its input.
//
// Cost: building the problem is O(n log n); one greedy pass costs
// min(sum over buffers b of overlap(b) log overlap(b), n^2 / 3) units, overlap(b) = how many
// buffers share a step with b. When even one pass does not fit the budget (a 100k-buffer
// training step whose activations are all live at the forward/backward boundary) only phase 1
// runs, which on such nested lifetimes is typically what reaches the bound anyway.
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
  /// Work budget in units of about 3-5 ns (so the default is about half a second at most). The
  /// O(n log n) schedule-order allocators always run; a gap-placing pass runs only if its
  /// estimated cost fits in what is left. 0 runs only the allocators.
  uint64_t effort = 100'000'000;
};

/// memc's planner. The result passes verifyAssignment (with the same alignment and hints), and
/// its arena is never larger than planGreedyBySize's or planHeapSimulatorBestFit's on the same
/// requests when the budget covers three greedy passes (it runs their configurations first).
Assignment planArena(const std::vector<BufferRequest> &buffers, const PlanOptions &options = {});

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_ARENAPLANNER_H
