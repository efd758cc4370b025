//===- CpuKernels.cpp - the CPU backend's kernel table --------------------===//
#include "kernels/cpu/CpuKernels.h"

#include "kernels/cpu/KernelGroups.h"

namespace memc::kernels {

const KernelTable &cpuKernels() {
  static const KernelTable table = [] {
    KernelTable kernels;
    addUnaryKernels(kernels);
    addBinaryKernels(kernels);
    addMatMulKernels(kernels);
    addNormalizationKernels(kernels);
    addReductionKernels(kernels);
    addLayoutKernels(kernels);
    addConvolutionKernels(kernels);
    addPoolingKernels(kernels);
    addActivationBackwardKernels(kernels);
    addNormalizationBackwardKernels(kernels);
    addIndexingBackwardKernels(kernels);
    addConvolutionBackwardKernels(kernels);
    addPoolingBackwardKernels(kernels);
    addLossKernels(kernels);
    addOptimizerKernels(kernels);
    return kernels;
  }();
  return table;
}

} // namespace memc::kernels
