//===- CpuDevice.cpp - the host as a device -------------------------------===//
#include "runtime/device/cpu/CpuDevice.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace memc::runtime {
namespace {

/// Work on the host is done when it is enqueued: there is never anything to wait for.
class CpuStream : public Stream {
public:
  bool synchronize(std::string &) override { return true; }
};

/// Cache-line alignment at least, so no two allocations share a line.
constexpr uint64_t kMinAlignment = 64;

} // namespace

bool CpuDevice::allocate(uint64_t bytes, uint64_t alignment, void *&memory, std::string &error) {
  alignment = std::max(alignment, kMinAlignment);
  // Zero bytes still get a distinct pointer, so base + offset arithmetic stays well defined.
  uint64_t size = std::max<uint64_t>(bytes, 1);
  if (size > SIZE_MAX - alignment || posix_memalign(&memory, alignment, size) != 0) {
    memory = nullptr;
    error = "out of host memory";
    return false;
  }
  return true;
}

void CpuDevice::deallocate(void *memory) { std::free(memory); }

std::unique_ptr<Stream> CpuDevice::createStream(std::string &) {
  return std::make_unique<CpuStream>();
}

bool CpuDevice::copyToDevice(void *device, const void *host, uint64_t bytes, Stream &,
                             std::string &) {
  if (bytes)
    std::memcpy(device, host, bytes);
  return true;
}

bool CpuDevice::copyToHost(void *host, const void *device, uint64_t bytes, Stream &,
                           std::string &) {
  if (bytes)
    std::memcpy(host, device, bytes);
  return true;
}

bool CpuDevice::fillZero(void *device, uint64_t bytes, Stream &, std::string &) {
  if (bytes)
    std::memset(device, 0, bytes);
  return true;
}

bool CpuDevice::launch(const kernels::Kernel &kernel, const kernels::KernelCall &call,
                       Stream &stream, std::string &) {
  // A failing CPU kernel has recorded its message in the context's slot before it returns.
  kernels::KernelContext &context = stream.kernelContext();
  if (!kernel.run(context, call) && !context.errors.failed())
    context.fail("the kernel failed without a message");
  return true;
}

void registerCpuDevice(DeviceRegistry &registry, const kernels::KernelTable &kernels,
                       WorkerSpanSource workers) {
  registry.add(
      "cpu", [&kernels, workers](int ordinal, std::string &error) -> std::unique_ptr<Device> {
        if (ordinal != 0) {
          error = "the host is one device: cpu (or cpu:0), not cpu:" + std::to_string(ordinal);
          return nullptr;
        }
        return std::make_unique<CpuDevice>(kernels, workers);
      });
}

} // namespace memc::runtime
