//===- ArenaLifetimes.cpp - when each arena buffer of a plan is live ------===//
#include "runtime/plan/ArenaLifetimes.h"

#include <algorithm>

namespace memc::runtime {

std::vector<uint32_t> bufferOwners(const plan::Plan &plan) {
  std::vector<uint32_t> owner(plan.buffers_size());
  for (uint32_t i = 0; i < owner.size(); ++i) {
    owner[i] = i;
    while (plan.buffers(owner[i]).has_alias_of())
      owner[i] = plan.buffers(owner[i]).alias_of();
  }
  return owner;
}

ArenaLifetimes::ArenaLifetimes(const plan::Plan &plan) : owner(bufferOwners(plan)) {
  first.assign(owner.size(), -1);
  last.assign(owner.size(), -1);
  int64_t lastStep = std::max(0, plan.steps_size() - 1);
  forEachArenaUse(plan, owner, [&](const ArenaUse &use) {
    int64_t step = std::clamp<int64_t>(use.position, 0, lastStep);
    int64_t &begin = first[use.owner];
    begin = begin < 0 ? step : std::min(begin, step);
    last[use.owner] = std::max(last[use.owner], step);
    return true;
  });
}

} // namespace memc::runtime
