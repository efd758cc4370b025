//===- CheckGroups.h - how the op check files register ----------*- C++ -*-===//
//
// Each file adds its ops' checks to the table; OpContracts.cpp calls them all once. The groups
// are the kernel files' (kernels/cpu/KernelGroups.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_OPS_CHECKGROUPS_H
#define MEMC_KERNELS_OPS_CHECKGROUPS_H

#include "kernels/ops/OpContracts.h"

namespace memc::kernels {

void addUnaryChecks(OpChecks &table);         // UnaryChecks.cpp
void addBinaryChecks(OpChecks &table);        // BinaryChecks.cpp
void addMatMulChecks(OpChecks &table);        // MatMulChecks.cpp
void addNormalizationChecks(OpChecks &table); // NormalizationChecks.cpp
void addReductionChecks(OpChecks &table);     // ReductionChecks.cpp
void addScanChecks(OpChecks &table);          // ScanChecks.cpp
void addSelectionChecks(OpChecks &table);     // SelectionChecks.cpp
void addLayoutChecks(OpChecks &table);        // LayoutChecks.cpp
void addConvolutionChecks(OpChecks &table);   // ConvolutionChecks.cpp
void addPoolingChecks(OpChecks &table);       // PoolingChecks.cpp
void addAttentionChecks(OpChecks &table);     // AttentionChecks.cpp (forward and backward)

// Training: backward ops, losses and optimizer updates.
void addActivationBackwardChecks(OpChecks &table);    // ActivationBackwardChecks.cpp
void addNormalizationBackwardChecks(OpChecks &table); // NormalizationBackwardChecks.cpp
void addIndexingBackwardChecks(OpChecks &table);      // IndexingBackwardChecks.cpp
void addConvolutionBackwardChecks(OpChecks &table);   // ConvolutionBackwardChecks.cpp
void addPoolingBackwardChecks(OpChecks &table);       // PoolingBackwardChecks.cpp
void addLossChecks(OpChecks &table);                  // LossChecks.cpp
void addOptimizerChecks(OpChecks &table);             // OptimizerChecks.cpp
void addLossScaleChecks(OpChecks &table);             // LossScaleChecks.cpp

// Data parallel: the ranks' collectives.
void addCollectiveChecks(OpChecks &table); // CollectiveChecks.cpp

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_CHECKGROUPS_H
