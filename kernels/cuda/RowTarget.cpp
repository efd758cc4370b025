//===- RowTarget.cpp - the CUDA row group's ops ---------------------------===//
//
// softmax, log_softmax and their gradients, layer_norm, add_layer_norm, rms_norm, batch_norm
// and their gradients, batch_moments, the six reductions, cumsum, cross_entropy and its gradient:
// every dtype their checks allow. The reductions refuse inputs whose dimensions merge into more
// than kMaxDimGroups groups of kept or reduced ones (never a tensor of rank 16 or less).
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaTargetGroups.h"
#include "kernels/cuda/RowWorkspace.h"

namespace memc::kernels {
namespace {

using namespace cuda::rows;

template <const char *Name> bool reductionLimits(const KernelCall &call, std::string &error) {
  ReductionPlan plan;
  if (reductionPlanOf(call, plan))
    return true;
  error = std::string(Name) + " on CUDA takes at most " + std::to_string(kMaxDimGroups) +
          " groups of adjacent kept or reduced dimensions; input " +
          formatShape(call.inputs[0].shape) + " has more";
  return false;
}

template <const char *Name> TargetOp reduction() {
  return TargetOp{&reductionLimits<Name>, &carvedWorkspaceBytes<carveReduction>};
}

} // namespace

void addRowTargetOps(TargetOps &ops) {
  ops["softmax"] = TargetOp{};
  ops["log_softmax"] = TargetOp{};
  ops["softmax_grad"] = TargetOp{};
  ops["log_softmax_grad"] = TargetOp{};
  ops["layer_norm"] = TargetOp{};
  ops["add_layer_norm"] = TargetOp{};
  ops["rms_norm"] = TargetOp{};
  ops["layer_norm_grad"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveRowNormGrad>};
  ops["rms_norm_grad"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveRowNormGrad>};
  ops["batch_norm"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveBatchNorm>};
  ops["batch_norm_grad"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveBatchNormGrad>};
  ops["batch_moments"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveBatchMoments>};
  ops[kReduceSum] = reduction<kReduceSum>();
  ops[kReduceMean] = reduction<kReduceMean>();
  ops[kReduceMax] = reduction<kReduceMax>();
  ops[kReduceProd] = reduction<kReduceProd>();
  ops[kReduceL2] = reduction<kReduceL2>();
  ops[kReduceLogSumExp] = reduction<kReduceLogSumExp>();
  ops["cumsum"] = TargetOp{};
  ops["cross_entropy"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveCrossEntropy>};
  ops["cross_entropy_grad"] = TargetOp{nullptr, &carvedWorkspaceBytes<carveCrossEntropyGrad>};
}

} // namespace memc::kernels
