//===- EventOrderAllocator.h - a heap simulated along the schedule ------*- C++ -*-===//
//
// Internal to the planner. Replays the schedule: at each step the buffers that died before it
// are freed (merging with free neighbours), then the buffers it creates are allocated from the
// free chunks, in the order the caller listed them. This is the classic online allocator XLA's
// HeapSimulator drives; it never looks ahead, which makes it O(n log n) and the only strategy
// whose cost does not grow with how many buffers are live together.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_EVENTORDERALLOCATOR_H
#define MEMC_COMPILER_PLANNER_EVENTORDERALLOCATOR_H

#include "compiler/planner/GapPlacer.h"

namespace memc::planner {

/// Allocates in schedule order, each buffer into the smallest free chunk that fits (the lowest
/// of equal ones), or on top of the heap when none does. The arena is the heap's high-water
/// mark. O(n log n).
Placement allocateInScheduleOrder(const PlanningProblem &problem);

/// The same allocator run from the last step to the first: buffers are allocated at their last
/// step and freed before their first. Long-lived buffers that end together (gradients kept for
/// the optimizer) are then packed first instead of filling the holes of earlier buffers.
Placement allocateInReverseScheduleOrder(const PlanningProblem &problem);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_EVENTORDERALLOCATOR_H
