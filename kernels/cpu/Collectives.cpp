//===- Collectives.cpp - the ranks' collectives on the CPU ----------------===//
//
// The communication runs through the context's Collectives (MPI on CPU ranks); these kernels
// place the bytes: the input copied to the result where the planner did not place them
// together, ZeRO's zero-padded shards, and nothing at all where the gate is off.
//
//===----------------------------------------------------------------------===//
#include "kernels/CollectiveCalls.h"
#include "kernels/Float16.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/KernelGroups.h"

#include <algorithm>
#include <cstring>

namespace memc::kernels {
namespace {

bool gateIsOff(const KernelCall &call) {
  return call.inputs.size() == 2 && ScalarOperand<float>(call.inputs[1]).get() <= 0.5f;
}

bool hostCopy(KernelContext &, void *to, const void *from, uint64_t bytes) {
  std::memcpy(to, from, bytes);
  return true;
}

bool hostZero(KernelContext &, void *to, uint64_t bytes) {
  std::memset(to, 0, bytes);
  return true;
}

constexpr ByteMoves kHostMoves{&hostCopy, &hostZero};

bool runAllReduce(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  if (gateIsOff(call))
    return result.data == input.data ||
           hostCopy(context, result.data, input.data, input.sizeBytes());
  Collectives *ranks = callRanks(context, call, "all_reduce");
  return ranks && reduceAll(kHostMoves, *ranks, context, call);
}

bool runShard(KernelContext &context, const KernelCall &call) {
  return placeShard(kHostMoves, context, call);
}

bool runReduceScatter(KernelContext &context, const KernelCall &call) {
  Collectives *ranks = callRanks(context, call, "reduce_scatter");
  return ranks && scatterReduced(kHostMoves, *ranks, context, call);
}

bool runAllGather(KernelContext &context, const KernelCall &call) {
  const TensorView &shard = call.inputs[0], &result = call.outputs[0];
  if (gateIsOff(call))
    return true;
  Collectives *ranks = callRanks(context, call, "all_gather");
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
  return gatherAll(kHostMoves, *ranks, context, call, scratch, mine);
}

} // namespace

void addCollectiveKernels(KernelRuns &table) {
  table["all_reduce"] = &runAllReduce;
  table["shard"] = &runShard;
  table["reduce_scatter"] = &runReduceScatter;
  table["all_gather"] = &runAllGather;
}

} // namespace memc::kernels
