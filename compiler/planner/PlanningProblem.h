//===- PlanningProblem.h - the requests in the form every planner uses ---*- C++ -*-===//
//
// Internal to the planner. Sizes are aligned once, steps are replaced by their ranks among all
// first and last steps (conflicts depend only on the order of steps, and ranks index arrays), and
// in-place hints that cannot be taken (bad ids, ranges that do not meet) are dropped.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_PLANNINGPROBLEM_H
#define MEMC_COMPILER_PLANNER_PLANNINGPROBLEM_H

#include "compiler/planner/LiveRange.h"

#include <vector>

namespace memc::planner {

struct PlanningProblem {
  std::vector<uint64_t> size;        // aligned bytes
  std::vector<int32_t> start, end;   // inclusive, as ranks in [0, numPoints)
  std::vector<int64_t> duration;     // lastStep - firstStep + 1, in the caller's steps
  int32_t numPoints = 0;
  uint64_t lowerBound = 0;
  /// No placement, even one taking every hint, can use less: at each step the live bytes less,
  /// for every hint whose buffers meet there, the smaller of the two (their most shared bytes).
  /// Equal to lowerBound without hints.
  uint64_t inPlaceLowerBound = 0;

  /// In-place partners of buffer b: partner[hintBegin[b] .. hintBegin[b + 1]); partnerIsSource
  /// says whether the partner lends its bytes to b (else b lends to the partner).
  std::vector<int32_t> hintBegin, partner;
  std::vector<char> partnerIsSource;

  int32_t numBuffers() const { return static_cast<int32_t>(size.size()); }
};

PlanningProblem buildPlanningProblem(const std::vector<BufferRequest> &buffers,
                                     uint64_t alignment,
                                     const std::vector<InPlaceHint> &hints = {});

/// Live bytes at every point of the problem (aligned sizes).
std::vector<uint64_t> liveBytesPerPoint(const PlanningProblem &problem);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_PLANNINGPROBLEM_H
