//===- GapPlacer.h - greedy placement into the gaps of earlier buffers ---*- C++ -*-===//
//
// Internal to the planner. The engine behind TFLite's greedy-by-size, XLA's global
// decreasing-size best-fit and most of memc's own strategies: buffers are taken in a given
// order, and each goes into a gap between the buffers already placed that share a step with it,
// or on top of them when no gap is large enough.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_GAPPLACER_H
#define MEMC_COMPILER_PLANNER_GAPPLACER_H

#include "compiler/planner/OverlapIndex.h"

#include <limits>

namespace memc::planner {

enum class GapFit {
  /// The lowest gap that is large enough (TFLite Micro's greedy planner).
  First,
  /// The smallest gap that is large enough, the lowest of equal ones (XLA, TFLite's arena).
  Best,
};

struct Placement {
  std::vector<uint64_t> offsets;
  std::vector<int32_t> inPlaceSource; // empty unless a hint was taken
  uint64_t arenaBytes = 0;
  /// Set when the placement stopped because it could no longer beat `abandonAbove`.
  bool abandoned = false;
};

class GapPlacer {
public:
  GapPlacer(const PlanningProblem &problem, const OverlapIndex &index)
      : problem(problem), index(index) {}

  /// Places every buffer in `order` (a permutation of all ids). With `takeHints`, a buffer goes
  /// to an in-place partner's offset when that is free and raises the arena no more than the gap
  /// would. Stops early, marking the result abandoned, once the arena exceeds `abandonAbove`.
  Placement place(const std::vector<int32_t> &order, GapFit fit, bool takeHints,
                  uint64_t abandonAbove = std::numeric_limits<uint64_t>::max());

  /// Overlapping buffers visited by all place() calls so far: the deterministic measure of work
  /// that memc's planner budgets its search with.
  uint64_t visits() const { return visitCount; }

private:
  struct Occupied {
    uint64_t begin, end;
    int32_t id;
  };

  uint64_t findGap(uint64_t size, GapFit fit) const;
  bool isFree(uint64_t begin, uint64_t size, int32_t ignore) const;
  /// The in-place partner whose offset `id` should take, or -1.
  int32_t choosePartner(int32_t id, const Placement &placement, uint64_t gapEnd,
                        const std::vector<char> &lent, const std::vector<char> &borrowed) const;

  const PlanningProblem &problem;
  const OverlapIndex &index;
  std::vector<Occupied> occupied; // placed buffers overlapping the current one, by offset
  uint64_t visitCount = 0;
};

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_GAPPLACER_H
