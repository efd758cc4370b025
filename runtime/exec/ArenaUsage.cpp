//===- ArenaUsage.cpp - measuring the arena as the schedule runs ----------===//
#include "runtime/exec/ArenaUsage.h"

#include <algorithm>

namespace memc::runtime {

void ArenaUsage::reset() {
  liveBytes = 0;
  liveEnds.clear();
  peakLive = 0;
  highWater = 0;
}

void ArenaUsage::advance(size_t event) {
  if (event > 0) {
    for (uint32_t b : plan.timeline.released[event - 1]) {
      const PlanBuffer &buffer = plan.buffers[b];
      liveBytes -= buffer.size;
      liveEnds.erase(liveEnds.find(buffer.offset + buffer.size));
    }
  }
  for (uint32_t b : plan.timeline.allocated[event]) {
    const PlanBuffer &buffer = plan.buffers[b];
    liveBytes += buffer.size;
    liveEnds.insert(buffer.offset + buffer.size);
  }
  peakLive = std::max(peakLive, liveBytes);
  if (!liveEnds.empty())
    highWater = std::max(highWater, *liveEnds.rbegin());
}

} // namespace memc::runtime
