//===- CpuKernels.cpp - the CPU backend's kernel table --------------------===//
#include "kernels/cpu/CpuKernels.h"

#include "kernels/cpu/CpuTarget.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"

namespace memc::kernels {

const KernelTable &cpuKernels() {
  static const KernelTable table = [] {
    useSingleThreadedBlas(); // before any step: OpenBLAS's own threads would take the cores
    KernelRuns runs;
    addUnaryKernels(runs);
    addBinaryKernels(runs);
    addMatMulKernels(runs);
    addMatMulNf4Kernels(runs);
    addNormalizationKernels(runs);
    addReductionKernels(runs);
    addScanKernels(runs);
    addSelectionKernels(runs);
    addLayoutKernels(runs);
    addConvolutionKernels(runs);
    addPoolingKernels(runs);
    addAttentionKernels(runs);
    addActivationBackwardKernels(runs);
    addNormalizationBackwardKernels(runs);
    addIndexingBackwardKernels(runs);
    addConvolutionBackwardKernels(runs);
    addPoolingBackwardKernels(runs);
    addAttentionBackwardKernels(runs);
    addLossKernels(runs);
    addLinearCrossEntropyKernels(runs);
    addOptimizerKernels(runs);
    addLossScaleKernels(runs);
    addCollectiveKernels(runs);
    // Each run with its op's check and the CPU target's workspace rule: the entries the compiler
    // planned with.
    return withRuns(contractsOf(cpuTarget()), runs);
  }();
  return table;
}

} // namespace memc::kernels
