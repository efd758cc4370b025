//===- ExecutionStats.cpp - what a run cost -------------------------------===//
#include "runtime/exec/ExecutionStats.h"

#include "runtime/support/Bytes.h"

#include <cstdio>

namespace memc::runtime {

std::string formatSummary(const ExecutionStats &stats) {
  char time[32];
  if (stats.runSeconds < 1)
    snprintf(time, sizeof(time), "%.3f ms", stats.runSeconds * 1e3);
  else
    snprintf(time, sizeof(time), "%.3f s", stats.runSeconds);
  return "arena " + formatBytes(stats.arenaBytes) + " planned (high-water " +
         formatBytes(stats.arenaHighWaterBytes) + ", peak live " +
         formatBytes(stats.peakLiveArenaBytes) + ", lower bound " +
         formatBytes(stats.arenaLowerBoundBytes) + "), persistent " +
         formatBytes(stats.persistentBytes) + ", constants " + formatBytes(stats.constantBytes) +
         ", " + std::to_string(stats.steps) + " steps in " + time;
}

} // namespace memc::runtime
