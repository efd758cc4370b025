//===- AttentionTarget.cpp - the CUDA attention group's ops -----------------------===//
//
// flash_attention and flash_attention_grad (FlashAttention.cu): every element type the op
// takes, head dimensions up to kMaxCudaAttentionHeadDim (AttentionCall.h). The forward needs
// no scratch; the backward keeps D = rowsum(dO * O) of each query row.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/AttentionCall.h"
#include "kernels/cuda/CudaTargetGroups.h"

namespace memc::kernels {
namespace {

/// The head dimensions of the call whose query, key and value are inputs[first, first + 3).
bool checkHeadDims(const KernelCall &call, size_t first, const char *op, std::string &error) {
  cuda::AttentionDims dims = cuda::attentionDims(call, first);
  if (dims.headDim <= cuda::kMaxCudaAttentionHeadDim &&
      dims.valueDim <= cuda::kMaxCudaAttentionHeadDim)
    return true;
  error = std::string(op) + " on the CUDA target takes head dimensions up to " +
          std::to_string(cuda::kMaxCudaAttentionHeadDim) + ", got " + std::to_string(dims.headDim) +
          " (query, key) and " + std::to_string(dims.valueDim) + " (value)";
  return false;
}

bool flashAttentionLimits(const KernelCall &call, std::string &error) {
  return checkHeadDims(call, 0, "flash_attention", error);
}

bool flashAttentionGradLimits(const KernelCall &call, std::string &error) {
  return checkHeadDims(call, 1, "flash_attention_grad", error);
}

} // namespace

void addAttentionTargetOps(TargetOps &ops) {
  ops["flash_attention"] = TargetOp{&flashAttentionLimits, nullptr};
  ops["flash_attention_grad"] =
      TargetOp{&flashAttentionGradLimits, &carvedWorkspaceBytes<&cuda::carveAttentionRowDots>};
}

} // namespace memc::kernels
