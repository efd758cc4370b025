//===- LinearCrossEntropyWorkspace.h - CPU workspace of the fused loss -*- C++ -*-===//
//
// The scratch layout of linear_cross_entropy and linear_cross_entropy_grad: what the run
// functions (LinearCrossEntropy.cpp) carve from call.workspace and what the CPU workspace rules
// (CpuTarget.cpp) size, one walk for both (Workspace.h). Work goes in blocks of
// kLinearCrossEntropyChunk rows by kLinearCrossEntropyChunk classes, so a slot holds one tile of
// logits, never the [rows, V] logits: besides the labels (and the forward's per-row losses),
// the scratch grows with D, not with the rows or the vocabulary. Free of OpenBLAS and threads,
// so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_LINEARCROSSENTROPYWORKSPACE_H
#define MEMC_KERNELS_CPU_LINEARCROSSENTROPYWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// Rows per block and classes per chunk: a 256 x 256 tile of f32 logits (256 KiB) per slot is
/// a product large enough for sgemm's blocking and small beside any vocabulary worth fusing.
inline constexpr int64_t kLinearCrossEntropyChunk = 256;

/// The sizes of one call, from hidden [..., D] and the weight at inputs[first, first + 2) and
/// the bias at inputs[biasIndex] when the call has it.
struct LinearCrossEntropySizes {
  int64_t rows = 1, depth, classes;
  bool transposeWeight, widen, bias;
  /// Rows of a block and classes of a chunk (shorter operands: their length, at least 1).
  int64_t rowBlock, classChunk;

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
  }
  int64_t rowBlocks() const { return (rows + rowBlock - 1) / rowBlock; }
  int64_t classChunks() const { return (classes + classChunk - 1) / classChunk; }
  int64_t tile() const { return rowBlock * classChunk; }
};

/// Per slot (`slots` of them): a tile of logits, the forward's running row statistics, the
/// backward's sums of a chunk's bias gradient and, for f16/bf16 operands, the block of hidden rows and the chunk of weight widened to f32 and an
/// f32 accumulator of the block's (or chunk's) gradient.
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
  float *biasSums = nullptr;    // backward with a bias: [slots, classChunk]
};

inline LinearCrossEntropyScratch carveLinearCrossEntropyScratch(const LinearCrossEntropySizes &sizes,
                                                                bool backward,
                                                                WorkspaceCarver &carver) {
  LinearCrossEntropyScratch scratch;
  // The forward goes over row blocks; the backward over row blocks (hidden's gradient), then
  // over class chunks (the weight's).
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
  if (backward && sizes.bias)
    scratch.biasSums = carver.take<float>(scratch.slots * sizes.classChunk);
  if (sizes.widen) {
    scratch.hiddenRows = carver.take<float>(scratch.slots * sizes.rowBlock * sizes.depth);
    scratch.weightRows = carver.take<float>(scratch.slots * sizes.classChunk * sizes.depth);
    if (backward)
      scratch.gradients = carver.take<float>(
          scratch.slots * std::max(sizes.rowBlock, sizes.classChunk) * sizes.depth);
  }
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
