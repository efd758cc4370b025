//===- StepProfile.h - where a program's time goes ----------------*- C++ -*-===//
//
// --profile [TRACE.json]: each plan step's time summed over the profiled runs (the stream's
// marks, ExecutorOptions::profile), reported after the run as
//  - the steps by total time: calls, total and mean ms, % of the steps' sum, achieved GFLOP/s
//    and GB/s from the cost model's estimates the plan records, the kernel and the node;
//  - the same summed by phase (forward, backward, optimizer, recompute; Plan.Step.phase);
//  - the runs' wall time beside the steps' sum (what the steps do not account for: the
//    executor's own work between them);
// and, with a file, a Chrome trace (the traceEvents JSON chrome://tracing and Perfetto open) of
// the first runs: one complete event per step, named after its kernel and node, on the
// executor's track, and on one track per worker thread of the device (the CPU kernels' pool:
// WorkerSpan.h) an event for each span it was busy, named after the step it ran in.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_EXEC_STEPPROFILE_H
#define MEMC_RUNTIME_EXEC_STEPPROFILE_H

#include "runtime/exec/ExecutionStats.h"
#include "runtime/plan/LoadedPlan.h"

#include <cstdio>
#include <string>
#include <vector>

namespace memc::runtime {

class StepProfile {
public:
  /// Profiles runs of `plan`, which must outlive this.
  explicit StepProfile(const LoadedPlan &plan) : plan(plan), totals(plan.steps.size(), 0.0) {}

  /// Adds a run's step times (stats.stepSeconds, one per plan step) and wall time.
  void addRun(const ExecutionStats &stats);
  size_t runs() const { return runCount; }

  /// The tables, `rows` steps at most.
  void print(std::FILE *out, size_t rows = 20) const;
  /// The Chrome trace of the first kMaxTracedRuns runs.
  bool writeTrace(const std::string &path, std::string &error) const;

  static constexpr size_t kMaxTracedRuns = 8;

private:
  struct Event {
    uint32_t step;
    double start, seconds; // seconds on the steady clock
  };
  /// The step event (an index into `events`) a worker span ran in, or -1.
  int64_t stepAt(const WorkerSpan &span) const;

  const LoadedPlan &plan;
  std::vector<double> totals;
  double wallSeconds = 0;
  size_t runCount = 0;
  std::vector<Event> events;     // in time order
  std::vector<WorkerSpan> spans; // of the traced runs
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_EXEC_STEPPROFILE_H
