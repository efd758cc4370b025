//===- CudaKernels.h - the CUDA backend's kernel table ----------*- C++ -*-===//
#ifndef MEMC_KERNELS_CUDA_CUDAKERNELS_H
#define MEMC_KERNELS_CUDA_CUDAKERNELS_H

#include "kernels/Kernel.h"

namespace memc::kernels {

/// Every CUDA run function with its op's check and the CUDA target's limits and workspace rule.
/// Kernels launch on the cudaStream_t in KernelContext::stream, with the CudaLibraries of
/// KernelContext::libraries (CudaLibraries.h).
const KernelTable &cudaKernels();

} // namespace memc::kernels

#endif // MEMC_KERNELS_CUDA_CUDAKERNELS_H
