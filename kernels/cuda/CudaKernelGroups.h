//===- CudaKernelGroups.h - how the CUDA kernel files register ---*- C++ -*-===//
//
// Each group's .cu files add their run functions to the CUDA table; CudaKernels.cpp calls them
// all once and pairs each with its entry of the CUDA target (CudaTarget.h), which the group
// lists in its <Group>Target.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDAKERNELGROUPS_H
#define MEMC_KERNELS_CUDA_CUDAKERNELGROUPS_H

#include "kernels/Kernel.h"

#include <map>
#include <string>

namespace memc::kernels {

/// The CUDA backend's run functions, by kernel name.
using CudaKernelRuns = std::map<std::string, KernelRun>;

void addElementwiseCudaKernels(CudaKernelRuns &runs);      // Elementwise.cu
void addRowCudaKernels(CudaKernelRuns &runs);              // Rows.cu
void addLayoutCudaKernels(CudaKernelRuns &runs);           // Layout.cu
void addMatMulCudaKernels(CudaKernelRuns &runs);           // MatMul.cu
void addAttentionCudaKernels(CudaKernelRuns &runs);        // FlashAttention.cu
void addOptimizerPoolingCudaKernels(CudaKernelRuns &runs); // Optimizers.cu, Pooling.cu
void addCollectiveCudaKernels(CudaKernelRuns &runs);       // Collectives.cpp

} // namespace memc::kernels

#endif // MEMC_KERNELS_CUDA_CUDAKERNELGROUPS_H
