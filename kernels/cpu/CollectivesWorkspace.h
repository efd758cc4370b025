//===- CollectivesWorkspace.h - CPU workspace layouts ------------*- C++ -*-===//
//
// The scratch of reduce_scatter and all_gather: the collectives exchange N equal shards, so a
// tensor whose elements do not divide by the ranks goes through a zero-padded copy of N shards
// (the whole tensor is the reduce_scatter's input and the all_gather's result), and a gather
// into 16 bits rounds its f32 shard first. None when they divide and the types agree. What the
// run functions carve and the CPU workspace rules size (Workspace.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_COLLECTIVESWORKSPACE_H
#define MEMC_KERNELS_CPU_COLLECTIVESWORKSPACE_H

#include "kernels/Collectives.h"
#include "kernels/Kernel.h"
#include "kernels/Workspace.h"

#include <cstdint>

namespace memc::kernels {

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

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_COLLECTIVESWORKSPACE_H
