//===- BufferOrderings.h - orders in which greedy placers take buffers --*- C++ -*-===//
//
// Internal to the planner. A greedy placer's result depends mostly on the order it sees the
// buffers in; each function here returns a permutation of all buffer ids. Ties always fall back
// to the buffer id, so every order (and every plan) is deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_BUFFERORDERINGS_H
#define MEMC_COMPILER_PLANNER_BUFFERORDERINGS_H

#include "compiler/planner/OverlapIndex.h"

namespace memc::planner {

/// Largest first, earlier first step among equals: TFLite's arena planner.
std::vector<int32_t> orderBySizeThenStart(const PlanningProblem &problem);
/// Largest first, longer-lived among equals: XLA's "spatial" order.
std::vector<int32_t> orderBySizeThenDuration(const PlanningProblem &problem);
/// Longest-lived first, larger among equals: XLA's "temporal" order.
std::vector<int32_t> orderByDurationThenSize(const PlanningProblem &problem);
/// Largest size x duration first: the buffers that cover the most of the time-memory plane.
std::vector<int32_t> orderByArea(const PlanningProblem &problem);
/// Greedy by breadth (Pisarchyk & Lee 2020): steps by their live bytes, most first; each step's
/// not yet taken buffers by size. Computed without visiting every (step, buffer) pair: a buffer
/// belongs to the step of greatest breadth in its range, found with a sparse table.
std::vector<int32_t> orderByBreadth(const PlanningProblem &problem);
/// Most bytes of overlapping buffers first: the hardest-constrained buffers early.
std::vector<int32_t> orderByConflictBytes(const PlanningProblem &problem, const OverlapIndex &index);
/// Schedule order (first step, then size): what an online allocator sees.
std::vector<int32_t> orderByStart(const PlanningProblem &problem);
/// Reverse schedule order (last step descending, then size): backward passes free in this order.
std::vector<int32_t> orderByEndDescending(const PlanningProblem &problem);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_BUFFERORDERINGS_H
