//===- CollectivesTarget.cpp - the CUDA collective ops --------------------===//
//
// The ranks' collectives (Collectives.cpp) run NCCL's, on the dtypes NCCL carries, with the
// padded copies of kernels/CollectiveCalls.h as workspace. What the CUDA target refuses, naming
// why: a gated collective (--grad-accum with --world-size, whose gate is the micro-batch's
// apply flag in device memory: deciding on the host whether to communicate would wait for the
// device at every collective), and an all_gather rounding an f32 shard into a 16-bit result
// (ZeRO stage 3 with 16-bit weight copies).
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

/// The call's tensors are of NCCL's dtypes and, for all_reduce, reduce_scatter and all_gather,
/// it has no gate.
bool collectiveFits(const KernelCall &call, const char *op, bool gated, std::string &error) {
  if (gated && call.inputs.size() == 2) {
    error = std::string(op) +
            " gated by the micro-batch's apply flag (--grad-accum with "
            "--world-size) runs on target 'cpu' only for now: the CUDA target communicates on "
            "every micro-batch it is given";
    return false;
  }
  if (ncclCarries(call.outputs[0].dtype) && ncclCarries(call.inputs[0].dtype))
    return true;
  error =
      std::string(op) + ": NCCL does not carry " + dtypeName(call.outputs[0].dtype) + " tensors";
  return false;
}

} // namespace

void addCollectivesTargetOps(TargetOps &ops) {
  ops["all_reduce"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return collectiveFits(call, "all_reduce", /*gated=*/true, error);
  }};
  ops["shard"] = TargetOp{[](const KernelCall &call, std::string &error) {
    return collectiveFits(call, "shard", /*gated=*/false, error);
  }};
  ops["reduce_scatter"] =
      TargetOp{[](const KernelCall &call, std::string &error) {
                 return collectiveFits(call, "reduce_scatter", /*gated=*/true, error);
               },
               &carvedWorkspaceBytes<carveReduceScatter>};
  ops["all_gather"] = TargetOp{
      [](const KernelCall &call, std::string &error) {
        if (!collectiveFits(call, "all_gather", /*gated=*/true, error))
          return false;
        if (call.inputs[0].dtype == call.outputs[0].dtype)
          return true;
        error = std::string("all_gather: the CUDA target gathers shards of the result's dtype; ") +
                "rounding an f32 shard into " + dtypeName(call.outputs[0].dtype) +
                " (ZeRO stage 3 with 16-bit weight copies) runs on target 'cpu' only for now";
        return false;
      },
      &carvedWorkspaceBytes<carveAllGather>};
}

} // namespace memc::kernels
