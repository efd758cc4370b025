//===- CollectiveCalls.h - what every target's collective kernels share -*- C++ -*-===//
//
// What every target's collective kernels share: the ranks a call is compiled for, the run
// functions themselves (given the target's primitives: CollectivePrimitives), and the scratch of
// reduce_scatter and all_gather: the collectives exchange N equal shards, so a
// tensor whose elements do not divide by the ranks goes through a zero-padded copy of N shards
// (the whole tensor is the reduce_scatter's input and the all_gather's result), and a gather
// into 16 bits rounds its f32 shard first. None when they divide and the types agree. What the
// run functions carve and the workspace rules size (Workspace.h), on the CPU and the GPU alike.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_COLLECTIVECALLS_H
#define MEMC_KERNELS_COLLECTIVECALLS_H

#include "kernels/Collectives.h"
#include "kernels/Kernel.h"
#include "kernels/KernelContext.h"
#include "kernels/Workspace.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace memc::kernels {

/// The ranks the call is compiled for (its world_size attribute), or null having failed the
/// context with a message where the program runs as another count.
inline Collectives *callRanks(KernelContext &context, const KernelCall &call, const char *what) {
  int64_t worldSize = attributesOf(call).intOr("world_size", 0);
  if (context.collectives && context.collectives->size() == worldSize)
    return context.collectives;
  context.fail(std::string(what) + ": the program is compiled for " + std::to_string(worldSize) +
               " ranks and runs as " +
               std::to_string(context.collectives ? context.collectives->size() : 1));
  return nullptr;
}

/// The padded copy of `whole` over the call's ranks, or null when its elements divide by them.
inline uint8_t *carvePaddedWhole(const KernelCall &call, const TensorView &whole,
                                 WorkspaceCarver &carver) {
  int64_t worldSize = attributesOf(call).intOr("world_size", 1);
  int64_t elements = whole.numElements();
  int64_t padded = shardElements(elements, worldSize) * worldSize;
  if (padded == elements)
    return nullptr;
  return carver.take<uint8_t>(padded * static_cast<int64_t>(dtypeSize(whole.dtype)));
}

inline uint8_t *carveReduceScatter(const KernelCall &call, WorkspaceCarver &carver) {
  return carvePaddedWhole(call, call.inputs[0], carver);
}

/// all_gather's: the shard rounded to the result's type when narrower, and the padded whole.
struct GatherScratch {
  uint8_t *narrowShard = nullptr;
  uint8_t *paddedWhole = nullptr;
};

inline GatherScratch carveAllGather(const KernelCall &call, WorkspaceCarver &carver) {
  const TensorView &shard = call.inputs[0], &whole = call.outputs[0];
  GatherScratch scratch;
  if (shard.dtype != whole.dtype)
    scratch.narrowShard =
        carver.take<uint8_t>(shard.numElements() * static_cast<int64_t>(dtypeSize(whole.dtype)));
  scratch.paddedWhole = carvePaddedWhole(call, whole, carver);
  return scratch;
}

/// What a target does around the communication. Each returns false having failed the context.
struct CollectivePrimitives {
  /// Moving bytes in the device's memory: memcpy and memset on the CPU, copies enqueued on the
  /// launching stream on a GPU.
  bool (*copy)(KernelContext &context, void *to, const void *from, uint64_t bytes);
  bool (*zero)(KernelContext &context, void *to, uint64_t bytes);
  /// `shard` (f32) rounded into `dtype` (bf16 or f16) elements at `to`.
  bool (*round)(KernelContext &context, const TensorView &shard, void *to, DType dtype);
  /// Whether `op` communicates now: it has no gate (input 1), or its gate is above 0.5.
  bool (*gateOpen)(KernelContext &context, const KernelCall &call, const char *op, bool &open);
};

/// all_reduce: the input reduced over the ranks into the result; where the gate is closed, the
/// input copied to the result (where the planner did not place them together).
inline bool runAllReduceWith(const CollectivePrimitives &target, KernelContext &context,
                             const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  bool open;
  if (!target.gateOpen(context, call, "all_reduce", open) ||
      (result.data != input.data &&
       !target.copy(context, result.data, input.data, input.sizeBytes())))
    return false;
  if (!open)
    return true;
  Collectives *ranks = callRanks(context, call, "all_reduce");
  std::string error;
  return ranks && (ranks->allReduce(result.data, result.numElements(), result.dtype, ReduceOp::Sum,
                                    context.stream, error) ||
                   context.fail("all_reduce: " + error));
}

/// shard: this rank's slice of the whole tensor, zero-padded past the tensor's end.
inline bool runShardWith(const CollectivePrimitives &target, KernelContext &context,
                         const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  Collectives *ranks = callRanks(context, call, "shard");
  if (!ranks)
    return false;
  const uint64_t element = dtypeSize(input.dtype);
  const int64_t shard = result.numElements();
  const int64_t begin = std::min<int64_t>(ranks->rank() * shard, input.numElements());
  const int64_t mine = std::min<int64_t>(shard, input.numElements() - begin);
  auto *out = static_cast<uint8_t *>(result.data);
  return target.copy(context, out, static_cast<const uint8_t *>(input.data) + begin * element,
                     mine * element) &&
         target.zero(context, out + mine * element, (shard - mine) * element);
}

/// reduce_scatter: through the zero-padded copy where the elements do not divide by the ranks.
inline bool runReduceScatterWith(const CollectivePrimitives &target, KernelContext &context,
                                 const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  Collectives *ranks = callRanks(context, call, "reduce_scatter");
  if (!ranks)
    return false;
  WorkspaceCarver carver(call);
  uint8_t *padded = carveReduceScatter(call, carver);
  if (!carver.fits(context))
    return false;
  const void *whole = input.data;
  if (padded) {
    if (!target.copy(context, padded, input.data, input.sizeBytes()) ||
        !target.zero(context, padded + input.sizeBytes(), carver.bytes() - input.sizeBytes()))
      return false;
    whole = padded;
  }
  std::string error;
  return ranks->reduceScatter(whole, result.data, result.numElements(), result.dtype, ReduceOp::Sum,
                              context.stream, error) ||
         context.fail("reduce_scatter: " + error);
}

/// all_gather: the shard (rounded first where the result is narrower) from every rank into the
/// result, through the padded whole where the elements do not divide by the ranks; nothing
/// where the gate is closed.
inline bool runAllGatherWith(const CollectivePrimitives &target, KernelContext &context,
                             const KernelCall &call) {
  const TensorView &shard = call.inputs[0], &result = call.outputs[0];
  bool open;
  if (!target.gateOpen(context, call, "all_gather", open))
    return false;
  if (!open)
    return true;
  Collectives *ranks = callRanks(context, call, "all_gather");
  if (!ranks)
    return false;
  WorkspaceCarver carver(call);
  GatherScratch scratch = carveAllGather(call, carver);
  if (!carver.fits(context) ||
      (scratch.narrowShard && !target.round(context, shard, scratch.narrowShard, result.dtype)))
    return false;
  std::string error;
  if (!ranks->allGather(scratch.narrowShard ? scratch.narrowShard : shard.data,
                        scratch.paddedWhole ? scratch.paddedWhole : result.data,
                        shard.numElements(), result.dtype, context.stream, error))
    return context.fail("all_gather: " + error);
  return !scratch.paddedWhole ||
         target.copy(context, result.data, scratch.paddedWhole, result.sizeBytes());
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_COLLECTIVECALLS_H
