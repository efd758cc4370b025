//===- CpuDevice.h - the host as a device -------------------------*- C++ -*-===//
//
// Device memory is host memory and streams run work as it is enqueued, so every call completes
// before it returns. The kernel table is a parameter: the runner registers the CPU backend's
// kernels (AvailableDevices.h), tests can run plans on kernels of their own.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_DEVICE_CPU_CPUDEVICE_H
#define MEMC_RUNTIME_DEVICE_CPU_CPUDEVICE_H

#include "runtime/device/DeviceRegistry.h"

namespace memc::runtime {

class CpuDevice : public Device {
public:
  /// `kernels` must outlive the device; `workers` records their threads (the CPU kernels'
  /// pool) for the profiler.
  explicit CpuDevice(const kernels::KernelTable &kernels, WorkerSpanSource workers = {})
      : kernelTable(kernels), workers(std::move(workers)) {}

  const std::string &name() const override { return deviceName; }
  DeviceProperties properties() const override { return {deviceName, 0, 0}; }
  const kernels::KernelTable &kernels() const override { return kernelTable; }
  bool allocate(uint64_t bytes, uint64_t alignment, void *&memory, std::string &error) override;
  void deallocate(void *memory) override;
  /// Host memory is the device's memory: the same allocation, aligned as a GPU's pinned memory
  /// at least is (plans align the HOST region's buffers to 256 bytes from its start).
  bool allocateHost(uint64_t bytes, void *&memory, std::string &error) override {
    return allocate(bytes, 256, memory, error);
  }
  void deallocateHost(void *memory) override { deallocate(memory); }
  std::unique_ptr<Stream> createStream(std::string &error) override;
  bool copyToDevice(void *device, const void *host, uint64_t bytes, Stream &stream,
                    std::string &error) override;
  bool copyToHost(void *host, const void *device, uint64_t bytes, Stream &stream,
                  std::string &error) override;
  bool fillZero(void *device, uint64_t bytes, Stream &stream, std::string &error) override;
  bool copyOnDevice(void *to, const void *from, uint64_t bytes, Stream &stream,
                    std::string &error) override {
    return copyToDevice(to, from, bytes, stream, error);
  }
  bool launch(const kernels::Kernel &kernel, const kernels::KernelCall &call, Stream &stream,
              std::string &error) override;
  void recordWorkerSpans(bool on) override {
    if (workers.record)
      workers.record(on);
  }
  std::vector<WorkerSpan> takeWorkerSpans() override {
    return workers.take ? workers.take() : std::vector<WorkerSpan>{};
  }

private:
  const kernels::KernelTable &kernelTable;
  WorkerSpanSource workers;
  const std::string deviceName = "cpu";
};

/// Registers "cpu", running `kernels` (which must outlive the registry's devices) whose
/// threads `workers` records.
void registerCpuDevice(DeviceRegistry &registry, const kernels::KernelTable &kernels,
                       WorkerSpanSource workers = {});

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_CPU_CPUDEVICE_H
