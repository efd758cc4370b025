//===- LinearCrossEntropyWorkspace.h - CPU workspace of the fused loss -*- C++ -*-===//
//
// The scratch layout of linear_cross_entropy and linear_cross_entropy_grad: what the run
// functions (LinearCrossEntropy.cpp) carve from call.workspace and what the CPU workspace rules
// (CpuTarget.cpp) size, one walk for both (Workspace.h). Work goes in blocks of
// kLinearCrossEntropyChunk rows by kLinearCrossEntropyChunk classes, so a slot holds one tile of
// logits, never the [rows, V] logits: besides the labels (and the forward's per-row losses),
// the scratch grows with D, not with the rows or the vocabulary. Free of OpenBLAS and threads,
// so the compiler sizes CPU plans without the kernels; bf16 heads ask oneDNN (OneDnnGemm.h)
// for the scratchpad of the products it runs for them.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_LINEARCROSSENTROPYWORKSPACE_H
#define MEMC_KERNELS_CPU_LINEARCROSSENTROPYWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/OneDnnGemm.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// Rows per block and classes per chunk: a 256 x 256 tile of f32 logits (256 KiB) per slot is
/// a product large enough for sgemm's blocking and small beside any vocabulary worth fusing.
inline constexpr int64_t kLinearCrossEntropyChunk = 256;

/// Multiply-adds of a tile's product below which widening to sgemm beats oneDNN's call (about
/// 9 us whatever the size, as for matmul: OneDnnMatMul.cpp).
inline constexpr int64_t kOneDnnMinTileMultiplyAdds = 65536;

/// The sizes of one call, from hidden [..., D] and the weight at inputs[first, first + 2) and
/// the bias at inputs[biasIndex] when the call has it.
struct LinearCrossEntropySizes {
  int64_t rows = 1, depth, classes;
  bool transposeWeight, widen, bias;
  /// Rows of a block and classes of a chunk (shorter operands: their length, at least 1).
  int64_t rowBlock, classChunk;
  /// bf16 heads whose tile products all have an optimized oneDNN implementation multiply on
  /// it (AMX or AVX512-BF16, f32 sums) instead of widening to sgemm; the backward splits each
  /// tile's f32 logits gradient into two bf16 parts for its products.
  bool oneDnn = false;
  uint64_t oneDnnScratchpad = 0; // per slot: the largest of its products' (backward: all three)

  LinearCrossEntropySizes(const KernelCall &call, size_t first, size_t biasIndex) {
    const TensorView &hidden = call.inputs[first], &weight = call.inputs[first + 1];
    for (size_t d = 0; d + 1 < hidden.shape.size(); ++d)
      rows *= hidden.shape[d];
    depth = hidden.shape.back();
    transposeWeight = attributesOf(call).intOr("transpose_weight", 0) != 0;
    classes = transposeWeight ? weight.shape[0] : weight.shape[1];
    widen = hidden.dtype != DType::F32;
    bias = call.inputs.size() > biasIndex;
    rowBlock = std::clamp<int64_t>(rows, 1, kLinearCrossEntropyChunk);
    classChunk = std::clamp<int64_t>(classes, 1, kLinearCrossEntropyChunk);
    if (hidden.dtype == DType::BF16 && weight.dtype == DType::BF16 &&
        rowBlock * classChunk * depth >= kOneDnnMinTileMultiplyAdds)
      oneDnn = askOneDnn(first == 1);
  }
  int64_t rowBlocks() const { return (rows + rowBlock - 1) / rowBlock; }
  /// Whether the backward takes one pass (the logits formed once, three products a tile, a
  /// block's class chunks shared out over the slots) rather than two (four products: per block
  /// over the chunks, then per chunk over the blocks). f32 heads only: a 16-bit weight gradient
  /// sums in f32 scratch a chunk at a time, which one pass would need for the whole weight. On
  /// T threads (at most kMaxWorkspaceSlots work at once) two passes take 2/min(T, blocks) +
  /// 2/min(T, chunks) product-units of time, one pass 3/min(T, chunks): one pass is no slower
  /// at any T while min(blocks, slots) <= 2 min(chunks, slots), the rule below (a choice of the
  /// shapes alone, as the workspace must be).
  bool onePassBackward() const {
    return !widen && std::min(rowBlocks(), kMaxWorkspaceSlots) <=
                         2 * std::min(classChunks(), kMaxWorkspaceSlots);
  }
  int64_t classChunks() const { return (classes + classChunk - 1) / classChunk; }
  int64_t tile() const { return rowBlock * classChunk; }

  /// The products of a tile of `rows` rows and `classes` classes on oneDNN, with the leading
  /// dimensions the tensors and the scratch have. The logits: tile[rows, classes] =
  /// H[rows, D] @ op(W), W stored [V, D] (transpose_weight) or [D, V].
  Bf16GemmShape logitsProduct(int64_t rows, int64_t classes) const {
    return {rows,    classes, depth,           depth, transposeWeight ? depth : this->classes,
            classes, false,   transposeWeight, false};
  }
  /// The hidden gradient's sum[rows, D] += dlogits[rows, classes] @ op(W)^T.
  Bf16GemmShape hiddenGradProduct(int64_t rows, int64_t classes) const {
    return {rows,  depth, classes,          classes, transposeWeight ? depth : this->classes,
            depth, false, !transposeWeight, true};
  }
  /// The weight gradient's sum in the weight's layout: [classes, D] += dlogits^T @ H, or
  /// [D, classes] += H^T @ dlogits.
  Bf16GemmShape weightGradProduct(int64_t rows, int64_t classes) const {
    if (transposeWeight)
      return {classes, depth, rows, classes, depth, depth, true, false, true};
    return {depth, classes, rows, depth, classes, classes, true, false, true};
  }

private:
  /// Whether oneDNN runs every product of the call's tiles (full and remainder blocks and
  /// chunks), and the scratchpad they need.
  bool askOneDnn(bool backward) {
    for (int64_t blockRows : {rowBlock, rows % rowBlock})
      for (int64_t chunkClasses : {classChunk, classes % classChunk}) {
        if (blockRows == 0 || chunkClasses == 0)
          continue;
        Bf16GemmShape products[] = {logitsProduct(blockRows, chunkClasses),
                                    hiddenGradProduct(blockRows, chunkClasses),
                                    weightGradProduct(blockRows, chunkClasses)};
        for (int product = 0; product < (backward ? 3 : 1); ++product) {
          std::optional<uint64_t> bytes = bf16GemmScratchpad(products[product]);
          if (!bytes)
            return false;
          // Per slot, so that the next slot's scratchpad starts aligned.
          oneDnnScratchpad = std::max(oneDnnScratchpad, alignedToWorkspace(*bytes));
        }
      }
    return true;
  }

public:
};

/// Per slot (`slots` of them): a tile of logits, the forward's running row statistics, the
/// one-pass backward's partial hidden gradient of a block, the two-pass backward's sums of a
/// chunk's bias gradient and, for f16/bf16 operands, an f32 accumulator of
/// the block's (or chunk's) gradient with either the block of hidden rows and the chunk of
/// weight widened to f32 or, on oneDNN, its scratchpad and the backward's logits gradient as two
/// bf16 parts.
struct LinearCrossEntropyScratch {
  int64_t slots = 1;
  int64_t *targets = nullptr;   // [rows]
  double *losses = nullptr;     // forward: [rows]
  float *tiles = nullptr;       // [slots, rowBlock * classChunk]
  float *rowMax = nullptr;      // forward: [slots, rowBlock]
  double *rowSum = nullptr;     // forward: [slots, rowBlock]
  float *hiddenRows = nullptr;  // 16-bit: [slots, rowBlock * D]
  float *weightRows = nullptr;  // 16-bit: [slots, classChunk * D]
  float *gradients = nullptr;   // 16-bit backward: [slots, max(rowBlock, classChunk) * D]
  float *biasSums = nullptr;    // two-pass backward with a bias: [slots, classChunk]
  uint16_t *gradTiles = nullptr;  // oneDNN backward: [slots, 2, rowBlock * classChunk] bf16 dlogits
  uint8_t *scratchpads = nullptr; // oneDNN: [slots, oneDnnScratchpad]
  float *hiddenPartials = nullptr; // one-pass backward: [slots, rowBlock * D]
};

inline LinearCrossEntropyScratch carveLinearCrossEntropyScratch(const LinearCrossEntropySizes &sizes,
                                                                bool backward,
                                                                WorkspaceCarver &carver) {
  LinearCrossEntropyScratch scratch;
  // The forward goes over row blocks; the two-pass backward over row blocks (hidden's
  // gradient), then over class chunks (the weight's); the one-pass backward over class chunks.
  scratch.slots = workspaceSlots(0, sizes.rowBlocks(), 1);
  if (backward)
    scratch.slots = std::max(scratch.slots, workspaceSlots(0, sizes.classChunks(), 1));
  scratch.targets = carver.take<int64_t>(sizes.rows);
  if (!backward) {
    scratch.losses = carver.take<double>(sizes.rows);
    scratch.rowMax = carver.take<float>(scratch.slots * sizes.rowBlock);
    scratch.rowSum = carver.take<double>(scratch.slots * sizes.rowBlock);
  }
  scratch.tiles = carver.take<float>(scratch.slots * sizes.tile());
  if (backward && sizes.bias && !sizes.onePassBackward())
    scratch.biasSums = carver.take<float>(scratch.slots * sizes.classChunk);
  if (sizes.oneDnn) {
    scratch.scratchpads = carver.take<uint8_t>(scratch.slots * sizes.oneDnnScratchpad);
    if (backward)
      scratch.gradTiles = carver.take<uint16_t>(scratch.slots * 2 * sizes.tile());
  } else if (sizes.widen) {
    scratch.hiddenRows = carver.take<float>(scratch.slots * sizes.rowBlock * sizes.depth);
    scratch.weightRows = carver.take<float>(scratch.slots * sizes.classChunk * sizes.depth);
  }
  if (backward && sizes.onePassBackward())
    scratch.hiddenPartials = carver.take<float>(scratch.slots * sizes.rowBlock * sizes.depth);
  if (sizes.widen && backward)
    scratch.gradients = carver.take<float>(
        scratch.slots * std::max(sizes.rowBlock, sizes.classChunk) * sizes.depth);
  return scratch;
}

inline LinearCrossEntropyScratch carveLinearCrossEntropy(const KernelCall &call,
                                                         WorkspaceCarver &carver) {
  return carveLinearCrossEntropyScratch(LinearCrossEntropySizes(call, 0, 3), false, carver);
}

inline LinearCrossEntropyScratch carveLinearCrossEntropyGrad(const KernelCall &call,
                                                             WorkspaceCarver &carver) {
  return carveLinearCrossEntropyScratch(LinearCrossEntropySizes(call, 1, 5), true, carver);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_LINEARCROSSENTROPYWORKSPACE_H
