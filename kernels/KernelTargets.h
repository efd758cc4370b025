//===- KernelTargets.h - the targets memc compiles for ----------*- C++ -*-===//
//
// The table of target records (kernels/Target.h) the compiler chooses from with --target: one
// row per target, each built from its folder's rules (kernels/cpu/CpuTarget.cpp,
// kernels/cuda/CudaTarget.cpp) without its kernels. The library holding this table links every
// target's rules (the CPU's ask oneDNN for primitive sizes); a device links only its own
// target's record, so the CUDA runner carries no oneDNN.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_KERNELTARGETS_H
#define MEMC_KERNELS_KERNELTARGETS_H

#include "kernels/Target.h"
#include "kernels/cpu/CpuTarget.h"
#include "kernels/cuda/CudaTarget.h"

#include <string>

namespace memc::kernels {

/// The record of the target named `name`, or null for a target memc cannot compile for.
const Target *findTarget(const std::string &name);

/// contractsOf(*findTarget(name)), built once; null for an unknown target.
const KernelTable *targetContracts(const std::string &name);

/// "cpu, cuda": the targets findTarget knows, for messages.
std::string targetNames();

} // namespace memc::kernels

#endif // MEMC_KERNELS_KERNELTARGETS_H
