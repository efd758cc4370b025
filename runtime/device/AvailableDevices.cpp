//===- AvailableDevices.cpp - every backend this build has ----------------===//
#include "runtime/device/AvailableDevices.h"

#include "kernels/cpu/CpuKernels.h"
#include "runtime/device/cpu/CpuDevice.h"

namespace memc::runtime {

void registerAvailableDevices(DeviceRegistry &registry) {
  registerCpuDevice(registry, kernels::cpuKernels());
}

} // namespace memc::runtime
