//===- CpuKernels.h - the CPU backend's kernels ----------------*- C++ -*-===//
#ifndef MEMC_KERNELS_CPU_CPUKERNELS_H
#define MEMC_KERNELS_CPU_CPUKERNELS_H

#include "kernels/Kernel.h"

namespace memc::kernels {

/// Every memc op as a CPU kernel: the CPU target's contracts (the op's check and the CPU
/// workspace rule, kernels/KernelTargets.h) with a CPU run function: GEMM through OpenBLAS, the
/// rest in C++ with threads where it pays. f16/bf16 tensors are stored as such and computed in
/// f32 (round to nearest even).
const KernelTable &cpuKernels();

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CPUKERNELS_H
