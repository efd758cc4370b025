//===- CudaTarget.h - the CUDA target's record ------------------*- C++ -*-===//
//
// The ops memc's CUDA kernels implement (kernels/cuda/*.cu), each with the target's limits
// (the dtypes a kernel covers) and its workspace rule, and the 256-byte constant alignment
// of GPU memory. Plain C++ built on every machine, with or without nvcc: memc plans a CUDA
// program where there is no GPU, and refuses at compile time an op this list lacks. The CUDA
// kernel table (CudaKernels.h) pairs each entry with its run function; a test checks that the
// two name the same ops.
//
// Each kernel group (CudaTargetGroups.h) lists its ops in its own <Group>Target.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDATARGET_H
#define MEMC_KERNELS_CUDA_CUDATARGET_H

#include "kernels/Target.h"

namespace memc::kernels {

/// The CUDA device's target name (runtime/device/cuda/).
inline constexpr const char *kCudaTarget = "cuda";

const Target &cudaTarget();

} // namespace memc::kernels

#endif // MEMC_KERNELS_CUDA_CUDATARGET_H
