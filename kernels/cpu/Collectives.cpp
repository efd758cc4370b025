//===- Collectives.cpp - the ranks' collectives on the CPU ----------------===//
//
// The communication runs through the context's Collectives (MPI on CPU ranks); these kernels
// place the bytes: the input copied to the result where the planner did not place them
// together, ZeRO's zero-padded shards, and nothing at all where the gate is off.
//
//===----------------------------------------------------------------------===//
#include "kernels/Collectives.h"
#include "kernels/Float16.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/CollectivesWorkspace.h"
#include "kernels/cpu/KernelGroups.h"

#include <algorithm>
#include <cstring>

namespace memc::kernels {
namespace {

/// The ranks the call is compiled for, or null with a message where the program runs as
/// another count.
Collectives *ranksOf(KernelContext &context, const KernelCall &call, const char *what) {
  int64_t worldSize = attributesOf(call).intOr("world_size", 0);
  if (context.collectives && context.collectives->size() == worldSize)
    return context.collectives;
  context.fail(std::string(what) + ": the program is compiled for " + std::to_string(worldSize) +
               " ranks and runs as " +
               std::to_string(context.collectives ? context.collectives->size() : 1));
  return nullptr;
}

bool gateIsOff(const KernelCall &call) {
  return call.inputs.size() == 2 && ScalarOperand<float>(call.inputs[1]).get() <= 0.5f;
}

bool runAllReduce(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  if (result.data != input.data)
    std::memcpy(result.data, input.data, input.sizeBytes());
  if (gateIsOff(call))
    return true;
  Collectives *ranks = ranksOf(context, call, "all_reduce");
  std::string error;
  if (ranks && !ranks->allReduce(result.data, result.numElements(), result.dtype, ReduceOp::Sum,
                                 context.stream, error))
    return context.fail("all_reduce: " + error);
  return ranks != nullptr;
}

bool runShard(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  Collectives *ranks = ranksOf(context, call, "shard");
  if (!ranks)
    return false;
  const size_t element = dtypeSize(input.dtype);
  const int64_t shard = result.numElements();
  const int64_t begin = std::min<int64_t>(ranks->rank() * shard, input.numElements());
  const int64_t mine = std::min<int64_t>(shard, input.numElements() - begin);
  auto *out = static_cast<uint8_t *>(result.data);
  std::memcpy(out, static_cast<const uint8_t *>(input.data) + begin * element, mine * element);
  std::memset(out + mine * element, 0, (shard - mine) * element);
  return true;
}

bool runReduceScatter(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  Collectives *ranks = ranksOf(context, call, "reduce_scatter");
  if (!ranks)
    return false;
  WorkspaceCarver carver(call);
  uint8_t *padded = carveReduceScatter(call, carver);
  if (!carver.fits(context))
    return false;
  const void *whole = input.data;
  if (padded) {
    std::memcpy(padded, input.data, input.sizeBytes());
    std::memset(padded + input.sizeBytes(), 0, carver.bytes() - input.sizeBytes());
    whole = padded;
  }
  std::string error;
  if (!ranks->reduceScatter(whole, result.data, result.numElements(), result.dtype,
                            ReduceOp::Sum, context.stream, error))
    return context.fail("reduce_scatter: " + error);
  return true;
}

bool runAllGather(KernelContext &context, const KernelCall &call) {
  const TensorView &shard = call.inputs[0], &result = call.outputs[0];
  if (gateIsOff(call))
    return true;
  Collectives *ranks = ranksOf(context, call, "all_gather");
  if (!ranks)
    return false;
  WorkspaceCarver carver(call);
  GatherScratch scratch = carveAllGather(call, carver);
  if (!carver.fits(context))
    return false;
  const void *mine = shard.data;
  if (scratch.narrowShard) {
    const float *from = static_cast<const float *>(shard.data);
    auto *to = reinterpret_cast<uint16_t *>(scratch.narrowShard);
    for (int64_t i = 0; i < shard.numElements(); ++i)
      to[i] = result.dtype == DType::BF16 ? floatToBFloat16(from[i]) : floatToHalf(from[i]);
    mine = scratch.narrowShard;
  }
  std::string error;
  if (!ranks->allGather(mine, scratch.paddedWhole ? scratch.paddedWhole : result.data,
                        shard.numElements(), result.dtype, context.stream, error))
    return context.fail("all_gather: " + error);
  if (scratch.paddedWhole)
    std::memcpy(result.data, scratch.paddedWhole, result.sizeBytes());
  return true;
}

} // namespace

void addCollectiveKernels(KernelRuns &table) {
  table["all_reduce"] = &runAllReduce;
  table["shard"] = &runShard;
  table["reduce_scatter"] = &runReduceScatter;
  table["all_gather"] = &runAllGather;
}

} // namespace memc::kernels
