//===- KernelContext.h - what a kernel launch sees of its device -*- C++ -*-===//
//
// Every device hands its kernels the same context, so that the kernel contract (Kernel.h) does
// not change when a device with streams and libraries arrives:
//  - stream and libraries: the device's native handles (a cudaStream_t, a struct of cuBLAS /
//    cuDNN / NCCL handles), opaque here and defined by the backend that sets them; null on the
//    CPU, whose kernels run on the calling thread.
//  - collectives: the other ranks of a data-parallel program (kernels/Collectives.h); null in a
//    program of one process.
//  - errors: where a kernel records a failure that depends on tensor values (a gather index out
//    of range). A device kernel cannot return a message from device code: it fills the
//    deviceErrors record (kernels/DeviceError.h) with the step it was launched for, and its
//    backend turns the record into this message when the stream synchronizes. The executor
//    reads the slot after the launch and after the stream synchronizes, so synchronous and
//    asynchronous devices report the same way, naming the step.
// A stream owns one context (runtime/device/Device.h); kernels never keep it past their launch.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_KERNELCONTEXT_H
#define MEMC_KERNELS_KERNELCONTEXT_H

#include "kernels/DeviceError.h"

#include <cstdint>
#include <string>

namespace memc::kernels {

class Collectives;

/// The first data-dependent failure recorded since the slot was last taken.
class KernelErrorSlot {
public:
  /// Keeps `message` unless a failure is already recorded: the first one caused the rest.
  /// `step` is the plan step that failed when the device learnt it only at synchronization.
  void record(std::string message, int64_t step = -1) {
    if (!recorded) {
      recorded = true;
      text = std::move(message);
      failedStep = step;
    }
  }
  bool failed() const { return recorded; }
  /// Moves the recorded message into `message` and clears the slot; false when none is recorded.
  bool take(std::string &message) {
    if (!recorded)
      return false;
    message = std::move(text);
    recorded = false;
    text.clear();
    return true;
  }
  /// The step given to record() for the message take() returns next; -1 when not given.
  int64_t step() const { return failedStep; }

private:
  bool recorded = false;
  std::string text;
  int64_t failedStep = -1;
};

struct KernelContext {
  /// The device's native stream handle; null on the CPU.
  void *stream = nullptr;
  /// The device's library handles, as its backend defines them; null on the CPU.
  void *libraries = nullptr;
  /// The ranks' collectives; null when the program is one process.
  Collectives *collectives = nullptr;
  /// Where device code records a data-dependent failure (DeviceError.h), in memory both the
  /// device and the host can reach; null on the CPU, whose kernels call fail().
  DeviceErrorRecord *deviceErrors = nullptr;
  /// The plan step being launched, for deviceErrors (the executor sets it before each launch).
  uint32_t step = 0;
  KernelErrorSlot errors;

  /// Records `message` and returns false, so a kernel reports with `return context.fail(...)`.
  bool fail(std::string message) {
    errors.record(std::move(message));
    return false;
  }
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_KERNELCONTEXT_H
