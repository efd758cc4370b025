//===- AttentionWorkspace.h - CPU workspace layouts of attention -*- C++ -*-===//
//
// The scratch layout of flash_attention and flash_attention_grad: what the run functions carve
// from call.workspace and what the CPU workspace rules (CpuTarget.cpp) size, one walk for
// both (Workspace.h). Each slot holds a few f32 tiles of up to kAttentionBlock rows (queries or
// keys), so the scratch grows with the head dimensions, never with the number of tokens. Free of
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
/// q, k and v beside them. Shorter sequences take tiles of their length, so the scratch is never
/// more than the unfused scores would be.
inline constexpr int64_t kAttentionBlock = 64;

/// Multiply-adds below which a piece of attention work is not worth a slot of its own.
inline constexpr double kAttentionSlotWork = 1 << 20;

inline int64_t grainFor(double workPerTask) {
  return static_cast<int64_t>(std::clamp(kAttentionSlotWork / std::max(workPerTask, 1.0), 1.0,
                                         static_cast<double>(int64_t{1} << 40)));
}

/// The most f32 scratch per slot the one-pass backward may take for a 16-bit query gradient
/// (a kv head's group of heads, every query); beyond it the backward takes two passes.
inline constexpr int64_t kOnePassQueryGradBytes = int64_t{4} << 20;

/// The sizes of one call, from the query, key and value at inputs[first, first + 3).
struct AttentionSizes {
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;
  /// Rows of a tile of queries and of keys.
  int64_t queryBlock, keyBlock;
  bool f32; // the operands' dtype

  AttentionSizes(const KernelCall &call, size_t first) {
    f32 = call.inputs[first].dtype == DType::F32;
    const auto &q = call.inputs[first].shape, &v = call.inputs[first + 2].shape;
    batch = q[0];
    heads = q[1];
    kvHeads = v[1];
    queries = q[2];
    keys = v[2];
    headDim = q[3];
    valueDim = v[3];
    queryBlock = std::clamp<int64_t>(queries, 1, kAttentionBlock);
    keyBlock = std::clamp<int64_t>(keys, 1, kAttentionBlock);
  }
  int64_t queryBlocks() const { return (queries + queryBlock - 1) / queryBlock; }
  int64_t keyBlocks() const { return (keys + keyBlock - 1) / keyBlock; }
  bool empty() const { return batch == 0 || heads == 0 || queries == 0; }
  /// Tasks per slot of each pass: enough multiply-adds (kAttentionSlotWork) per piece that a
  /// short sequence does not take a slot, and a thread, per tiny tile.
  int64_t queryTaskGrain() const {
    return grainFor(static_cast<double>(queryBlock) * keys * (headDim + valueDim));
  }
  int64_t keyTaskGrain() const {
    return grainFor(static_cast<double>(keyBlock) * queries * (heads / kvHeads) *
                    (headDim + valueDim));
  }
  /// Tasks of tiles of queries: one per (batch, head, block of queries).
  int64_t queryTasks() const { return batch * heads * queryBlocks(); }
  /// Tasks of tiles of keys: one per (batch, kv head, block of keys).
  int64_t keyTasks() const { return batch * kvHeads * keyBlocks(); }
  /// (batch, kv head) pairs: the one-pass backward's tasks.
  int64_t pairs() const { return batch * kvHeads; }
  /// The query gradient of one pair (its group of heads, every query), in elements.
  int64_t pairQueryGrad() const { return heads / kvHeads * queries * headDim; }
  /// Whether the backward takes one pass over the pairs, each tile's scores formed once (five
  /// products a tile), instead of a pass over key blocks for dK and dV and one over query
  /// blocks for dQ (seven): where the pairs fill every slot, and a 16-bit dQ's f32 sums fit
  /// kOnePassQueryGradBytes per slot (an f32 dQ sums in place).
  bool onePassBackward() const {
    return pairs() >= kMaxWorkspaceSlots &&
           (f32 || pairQueryGrad() * int64_t{4} <= kOnePassQueryGradBytes);
  }
};

/// One slot's tiles of f32, for tiles of qb queries and kb keys. The forward uses queries,
/// keysT, values, scores, accumulator and the row statistics; the backward all but
/// `values`, in two passes (keys' tiles, then queries').
struct AttentionTiles {
  float *queries = nullptr;     // [qb, D]
  float *keys = nullptr;        // [kb, D]
  float *keysT = nullptr;       // [D, kb]
  float *values = nullptr;      // [kb, Dv]
  float *valuesT = nullptr;     // [Dv, kb]
  float *outputGrad = nullptr;  // [qb, Dv]
  float *scores = nullptr;      // [qb, kb]: scores, then probabilities
  float *scoresGrad = nullptr;  // [qb, kb]: dP, then dS
  float *accumulator = nullptr; // [max(qb, kb), max(D, Dv)]: O, dQ, dK
  float *valueGrad = nullptr;   // [kb, Dv]: dV
  float *rowMax = nullptr, *rowSum = nullptr; // [qb]: running max and sum, or lse and D
  float *queryGrad = nullptr; // one-pass backward, 16-bit: [group * Tq, D], the pair's dQ
};

struct AttentionScratch {
  int64_t slots = 0;
  int64_t stride = 0; // elements between one slot's tiles and the next slot's
  float *base = nullptr;
};

/// Elements of one slot's tiles, and their layout from `base`.
inline int64_t layAttentionTiles(const AttentionSizes &sizes, bool backward, float *base,
                                 AttentionTiles &tiles) {
  const int64_t qb = sizes.queryBlock, kb = sizes.keyBlock, d = sizes.headDim, dv = sizes.valueDim;
  const int64_t rows = std::max(qb, kb), wide = std::max(d, dv);
  int64_t offset = 0;
  auto take = [&](float *&tile, int64_t count) {
    tile = base ? base + offset : nullptr;
    // Whole cache lines per tile (16 floats), so tiles never share one between slots.
    offset += (count + 15) / 16 * 16;
  };
  take(tiles.queries, qb * d);
  take(tiles.keysT, d * kb);
  take(tiles.scores, qb * kb);
  take(tiles.accumulator, rows * wide);
  take(tiles.rowMax, qb);
  take(tiles.rowSum, qb);
  if (!backward) {
    take(tiles.values, kb * dv);
    return offset;
  }
  take(tiles.keys, kb * d);
  take(tiles.valuesT, dv * kb);
  take(tiles.outputGrad, qb * dv);
  take(tiles.scoresGrad, qb * kb);
  take(tiles.valueGrad, kb * dv);
  if (sizes.onePassBackward() && !sizes.f32)
    take(tiles.queryGrad, sizes.pairQueryGrad());
  return offset;
}

/// Slot `slot`'s tiles in `scratch`.
inline AttentionTiles attentionSlot(const AttentionScratch &scratch, const AttentionSizes &sizes,
                                    bool backward, int64_t slot) {
  AttentionTiles tiles;
  layAttentionTiles(sizes, backward, scratch.base + slot * scratch.stride, tiles);
  return tiles;
}

/// The forward's slots over its query tasks; the backward's over its pairs (one pass) or the
/// larger of its two passes.
inline AttentionScratch carveAttention(const KernelCall &call, WorkspaceCarver &carver,
                                       bool backward) {
  AttentionScratch scratch;
  AttentionSizes sizes(call, backward ? 1 : 0);
  if (sizes.empty())
    return scratch;
  scratch.slots = workspaceSlots(0, sizes.queryTasks(), sizes.queryTaskGrain());
  if (backward && sizes.onePassBackward())
    scratch.slots = workspaceSlots(0, sizes.pairs(), 1);
  else if (backward)
    scratch.slots =
        std::max(scratch.slots, workspaceSlots(0, sizes.keyTasks(), sizes.keyTaskGrain()));
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
