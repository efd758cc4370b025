//===- Device.h - the driver interface every backend implements --*- C++ -*-===//
//
// A device owns memory the host may not be able to dereference, runs kernels from its own
// kernel table and orders work on streams, as HAL drivers do (IREE, CUDA). The executor only
// talks to this interface, so the CPU device and a CUDA device are interchangeable:
//
//  - Memory: allocate/deallocate device memory with an alignment. Pointers are device
//    addresses, passed to kernels in TensorView::data and never dereferenced by the runtime.
//  - Streams: copies and launches are enqueued on a stream and may complete later; work on one
//    stream runs in order; synchronize() waits for it and reports failures of enqueued work.
//    Host memory given to a copy and the KernelCall given to launch must stay valid until the
//    stream is synchronized. The CPU device's streams run everything immediately.
//  - Kernels: each stream owns the KernelContext its launches see (kernels/KernelContext.h):
//    the device's native stream and library handles, and the error slot where kernels record
//    data-dependent failures. The executor reads the slot after each launch and after the
//    stream synchronizes, so a device that learns of a failure only then reports it the same way.
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

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace memc::runtime {

/// An in-order queue of device work.
class Stream {
public:
  virtual ~Stream() = default;
  /// Waits until all work enqueued so far has finished; false with a message if any failed.
  /// A kernel's data-dependent failure is not one: it is in kernelContext().errors.
  virtual bool synchronize(std::string &error) = 0;

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

class Device {
public:
  virtual ~Device() = default;

  /// The name it is registered under ("cpu", "cuda").
  virtual const std::string &name() const = 0;
  /// The kernels this device runs, by op name; plans are validated against this table.
  virtual const kernels::KernelTable &kernels() const = 0;

  /// Allocates `bytes` (zero allowed) of device memory aligned to `alignment` (a power of two).
  virtual bool allocate(uint64_t bytes, uint64_t alignment, void *&memory, std::string &error) = 0;
  virtual void deallocate(void *memory) = 0;

  virtual std::unique_ptr<Stream> createStream(std::string &error) = 0;
  virtual bool copyToDevice(void *device, const void *host, uint64_t bytes, Stream &stream,
                            std::string &error) = 0;
  virtual bool copyToHost(void *host, const void *device, uint64_t bytes, Stream &stream,
                          std::string &error) = 0;
  virtual bool fillZero(void *device, uint64_t bytes, Stream &stream, std::string &error) = 0;
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
  void release();

  char *data() const { return static_cast<char *>(memory); }
  uint64_t size() const { return bytes; }

private:
  Device *owner = nullptr;
  void *memory = nullptr;
  uint64_t bytes = 0;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_DEVICE_H
