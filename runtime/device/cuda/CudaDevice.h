//===- CudaDevice.h - an NVIDIA GPU as a device -----------------*- C++ -*-===//
//
// One GPU (cuda:K) through the CUDA runtime, linked statically (the program needs only the
// driver on the GPU host). Memory is cudaMalloc'd once per region (the executor's arena,
// persistent state, constants; never in a step), the HOST region and data staging are pinned
// and mapped host memory, and streams are CUDA streams whose kernel context carries the stream,
// the CUDA libraries (kernels/cuda/CudaLibraries.h) and a mapped DeviceErrorRecord that
// synchronize() turns into the kernel error slot's message, naming the step.
//
// registerCudaDevice registers "cuda" whatever the machine: without a GPU or driver, creating
// the device fails with the CUDA runtime's reason, so `--device cuda` exits 1 with a message.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_DEVICE_CUDA_CUDADEVICE_H
#define MEMC_RUNTIME_DEVICE_CUDA_CUDADEVICE_H

#include "runtime/device/DeviceRegistry.h"

namespace memc::runtime {

/// Registers "cuda" (cuda:K), running `kernels` (which must outlive the registry's devices).
void registerCudaDevice(DeviceRegistry &registry, const kernels::KernelTable &kernels);

/// `base` rounded up to `alignment` (a power of two); how an allocation wider than cudaMalloc's
/// own 256-byte alignment is placed in a larger one.
uint64_t alignAddress(uint64_t base, uint64_t alignment);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_DEVICE_CUDA_CUDADEVICE_H
