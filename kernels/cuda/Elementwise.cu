//===- Elementwise.cu - the CUDA elementwise kernels ---------------------------------===//
//
// The group's kernels live in Unary.cu, Binary.cu and LossScale.cu, their arithmetic in
// ElementwiseMath.h; this adds them all to the CUDA table.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/ElementwiseKernels.cuh"

namespace memc::kernels {

void addElementwiseCudaKernels(CudaKernelRuns &runs) {
  cuda::addUnaryCudaKernels(runs);
  cuda::addBinaryCudaKernels(runs);
  cuda::addLossScaleCudaKernels(runs);
}

} // namespace memc::kernels
