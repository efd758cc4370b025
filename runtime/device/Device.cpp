//===- Device.cpp - the driver interface every backend implements ---------===//
#include "runtime/device/Device.h"

#include "runtime/support/Bytes.h"

namespace memc::runtime {

DeviceMemory &DeviceMemory::operator=(DeviceMemory &&other) noexcept {
  if (this != &other) {
    release();
    owner = other.owner;
    onHost = other.onHost;
    memory = other.memory;
    bytes = other.bytes;
    other.owner = nullptr;
    other.memory = nullptr;
    other.bytes = 0;
  }
  return *this;
}

bool DeviceMemory::allocate(Device &device, uint64_t size, uint64_t alignment,
                            const std::string &what, std::string &error) {
  release();
  std::string reason;
  if (!device.allocate(size, alignment, memory, reason)) {
    error = "cannot allocate the " + what + " (" + formatBytes(size) + ") on device '" +
            device.name() + "': " + reason;
    return false;
  }
  owner = &device;
  onHost = false;
  bytes = size;
  return true;
}

bool DeviceMemory::allocateHost(Device &device, uint64_t size, const std::string &what,
                                std::string &error) {
  release();
  std::string reason;
  if (!device.allocateHost(size, memory, reason)) {
    error = "cannot allocate the " + what + " (" + formatBytes(size) + ") in host memory for '" +
            device.name() + "': " + reason;
    return false;
  }
  owner = &device;
  onHost = true;
  bytes = size;
  return true;
}

void DeviceMemory::release() {
  if (owner && onHost)
    owner->deallocateHost(memory);
  else if (owner)
    owner->deallocate(memory);
  owner = nullptr;
  memory = nullptr;
  bytes = 0;
}

} // namespace memc::runtime
