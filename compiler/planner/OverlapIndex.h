//===- OverlapIndex.h - which buffers are live together with a buffer ---*- C++ -*-===//
//
// Internal to the planner. The gap-finding placers ask, for every buffer, which other buffers
// share a step with it. Scanning all buffers would make a plan O(n^2); this index answers in time
// proportional to the answer: the buffers live at the first step of the range come from a
// segment tree over steps (a range containing a point is stored in exactly one node on that
// point's root path), the others start inside the range and form one run of the start-sorted list.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_OVERLAPINDEX_H
#define MEMC_COMPILER_PLANNER_OVERLAPINDEX_H

#include "compiler/planner/PlanningProblem.h"

namespace memc::planner {

class OverlapIndex {
public:
  explicit OverlapIndex(const PlanningProblem &problem);

  /// Calls visit(other) once for every buffer other than `id` whose range overlaps id's.
  template <typename Visit>
  void forEachOverlapping(int32_t id, Visit &&visit) const {
    int32_t first = problem.start[id];
    for (int32_t node = leaves + first; node >= 1; node >>= 1)
      for (int32_t k = nodeBegin[node]; k < nodeBegin[node + 1]; ++k)
        if (nodeItems[k] != id)
          visit(nodeItems[k]);
    int32_t last = problem.end[id];
    for (int32_t k = startsAfter[first]; k < startsAfter[last]; ++k)
      visit(byStart[k]);
  }

  /// How many other buffers overlap `id`: the cost of forEachOverlapping, O(1).
  int64_t overlapCount(int32_t id) const;
  /// Sum of the sizes of the other buffers overlapping `id`, O(1).
  uint64_t overlapBytes(int32_t id) const;

private:
  const PlanningProblem &problem;
  int32_t leaves = 1;
  std::vector<int32_t> nodeBegin, nodeItems; // segment tree nodes, CSR
  std::vector<int32_t> byStart;              // buffer ids sorted by start
  std::vector<int32_t> startsAfter;          // point p -> first position in byStart with start > p
  std::vector<int64_t> endsBefore;           // point p -> buffers with end < p
  std::vector<uint64_t> bytesStartingAfter, bytesEndingBefore;
  uint64_t totalBytes = 0;
};

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_OVERLAPINDEX_H
