//===- AvailableDevices.h - every backend this build has ----------*- C++ -*-===//
//
// Registration is explicit, as IREE's driver modules do it, rather than through static
// initializers that a static link silently drops. Lives in its own library
// (MemcRuntimeDevices) because it links the backends' kernels, which the rest of the runtime
// does not need.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_DEVICE_AVAILABLEDEVICES_H
#define MEMC_RUNTIME_DEVICE_AVAILABLEDEVICES_H

#include "runtime/device/DeviceRegistry.h"

namespace memc::runtime {

/// Registers "cpu" (the CPU kernels) and, in builds with CUDA, "cuda".
void registerAvailableDevices(DeviceRegistry &registry);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_AVAILABLEDEVICES_H
