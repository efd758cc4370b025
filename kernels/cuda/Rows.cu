//===- Rows.cu - the CUDA row group's kernels -----------------------------===//
//
// The group's ops, one file per family: Softmax.cu, RowNorm.cu, BatchNorm.cu, Reduction.cu,
// Scan.cu and CrossEntropy.cu (their shared pieces in RowKernels.cuh, their arithmetic in
// RowMath.h and ReductionMath.h, their scratch in RowWorkspace.h).
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/RowKernels.cuh"

namespace memc::kernels {

void addRowCudaKernels(CudaKernelRuns &runs) {
  cuda::rows::addSoftmaxCudaKernels(runs);
  cuda::rows::addRowNormCudaKernels(runs);
  cuda::rows::addBatchNormCudaKernels(runs);
  cuda::rows::addReductionCudaKernels(runs);
  cuda::rows::addScanCudaKernels(runs);
  cuda::rows::addCrossEntropyCudaKernels(runs);
}

} // namespace memc::kernels
