//===- CudaTarget.cpp - the CUDA target's record --------------------------===//
#include "kernels/cuda/CudaTarget.h"

#include "kernels/cuda/CudaTargetGroups.h"

namespace memc::kernels {
namespace {

const TargetOps &cudaOps() {
  static const TargetOps ops = [] {
    TargetOps all;
    addElementwiseTargetOps(all);
    addRowTargetOps(all);
    addLayoutTargetOps(all);
    addMatMulTargetOps(all);
    addAttentionTargetOps(all);
    addOptimizerPoolingTargetOps(all);
    addCollectivesTargetOps(all);
    return all;
  }();
  return ops;
}

/// cudaMalloc's granularity: constants start where a 128-bit load of any dtype is aligned.
constexpr Target kCuda{kCudaTarget, 256, /*stagesInputs=*/true, cudaOps};

} // namespace

const Target &cudaTarget() { return kCuda; }

} // namespace memc::kernels
