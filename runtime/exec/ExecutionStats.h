//===- ExecutionStats.h - what a run cost ------------------------*- C++ -*-===//
#ifndef MEMC_RUNTIME_EXEC_EXECUTIONSTATS_H
#define MEMC_RUNTIME_EXEC_EXECUTIONSTATS_H

#include "runtime/device/WorkerSpan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memc::runtime {

struct ExecutionStats {
  /// The regions as allocated: the plan's sizes, nothing more.
  uint64_t arenaBytes = 0;
  uint64_t persistentBytes = 0;
  uint64_t constantBytes = 0;
  /// The planner's claim: the most arena bytes live at any step.
  uint64_t arenaLowerBoundBytes = 0;
  /// Measured over the last run (ArenaUsage.h): the most arena bytes live at any step, and the
  /// highest arena byte any live value reached.
  uint64_t peakLiveArenaBytes = 0;
  uint64_t arenaHighWaterBytes = 0;
  size_t steps = 0;
  /// Wall time of the last run, from the first launch to the end of the last step, and when it
  /// started (seconds on the steady clock).
  double runSeconds = 0, runStartSeconds = 0;
  /// Per step, when ExecutorOptions::timeSteps is set (each step then waits for the device) or
  /// profile (from the stream's marks).
  std::vector<double> stepSeconds;
  /// With ExecutorOptions::profile: when the device's host workers were busy (WorkerSpan.h).
  std::vector<WorkerSpan> workerSpans;
};

/// One line: "arena 1.50 MiB planned (high-water 1.50 MiB, peak live 1.25 MiB, lower bound
/// 1.25 MiB), persistent 4.00 MiB, 12 steps in 3.2 ms".
std::string formatSummary(const ExecutionStats &stats);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_EXEC_EXECUTIONSTATS_H
