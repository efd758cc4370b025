//===- WorkerSpan.h - when a device's host worker thread was busy --*- C++ -*-===//
#ifndef MEMC_RUNTIME_DEVICE_WORKERSPAN_H
#define MEMC_RUNTIME_DEVICE_WORKERSPAN_H

#include <functional>
#include <vector>

namespace memc::runtime {

/// A worker thread of a device busy from `start` for `seconds` (the steady clock's seconds, as
/// ExecutionStats::runStartSeconds): the CPU kernels' pool threads, 0 being the thread that
/// launched the step. What the profiler's trace draws one track per worker from.
struct WorkerSpan {
  int worker;
  double start, seconds;
};

/// How a device records its workers' spans: `record(on)` starts or stops, `take()` hands over
/// what was recorded since the last take (between runs). Empty for devices without host workers.
struct WorkerSpanSource {
  std::function<void(bool)> record;
  std::function<std::vector<WorkerSpan>()> take;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_WORKERSPAN_H
