//===- ArenaLifetimes.h - when each arena allocation of a plan is live -*- C++ -*-===//
//
// The one lifetime rule the lowering places the arena by and the memory report reads back: a
// step's inputs, outputs and workspace are live at that step, graph inputs from the first step
// and graph outputs to the last; a view (Buffer.alias_of) stands for the buffer owning its bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_LOWERING_ARENALIFETIMES_H
#define MEMC_COMPILER_LOWERING_ARENALIFETIMES_H

#include "runtime/plan/Plan.pb.h"

#include <vector>

namespace memc {

struct ArenaLifetimes {
  /// Per buffer: the buffer owning its bytes (itself unless a view).
  std::vector<uint32_t> owner;
  /// Per owning arena buffer: its first and last step; -1 when nothing touches it (and for views
  /// and buffers outside the arena).
  std::vector<int64_t> first, last;

  explicit ArenaLifetimes(const plan::Plan &plan);
  bool liveAt(uint32_t buffer, int64_t step) const {
    return owner[buffer] == buffer && first[buffer] >= 0 && first[buffer] <= step &&
           step <= last[buffer];
  }
};

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_ARENALIFETIMES_H
