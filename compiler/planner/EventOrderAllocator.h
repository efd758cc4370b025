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

/// Allocates in schedule order. GapFit::Best takes the smallest free chunk that fits and
/// GapFit::First the lowest one; with none, the buffer goes on top of the heap. The arena is the
/// heap's high-water mark.
Placement allocateInScheduleOrder(const PlanningProblem &problem, GapFit fit);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_EVENTORDERALLOCATOR_H
