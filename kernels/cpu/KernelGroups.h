//===- KernelGroups.h - how the CPU kernel files register -------*- C++ -*-===//
//
// Each kernel file adds its run functions to the CPU table; CpuKernels.cpp calls them all once
// and pairs each with its op's check (kernels/ops/) and its CPU workspace rule
// (CpuTarget.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_KERNELGROUPS_H
#define MEMC_KERNELS_CPU_KERNELGROUPS_H

#include "kernels/Kernel.h"

#include <map>
#include <string>

namespace memc::kernels {

/// The CPU backend's run functions, by kernel name.
using KernelRuns = std::map<std::string, KernelRun>;

void addUnaryKernels(KernelRuns &table);         // Unary.cpp
void addBinaryKernels(KernelRuns &table);        // Binary.cpp
void addMatMulKernels(KernelRuns &table);        // MatMul.cpp
void addMatMulNf4Kernels(KernelRuns &table);     // MatMulNf4.cpp
void addNormalizationKernels(KernelRuns &table); // Normalization.cpp
void addReductionKernels(KernelRuns &table);     // Reduction.cpp
void addScanKernels(KernelRuns &table);          // Scan.cpp
void addSelectionKernels(KernelRuns &table);     // Selection.cpp
void addLayoutKernels(KernelRuns &table);        // Layout.cpp
void addConvolutionKernels(KernelRuns &table);   // Convolution.cpp
void addPoolingKernels(KernelRuns &table);       // Pooling.cpp
void addAttentionKernels(KernelRuns &table);     // Attention.cpp

// Training: backward ops and losses.
void addActivationBackwardKernels(KernelRuns &table);    // ActivationBackward.cpp
void addNormalizationBackwardKernels(KernelRuns &table); // NormalizationBackward.cpp
void addIndexingBackwardKernels(KernelRuns &table);      // IndexingBackward.cpp
void addConvolutionBackwardKernels(KernelRuns &table);   // ConvolutionBackward.cpp
void addPoolingBackwardKernels(KernelRuns &table);       // PoolingBackward.cpp
void addAttentionBackwardKernels(KernelRuns &table);     // AttentionBackward.cpp
void addLossKernels(KernelRuns &table);                  // Losses.cpp
void addLinearCrossEntropyKernels(KernelRuns &table);    // LinearCrossEntropy.cpp
void addOptimizerKernels(KernelRuns &table);             // Optimizers.cpp
void addLossScaleKernels(KernelRuns &table);             // LossScale.cpp
void addCollectiveKernels(KernelRuns &table);            // Collectives.cpp

/// Elements per task below which splitting a cheap elementwise loop over threads costs more
/// than it saves (with the pool's workers spinning and each keeping its share of the data: 2^15
/// before that, when a split cost a wake-up and moved the data between cores).
constexpr int64_t kElementwiseGrain = int64_t{1} << 13;
/// The same for loops whose elements cost a transcendental function or more.
constexpr int64_t kExpensiveGrain = int64_t{1} << 12;

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_KERNELGROUPS_H
