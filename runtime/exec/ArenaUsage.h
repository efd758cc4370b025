//===- ArenaUsage.h - measuring the arena as the schedule runs ----*- C++ -*-===//
//
// Follows a LoadedPlan's arena timeline step by step and records two numbers the memory report
// promises: the peak of live bytes (what the values need at once, the planner's lower bound)
// and the high-water mark (the highest byte any live value reaches, what the arena must
// hold). A planner that packs perfectly makes them equal; both must fit in arena_bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_EXEC_ARENAUSAGE_H
#define MEMC_RUNTIME_EXEC_ARENAUSAGE_H

#include "runtime/plan/LoadedPlan.h"

#include <set>

namespace memc::runtime {

class ArenaUsage {
public:
  explicit ArenaUsage(const LoadedPlan &plan) : plan(plan) {}

  /// Starts a run: nothing is live.
  void reset();
  /// Applies timeline event `event` (0: graph inputs arrive; t + 1: step t runs).
  void advance(size_t event);

  uint64_t peakLiveBytes() const { return peakLive; }
  uint64_t highWaterBytes() const { return highWater; }

private:
  const LoadedPlan &plan;
  uint64_t liveBytes = 0;
  std::multiset<uint64_t> liveEnds;
  uint64_t peakLive = 0;
  uint64_t highWater = 0;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_EXEC_ARENAUSAGE_H
