//===- Device.h - the driver interface every backend implements --*- C++ -*-===//
//
// A device owns memory the host may not be able to dereference, runs kernels from its own
// kernel table and orders work on streams, as HAL drivers do (IREE, CUDA). The executor only
// talks to this interface, so the CPU device and a CUDA device are interchangeable:
//
//  - Memory: allocate/deallocate device memory with an alignment. Pointers are device
//    addresses, passed to kernels in TensorView::data and never dereferenced by the runtime.
//    A zero-byte allocation succeeds without asking the driver (a distinct pointer on the CPU,
//    null on a GPU: cudaMalloc(0) is not an allocation to rely on). Host memory from
//    allocateHost is what the device copies from and to asynchronously and its kernels may
//    reach (pinned and mapped on a GPU; ordinary memory on the CPU): the HOST region of offloaded
//    state and the staging of the data.
//  - Properties: what the device is (name, ordinal, total memory) and the memory free on it
//    now, which the executor checks the plan against before allocating anything.
//  - Streams: copies and launches are enqueued on a stream and may complete later; work on one
//    stream runs in order; synchronize() waits for it and reports failures of enqueued work.
//    Host memory given to a copy and the KernelCall given to launch must stay valid until the
//    stream is synchronized (or has passed an event recorded after them: waitUntil). The CPU
//    device's streams run everything immediately.
//  - Kernels: each stream owns the KernelContext its launches see (kernels/KernelContext.h):
//    the device's native stream and library handles, and the error slot where kernels record
//    data-dependent failures. Events order one stream's work after a point of another's (the
//    copy stream's upload before the step that reads it) without the host waiting. The executor
//    reads the slot after each launch and after the stream synchronizes, so a device that learns of
//    a failure only then reports it the same way.
//  - Profiling: a stream's marks time its steps (--profile) without waiting for each.
//
// A new device is one folder here (runtime/device/<name>/: this interface, its streams and
// registerXDevice) and one under kernels/ (kernels/<name>/: run functions for the shared op
// contracts of kernels/ops/, and the target's workspace rules, kernels/KernelTargets.h).
//
// Devices are created by name through a DeviceRegistry (DeviceRegistry.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_DEVICE_DEVICE_H
#define MEMC_RUNTIME_DEVICE_DEVICE_H

#include "kernels/Kernel.h"

#include "runtime/device/WorkerSpan.h"
#include <chrono>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memc::runtime {

/// A point in one stream's work (a CUDA event); what Stream::waitFor orders another after.
class Event {
public:
  virtual ~Event() = default;
};

/// An in-order queue of device work.
class Stream {
public:
  virtual ~Stream() = default;
  /// Waits until all work enqueued so far has finished; false with a message if any failed.
  /// A kernel's data-dependent failure is not one: it is in kernelContext().errors.
  virtual bool synchronize(std::string &error) = 0;

  /// Marks the point this stream's work has reached. The CPU's streams have done their work
  /// when it is enqueued, so their events have always happened.
  virtual std::unique_ptr<Event> record(std::string &) { return std::make_unique<Event>(); }
  /// Orders the work enqueued here from now on after `event` (of any stream of the device),
  /// without blocking the host.
  virtual bool waitFor(const Event &, std::string &) { return true; }
  /// Blocks the host until `event` (recorded on this stream) has happened, not waiting for the
  /// work enqueued after it; failures are reported as synchronize() reports them.
  virtual bool waitUntil(const Event &, std::string &) { return true; }

  /// What kernels launched on this stream are given.
  kernels::KernelContext &kernelContext() { return context; }

  /// Profiling marks: mark() records the point the stream's work has reached (here the host's
  /// clock, right for a device that runs work as it is enqueued; a GPU stream records an event
  /// instead), and once the stream is synchronized markSeconds(i) is mark i's time in seconds
  /// after the first. clearMarks() starts a new series. Nothing is recorded without marks.
  virtual void mark() { marks.push_back(std::chrono::steady_clock::now()); }
  virtual double markSeconds(size_t index) const {
    return std::chrono::duration<double>(marks[index] - marks.front()).count();
  }
  virtual void clearMarks() { marks.clear(); }

protected:
  kernels::KernelContext context;

private:
  std::vector<std::chrono::steady_clock::time_point> marks;
};

/// What a device is, for messages and reports.
struct DeviceProperties {
  /// "cpu", "NVIDIA H200 (cuda:0, compute capability 9.0)".
  std::string description;
  int ordinal = 0;
  /// Its memory; 0 where the device does not know (the CPU: the host's, MemoryLimit.h).
  uint64_t totalBytes = 0;
};

class Device {
public:
  virtual ~Device() = default;

  /// The name it is registered under ("cpu", "cuda"): the target of the plans it loads.
  virtual const std::string &name() const = 0;
  virtual DeviceProperties properties() const = 0;
  /// Device memory free now; nullopt where the device cannot say (the CPU).
  virtual std::optional<uint64_t> freeBytes() const { return std::nullopt; }
  /// Starts or stops recording when the device's host worker threads are busy, and hands over
  /// what was recorded (for --profile's trace); devices without host workers record nothing.
  virtual void recordWorkerSpans(bool) {}
  virtual std::vector<WorkerSpan> takeWorkerSpans() { return {}; }
  /// The kernels this device runs, by op name; plans are validated against this table.
  virtual const kernels::KernelTable &kernels() const = 0;

  /// Allocates `bytes` (zero allowed) of device memory aligned to `alignment` (a power of two).
  virtual bool allocate(uint64_t bytes, uint64_t alignment, void *&memory, std::string &error) = 0;
  virtual void deallocate(void *memory) = 0;
  /// Host memory for asynchronous copies and device access (the file comment); zero allowed.
  virtual bool allocateHost(uint64_t bytes, void *&memory, std::string &error) = 0;
  virtual void deallocateHost(void *memory) = 0;

  virtual std::unique_ptr<Stream> createStream(std::string &error) = 0;
  /// A stream for copies and events only, never a launch (a GPU's then loads no libraries and
  /// makes no handles for it).
  virtual std::unique_ptr<Stream> createCopyStream(std::string &error) {
    return createStream(error);
  }
  virtual bool copyToDevice(void *device, const void *host, uint64_t bytes, Stream &stream,
                            std::string &error) = 0;
  virtual bool copyToHost(void *host, const void *device, uint64_t bytes, Stream &stream,
                          std::string &error) = 0;
  virtual bool fillZero(void *device, uint64_t bytes, Stream &stream, std::string &error) = 0;
  /// Copies between two of the device's allocations (a staged input into the arena).
  virtual bool copyOnDevice(void *to, const void *from, uint64_t bytes, Stream &stream,
                            std::string &error) = 0;
  /// Enqueues `kernel` (an entry of kernels()) on `call`, whose tensors point to device memory,
  /// with the stream's kernel context. False with a message only when the launch itself fails;
  /// a kernel's data-dependent failure goes to stream.kernelContext().errors.
  virtual bool launch(const kernels::Kernel &kernel, const kernels::KernelCall &call,
                      Stream &stream, std::string &error) = 0;
};

/// Device memory owned by a handle that returns it to its device.
class DeviceMemory {
public:
  DeviceMemory() = default;
  DeviceMemory(DeviceMemory &&other) noexcept { *this = std::move(other); }
  DeviceMemory &operator=(DeviceMemory &&other) noexcept;
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  ~DeviceMemory() { release(); }

  /// Allocates through `device`; `what` names the allocation in the error ("arena", ...).
  bool allocate(Device &device, uint64_t bytes, uint64_t alignment, const std::string &what,
                std::string &error);
  /// The same, in the device's host memory (Device::allocateHost).
  bool allocateHost(Device &device, uint64_t bytes, const std::string &what, std::string &error);
  void release();

  char *data() const { return static_cast<char *>(memory); }
  uint64_t size() const { return bytes; }

private:
  Device *owner = nullptr;
  bool onHost = false;
  void *memory = nullptr;
  uint64_t bytes = 0;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_DEVICE_H
