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

/// Registers the devices of the program being linked: "cpu" with the CPU kernels
/// (AvailableDevices.cpp, MemcRuntimeDevices: memc-runner), or "cuda" with the CUDA kernels
/// (cuda/CudaAvailableDevices.cpp, MemcCudaDevices: memc-runner-cuda).
void registerAvailableDevices(DeviceRegistry &registry);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_AVAILABLEDEVICES_H
