//===- Collectives.cpp - the ranks' collectives on the CPU ----------------===//
//
// The communication runs through the context's Collectives (MPI on CPU ranks); the run
// functions are kernels/CollectiveCalls.h's with the host's primitives: memcpy and memset, the
// rounding of an f32 shard for a 16-bit gather, the gate read where the kernels compute.
//
//===----------------------------------------------------------------------===//
#include "kernels/CollectiveCalls.h"
#include "kernels/Float16.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/KernelGroups.h"

#include <cstring>

namespace memc::kernels {
namespace {

bool hostCopy(KernelContext &, void *to, const void *from, uint64_t bytes) {
  std::memcpy(to, from, bytes);
  return true;
}

bool hostZero(KernelContext &, void *to, uint64_t bytes) {
  std::memset(to, 0, bytes);
  return true;
}

bool hostRound(KernelContext &, const TensorView &shard, void *to, DType dtype) {
  const float *from = static_cast<const float *>(shard.data);
  auto *narrow = static_cast<uint16_t *>(to);
  for (int64_t i = 0; i < shard.numElements(); ++i)
    narrow[i] = dtype == DType::BF16 ? floatToBFloat16(from[i]) : floatToHalf(from[i]);
  return true;
}

/// The gate is read where the kernels compute: host memory.
bool hostGateOpen(KernelContext &, const KernelCall &call, const char *, bool &open) {
  open = call.inputs.size() < 2 || ScalarOperand<float>(call.inputs[1]).get() > 0.5f;
  return true;
}

constexpr CollectivePrimitives kHost{&hostCopy, &hostZero, &hostRound, &hostGateOpen};

bool runAllReduce(KernelContext &context, const KernelCall &call) {
  return runAllReduceWith(kHost, context, call);
}

bool runShard(KernelContext &context, const KernelCall &call) {
  return runShardWith(kHost, context, call);
}

bool runReduceScatter(KernelContext &context, const KernelCall &call) {
  return runReduceScatterWith(kHost, context, call);
}

bool runAllGather(KernelContext &context, const KernelCall &call) {
  return runAllGatherWith(kHost, context, call);
}

} // namespace

void addCollectiveKernels(KernelRuns &table) {
  table["all_reduce"] = &runAllReduce;
  table["shard"] = &runShard;
  table["reduce_scatter"] = &runReduceScatter;
  table["all_gather"] = &runAllGather;
}

} // namespace memc::kernels
