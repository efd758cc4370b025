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
  /// Set when the placement stopped because it could no longer beat `abandonAbove`, at
  /// buffer `stoppedAt`: the first one that found no room below that.
  bool abandoned = false;
  int32_t stoppedAt = -1;
};

/// Finding the placed buffers that overlap the next one, sorted by offset, is most of the work.
/// Two ways give the same answer: query the overlap index and sort what it returns
/// (O(overlap log overlap) per buffer), or scan all placed buffers kept sorted by offset, as
/// TFLite does (O(placed) per buffer, but sequential and without sorting). The constructor
/// picks the cheaper one for the problem.
class GapPlacer {
public:
  GapPlacer(const PlanningProblem &problem, const OverlapIndex &index);

  /// Places every buffer in `order` (a permutation of all ids). With `takeHints`, a buffer goes
  /// to an in-place partner's offset when that is free and raises the arena no more than the gap
  /// would. Stops early, marking the result abandoned, once the arena exceeds `abandonAbove`.
  Placement place(const std::vector<int32_t> &order, GapFit fit, bool takeHints,
                  uint64_t abandonAbove = std::numeric_limits<uint64_t>::max());

  /// Work done by all place() calls so far, in units of about a nanosecond: the deterministic
  /// measure memc's planner budgets its search with.
  uint64_t work() const { return workDone; }
  /// Estimated work of one place() call.
  uint64_t workPerPass() const { return passWork; }

private:
  struct Occupied {
    uint64_t begin, end;
    int32_t id;
  };
  struct Placed {
    uint64_t begin, end;
    int32_t first, last, id;
  };

  struct Range {
    uint64_t begin, end;
  };

  /// Fills `occupied` with the placed buffers overlapping `id`, sorted by offset.
  void gatherFromIndex(int32_t id);
  void gatherByScan(int32_t id);
  uint64_t findGap(uint64_t size, GapFit fit) const;
  bool isFree(uint64_t begin, uint64_t size, int32_t ignore) const;
  /// The in-place partner whose offset `id` should take, or -1.
  int32_t choosePartner(int32_t id, const Placement &placement, uint64_t gapEnd,
                        const std::vector<char> &lent, const std::vector<char> &borrowed) const;

  const PlanningProblem &problem;
  const OverlapIndex &index;
  bool scan = false;
  std::vector<Occupied> occupied; // placed buffers overlapping the current one, by offset
  std::vector<Placed> placedByOffset; // when scanning
  std::vector<Range> placedRange;      // per buffer; empty while unplaced
  uint64_t workDone = 0, passWork = 0;
};

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_GAPPLACER_H
