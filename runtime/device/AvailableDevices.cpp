//===- AvailableDevices.cpp - every backend this build has ----------------===//
#include "runtime/device/AvailableDevices.h"

#include "kernels/cpu/CpuKernels.h"
#include "kernels/cpu/ThreadPool.h"
#include "runtime/device/cpu/CpuDevice.h"

namespace memc::runtime {

namespace {

/// The CPU kernels' pool threads, as the profiler's worker tracks.
WorkerSpanSource cpuPoolSpans() {
  return {[](bool on) { kernels::ThreadPool::global().recordSpans(on); },
          [] {
            std::vector<WorkerSpan> spans;
            for (const kernels::ThreadSpan &span : kernels::ThreadPool::global().takeSpans())
              spans.push_back({span.thread, span.start, span.end - span.start});
            return spans;
          }};
}

} // namespace

void registerAvailableDevices(DeviceRegistry &registry) {
  registerCpuDevice(registry, kernels::cpuKernels(), cpuPoolSpans());
}

} // namespace memc::runtime
