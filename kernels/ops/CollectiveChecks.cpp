//===- CollectiveChecks.cpp - the checks of the ranks' collectives --------===//
#include "kernels/Collectives.h"
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"
#include "kernels/ops/TypeClasses.h"

namespace memc::kernels {
namespace {

bool checkWorldSize(const KernelCall &call, int64_t &worldSize, std::string &error) {
  if (!requireInt(attributesOf(call), "world_size", worldSize, error))
    return false;
  if (worldSize >= 2 && worldSize <= kMaxWorldSize)
    return true;
  error = "world_size must be in [2, " + std::to_string(kMaxWorldSize) + "], got " +
          std::to_string(worldSize);
  return false;
}

/// An optional gate, the f32 scalar at input 1.
bool checkGate(const KernelCall &call, std::string &error) {
  return call.inputs.size() < 2 || (checkDType(call.inputs[1], {DType::F32}, "gate", error) &&
                                    checkShape(call.inputs[1], {}, "gate", error));
}

/// `shard` is the flat shard of `whole` over the call's ranks, of the same dtype.
bool checkShardOf(const KernelCall &call, const TensorView &whole, const TensorView &shard,
                  std::string &error) {
  int64_t worldSize;
  return checkWorldSize(call, worldSize, error) &&
         checkSameDType(shard, whole, "shard", "whole tensor", error) &&
         checkShape(shard, {shardElements(whole.numElements(), worldSize)}, "shard", error);
}

/// Inputs: the tensor (a float type) and optionally the gate. Output: the sum, the input's
/// dtype and shape.
bool checkAllReduce(const KernelCall &call, std::string &error) {
  int64_t worldSize;
  return checkCall(call, 1, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "input", error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "result", error) &&
         checkGate(call, error) && checkWorldSize(call, worldSize, error);
}

/// Input: a tensor of any dtype; output: its flat shard.
bool checkShard(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkShardOf(call, call.inputs[0], call.outputs[0], error);
}

/// Input: a float tensor; output: the flat shard of its sum.
bool checkReduceScatter(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "input", error) &&
         checkShardOf(call, call.inputs[0], call.outputs[0], error);
}

/// Inputs: a shard and optionally the gate; output: the whole tensor, of the shard's dtype or
/// bf16/f16 of an f32 shard.
bool checkAllGather(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 1, 2, 1, error) || !checkGate(call, error))
    return false;
  const TensorView &shard = call.inputs[0], &whole = call.outputs[0];
  if (shard.dtype != whole.dtype &&
      !(shard.dtype == DType::F32 && (whole.dtype == DType::BF16 || whole.dtype == DType::F16))) {
    error = std::string("gathers ") + dtypeName(shard.dtype) + " shards into " +
            dtypeName(whole.dtype) + ": the result is the shards' dtype, or bf16/f16 of f32";
    return false;
  }
  TensorView sameType = whole;
  sameType.dtype = shard.dtype;
  return checkShardOf(call, sameType, shard, error);
}

} // namespace

void addCollectiveChecks(OpChecks &table) {
  table["all_reduce"] = &checkAllReduce;
  table["shard"] = &checkShard;
  table["reduce_scatter"] = &checkReduceScatter;
  table["all_gather"] = &checkAllGather;
}

} // namespace memc::kernels
