//===- CudaKernels.cpp - the CUDA backend's kernel table ------------------===//
#include "kernels/cuda/CudaKernels.h"

#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaTarget.h"

namespace memc::kernels {

const KernelTable &cudaKernels() {
  static const KernelTable table = [] {
    CudaKernelRuns runs;
    addElementwiseCudaKernels(runs);
    addRowCudaKernels(runs);
    addLayoutCudaKernels(runs);
    addMatMulCudaKernels(runs);
    addAttentionCudaKernels(runs);
    addOptimizerPoolingCudaKernels(runs);
    addCollectiveCudaKernels(runs);
    return withRuns(contractsOf(cudaTarget()), runs);
  }();
  return table;
}

} // namespace memc::kernels
