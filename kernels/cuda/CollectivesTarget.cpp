//===- CollectivesTarget.cpp - the CUDA collective ops --------------------===//
//
// The ranks' collectives (Collectives.cpp) run NCCL's, on the dtypes NCCL carries, with the
// padded copies of kernels/CollectiveCalls.h as workspace (and, for ZeRO stage 3's gather into
// 16-bit weight copies, the rounded shard); a gate (--grad-accum with --world-size) is read from
// the host's copy of the apply flag.
//
//===----------------------------------------------------------------------===//
#include "kernels/CollectiveCalls.h"
#include "kernels/cuda/CudaTargetGroups.h"

#include <string>

namespace memc::kernels {
namespace {

/// The dtypes NCCL reduces and gathers (runtime/comm/NcclCollectives.cpp).
bool ncclCarries(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16 ||
         dtype == DType::I64 || dtype == DType::I32;
}

/// The call's tensors are of NCCL's dtypes.
bool collectiveFits(const KernelCall &call, const char *op, std::string &error) {
  if (ncclCarries(call.outputs[0].dtype) && ncclCarries(call.inputs[0].dtype))
    return true;
  error =
      std::string(op) + ": NCCL does not carry " + dtypeName(call.outputs[0].dtype) + " tensors";
  return false;
}

} // namespace

void addCollectivesTargetOps(TargetOps &ops) {
  ops["all_reduce"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return collectiveFits(call, "all_reduce", error);
  }};
  ops["shard"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return collectiveFits(call, "shard", error);
  }};
  ops["reduce_scatter"] = TargetOp{[](const KernelCall &call, std::string &error) {
                                     return collectiveFits(call, "reduce_scatter", error);
                                   },
                                   &carvedWorkspaceBytes<carveReduceScatter>};
  ops["all_gather"] = TargetOp{[](const KernelCall &call, std::string &error) {
                                 return collectiveFits(call, "all_gather", error);
                               },
                               &carvedWorkspaceBytes<carveAllGather>};
}

} // namespace memc::kernels
