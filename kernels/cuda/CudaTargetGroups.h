//===- CudaTargetGroups.h - how the CUDA kernel groups list their ops -*- C++ -*-===//
//
// One function per kernel group, in the group's <Group>Target.cpp (plain C++, no nvcc): it
// adds the ops the group's .cu files run, with their limits and workspace rules.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDATARGETGROUPS_H
#define MEMC_KERNELS_CUDA_CUDATARGETGROUPS_H

#include "kernels/Target.h"

namespace memc::kernels {

void addElementwiseTargetOps(TargetOps &ops);      // ElementwiseTarget.cpp
void addRowTargetOps(TargetOps &ops);              // RowTarget.cpp
void addLayoutTargetOps(TargetOps &ops);           // LayoutTarget.cpp
void addMatMulTargetOps(TargetOps &ops);           // MatMulTarget.cpp
void addAttentionTargetOps(TargetOps &ops);        // AttentionTarget.cpp
void addOptimizerPoolingTargetOps(TargetOps &ops); // OptimizerPoolingTarget.cpp
void addCollectivesTargetOps(TargetOps &ops);      // CollectivesTarget.cpp

} // namespace memc::kernels

#endif // MEMC_KERNELS_CUDA_CUDATARGETGROUPS_H
