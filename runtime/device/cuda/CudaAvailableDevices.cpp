//===- CudaAvailableDevices.cpp - the devices of the CUDA runner ----------===//
//
// The CUDA runner (memc-runner-cuda) has the GPU and nothing else: no CPU kernels, so none of
// their libraries (oneDNN, OpenBLAS, OpenMP) travel to the GPU host.
//
//===----------------------------------------------------------------------===//
#include "runtime/device/AvailableDevices.h"

#include "kernels/cuda/CudaKernels.h"
#include "runtime/device/cuda/CudaDevice.h"

namespace memc::runtime {

void registerAvailableDevices(DeviceRegistry &registry) {
  registerCudaDevice(registry, kernels::cudaKernels());
}

} // namespace memc::runtime
