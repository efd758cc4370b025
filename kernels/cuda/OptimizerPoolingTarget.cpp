//===- OptimizerPoolingTarget.cpp - the CUDA optimizer and pooling ops ----===//
//
// The optimizers (Optimizers.cu) cover every call their checks accept and need no scratch.
// The pooling kernels (Pooling.cu) take windows of 1 to 3 spatial dimensions; max_pool_grad
// saves each window's maximum tap as an int32 index in its workspace, so its windows have
// fewer than 2^31 taps.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaTargetGroups.h"
#include "kernels/cuda/PoolingMath.h"

#include <cstdint>
#include <limits>
#include <string>

namespace memc::kernels {
namespace {

/// The call's windows have at most cuda::kPoolDims spatial dimensions (every pooling op's
/// first output has the rank of its windowed tensor).
bool poolRankFits(const KernelCall &call, const char *op, std::string &error) {
  const int64_t spatial = call.outputs[0].rank() - 2;
  if (spatial <= cuda::kPoolDims)
    return true;
  error = std::string(op) + ": the CUDA target pools over 1 to " + std::to_string(cuda::kPoolDims) +
          " spatial dimensions, got " + std::to_string(spatial);
  return false;
}

bool maxPoolGradFits(const KernelCall &call, std::string &error) {
  if (!poolRankFits(call, "max_pool_grad", error))
    return false;
  const cuda::PoolGeometry geometry =
      cuda::poolGeometry(call.inputs[1].shape, call.inputs[0].shape, attributesOf(call));
  if (geometry.windowTaps <= std::numeric_limits<int32_t>::max())
    return true;
  error = "max_pool_grad: the CUDA target saves a window's maximum tap as an int32 index; a "
          "window of " +
          std::to_string(geometry.windowTaps) + " taps does not fit";
  return false;
}

/// One int32 tap index per window (per element of the grad).
uint64_t maxPoolGradWorkspace(const KernelCall &call) {
  return alignedToWorkspace(static_cast<uint64_t>(call.inputs[0].numElements()) * sizeof(int32_t));
}

} // namespace

void addOptimizerPoolingTargetOps(TargetOps &ops) {
  ops["sgd_update"] = TargetOp{};
  ops["adamw_update"] = TargetOp{};
  ops["adamw8bit_update"] = TargetOp{};
  ops["max_pool"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return poolRankFits(call, "max_pool", error);
  }};
  ops["max_pool_with_argmax"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return poolRankFits(call, "max_pool_with_argmax", error);
  }};
  ops["avg_pool"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return poolRankFits(call, "avg_pool", error);
  }};
  ops["max_pool_grad"] = TargetOp{&maxPoolGradFits, &maxPoolGradWorkspace};
  ops["max_pool_grad_argmax"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return poolRankFits(call, "max_pool_grad_argmax", error);
  }};
  ops["avg_pool_grad"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return poolRankFits(call, "avg_pool_grad", error);
  }};
}

} // namespace memc::kernels
