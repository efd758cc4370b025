//===- Device.cpp - the driver interface every backend implements ---------===//
#include "runtime/device/Device.h"

#include "runtime/support/Bytes.h"

namespace memc::runtime {

DeviceMemory &DeviceMemory::operator=(DeviceMemory &&other) noexcept {
  if (this != &other) {
    release();
    owner = other.owner;
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
  bytes = size;
  return true;
}

void DeviceMemory::release() {
  if (owner)
    owner->deallocate(memory);
  owner = nullptr;
  memory = nullptr;
  bytes = 0;
}

} // namespace memc::runtime
