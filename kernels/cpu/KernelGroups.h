//===- KernelGroups.h - how the CPU kernel files register -------*- C++ -*-===//
//
// Each kernel file adds its kernels to the CPU table; CpuKernels.cpp calls them all once.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_KERNELGROUPS_H
#define MEMC_KERNELS_CPU_KERNELGROUPS_H

#include "kernels/Kernel.h"

namespace memc::kernels {

void addUnaryKernels(KernelTable &table);         // Unary.cpp
void addBinaryKernels(KernelTable &table);        // Binary.cpp
void addMatMulKernels(KernelTable &table);        // MatMul.cpp
void addNormalizationKernels(KernelTable &table); // Normalization.cpp
void addReductionKernels(KernelTable &table);     // Reduction.cpp
void addLayoutKernels(KernelTable &table);        // Layout.cpp
void addConvolutionKernels(KernelTable &table);   // Convolution.cpp
void addPoolingKernels(KernelTable &table);       // Pooling.cpp

// Training: backward ops and losses.
void addActivationBackwardKernels(KernelTable &table);    // ActivationBackward.cpp
void addNormalizationBackwardKernels(KernelTable &table); // NormalizationBackward.cpp
void addIndexingBackwardKernels(KernelTable &table);      // IndexingBackward.cpp
void addConvolutionBackwardKernels(KernelTable &table);   // ConvolutionBackward.cpp
void addPoolingBackwardKernels(KernelTable &table);       // PoolingBackward.cpp
void addLossKernels(KernelTable &table);                  // Losses.cpp
void addOptimizerKernels(KernelTable &table);     // Optimizers.cpp

/// Elements per task below which splitting a cheap elementwise loop over threads costs more
/// than it saves.
constexpr int64_t kElementwiseGrain = int64_t{1} << 15;
/// The same for loops whose elements cost a transcendental function or more.
constexpr int64_t kExpensiveGrain = int64_t{1} << 12;

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_KERNELGROUPS_H
