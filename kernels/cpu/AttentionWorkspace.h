//===- AttentionWorkspace.h - CPU workspace layouts of attention -*- C++ -*-===//
//
// The scratch layout of flash_attention and flash_attention_grad: what the run functions carve
// from call.workspace and what the CPU workspace rules (CpuWorkspaces.cpp) size, one walk for
// both (Workspace.h). Each slot holds a few f32 tiles of kAttentionBlock rows (queries or keys),
// so the scratch grows with the head dimensions, never with the number of tokens. Free of
// OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ATTENTIONWORKSPACE_H
#define MEMC_KERNELS_CPU_ATTENTIONWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// Queries and keys per tile: 64 x 64 scores (16 KiB of f32) stay in L1/L2 with the tiles of
/// q, k and v beside them.
inline constexpr int64_t kAttentionBlock = 64;

inline int64_t attentionBlocks(int64_t tokens) {
  return (tokens + kAttentionBlock - 1) / kAttentionBlock;
}

/// The sizes of one call, from the query, key and value at inputs[first, first + 3).
struct AttentionSizes {
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;

  AttentionSizes(const KernelCall &call, size_t first) {
    const auto &q = call.inputs[first].shape, &v = call.inputs[first + 2].shape;
    batch = q[0];
    heads = q[1];
    kvHeads = v[1];
    queries = q[2];
    keys = v[2];
    headDim = q[3];
    valueDim = v[3];
  }
  bool empty() const { return batch == 0 || heads == 0 || queries == 0; }
  /// Tasks of tiles of queries: one per (batch, head, block of queries).
  int64_t queryTasks() const { return batch * heads * attentionBlocks(queries); }
  /// Tasks of tiles of keys: one per (batch, kv head, block of keys).
  int64_t keyTasks() const { return batch * kvHeads * attentionBlocks(keys); }
};

/// One slot's tiles, each kAttentionBlock rows (or columns) of f32. The forward uses queries,
/// keysT, values, scores, product, accumulator and the row statistics; the backward all but
/// `values` and `accumulator`, in two passes (keys' tiles, then queries').
struct AttentionTiles {
  float *queries = nullptr;     // [block, D]
  float *keys = nullptr;        // [block, D]
  float *keysT = nullptr;       // [D, block]
  float *values = nullptr;      // [block, Dv]
  float *valuesT = nullptr;     // [Dv, block]
  float *outputGrad = nullptr;  // [block, Dv]
  float *scores = nullptr;      // [block, block]: scores, then probabilities
  float *scoresGrad = nullptr;  // [block, block]: dP, then dS
  float *transposed = nullptr;  // [block, block]: P^T or dS^T
  float *product = nullptr;     // [block, max(D, Dv)]: one tile product before it is added
  float *accumulator = nullptr; // [block, max(D, Dv)]: O, dQ, dK
  float *valueGrad = nullptr;   // [block, Dv]: dV
  float *rowMax = nullptr, *rowSum = nullptr; // [block]: running max and sum, or lse and D
};

struct AttentionScratch {
  int64_t slots = 0;
  int64_t stride = 0; // elements between one slot's tiles and the next slot's
  float *base = nullptr;
};

/// Elements of one slot's tiles, and their layout from `base`.
inline int64_t layAttentionTiles(const AttentionSizes &sizes, bool backward, float *base,
                                 AttentionTiles &tiles) {
  const int64_t block = kAttentionBlock, d = sizes.headDim, dv = sizes.valueDim;
  const int64_t wide = std::max(d, dv);
  int64_t offset = 0;
  auto take = [&](float *&tile, int64_t count) {
    tile = base ? base + offset : nullptr;
    // Whole cache lines per tile (16 floats), so tiles never share one between slots.
    offset += (count + 15) / 16 * 16;
  };
  take(tiles.queries, block * d);
  take(tiles.keysT, d * block);
  take(tiles.scores, block * block);
  take(tiles.product, block * wide);
  take(tiles.accumulator, block * wide);
  take(tiles.rowMax, block);
  take(tiles.rowSum, block);
  if (!backward) {
    take(tiles.values, block * dv);
    return offset;
  }
  take(tiles.keys, block * d);
  take(tiles.valuesT, dv * block);
  take(tiles.outputGrad, block * dv);
  take(tiles.scoresGrad, block * block);
  take(tiles.transposed, block * block);
  take(tiles.valueGrad, block * dv);
  return offset;
}

/// Slot `slot`'s tiles in `scratch`.
inline AttentionTiles attentionSlot(const AttentionScratch &scratch, const AttentionSizes &sizes,
                                    bool backward, int64_t slot) {
  AttentionTiles tiles;
  layAttentionTiles(sizes, backward, scratch.base + slot * scratch.stride, tiles);
  return tiles;
}

/// The forward's slots over its query tasks; the backward's over the larger of its two passes.
inline AttentionScratch carveAttention(const KernelCall &call, WorkspaceCarver &carver,
                                       bool backward) {
  AttentionScratch scratch;
  AttentionSizes sizes(call, backward ? 1 : 0);
  if (sizes.empty())
    return scratch;
  scratch.slots = workspaceSlots(0, sizes.queryTasks(), 1);
  if (backward)
    scratch.slots = std::max(scratch.slots, workspaceSlots(0, sizes.keyTasks(), 1));
  AttentionTiles layout;
  scratch.stride = layAttentionTiles(sizes, backward, nullptr, layout);
  scratch.base = carver.take<float>(scratch.slots * scratch.stride);
  return scratch;
}

inline AttentionScratch carveFlashAttention(const KernelCall &call, WorkspaceCarver &carver) {
  return carveAttention(call, carver, false);
}

inline AttentionScratch carveFlashAttentionGrad(const KernelCall &call, WorkspaceCarver &carver) {
  return carveAttention(call, carver, true);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ATTENTIONWORKSPACE_H
