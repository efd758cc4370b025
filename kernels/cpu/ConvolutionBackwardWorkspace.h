//===- ConvolutionBackwardWorkspace.h - CPU workspace layouts ----*- C++ -*-===//
//
// The scratch layout of conv_grad_input and conv_grad_weight: what the run functions carve from
// call.workspace and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both
// (Workspace.h). Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONBACKWARDWORKSPACE_H
#define MEMC_KERNELS_CPU_CONVOLUTIONBACKWARDWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/OneDnnConvolution.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace memc::kernels {

/// Output rows (of all images, in order) whose columns and gradients conv_grad_weight packs at
/// once.
inline int64_t gradWeightBlockRows(const ConvGeometry &g) {
  return columnTileRows(g, g.batch * g.outputRows());
}

/// The blocks of conv_grad_weight's reduction (gradWeightBlockRows output rows each).
inline int64_t gradWeightBlocks(const ConvGeometry &g) {
  int64_t rows = gradWeightBlockRows(g);
  return (g.batch * g.outputRows() + rows - 1) / rows;
}

/// Consecutive blocks per piece of conv_grad_weight's reduction, each piece summed apart and the
/// pieces' sums added in order: at most kMaxWorkspaceSlots pieces for an ungrouped call whose
/// blocks' scratch is small (kSmallSlotElements), so that they run side by side over the threads
/// (one sum per piece, whatever the thread count); else one piece of every block.
inline int64_t gradWeightBlocksPerPiece(const ConvGeometry &g) {
  int64_t width = gradWeightBlockRows(g) * g.outSpatial.back();
  int64_t rows = g.columnRows, mg = g.groupOutChannels, blocks = gradWeightBlocks(g);
  if (g.group > 1 || (rows + mg) * width + 2 * rows * mg > kSmallSlotElements)
    return std::max<int64_t>(blocks, 1);
  return std::max<int64_t>(1, (blocks + kMaxWorkspaceSlots - 1) / kMaxWorkspaceSlots);
}

/// The pieces (gradWeightBlocksPerPiece), none of them empty; 1 for a call without blocks.
inline int64_t gradWeightPieces(const ConvGeometry &g) {
  int64_t perPiece = gradWeightBlocksPerPiece(g);
  return std::max<int64_t>(1, (gradWeightBlocks(g) + perPiece - 1) / perPiece);
}

/// conv_grad_weight's scratch slots: one per concurrent (group, piece) task.
inline int64_t gradWeightSlots(const ConvGeometry &g) {
  return taskSlots(g, g.group * gradWeightPieces(g));
}

struct GradInputScratch {
  FloatOperands operands;
  float *columns = nullptr; // one block per slot, slotStride elements apart
  int64_t slotStride = 0;
  std::optional<OneDnnConvScratch> oneDnn; // set when oneDNN runs the call
};

inline GradInputScratch carveGradInput(const KernelCall &call, WorkspaceCarver &carver) {
  GradInputScratch scratch;
  if (call.outputs[0].numElements() == 0)
    return scratch;
  if (auto sizes = oneDnnConvolution(call, ConvDirection::GradInput)) {
    scratch.oneDnn = carveOneDnnConv(*sizes, carver);
    return scratch;
  }
  ConvGeometry g(call.outputs[0].shape, call.inputs[1].shape, call.inputs[0].shape,
                 attributesOf(call));
  scratch.operands = carveFloatOperands(call, carver);
  if (!g.isPointwise()) {
    scratch.slotStride = columnBlockElements(g);
    scratch.columns = carver.take<float>(taskSlots(g, g.batch * g.group) * scratch.slotStride);
  }
  return scratch;
}

struct GradWeightScratch {
  FloatOperands operands;
  // Per slot, each piece's stride elements apart.
  float *columns = nullptr, *packed = nullptr, *sum = nullptr, *product = nullptr;
  int64_t columnStride = 0, packedStride = 0, sumStride = 0;
  std::optional<OneDnnConvScratch> oneDnn; // set when oneDNN runs the call
};

inline GradWeightScratch carveGradWeight(const KernelCall &call, WorkspaceCarver &carver) {
  GradWeightScratch scratch;
  if (call.outputs[0].numElements() == 0)
    return scratch;
  if (auto sizes = oneDnnConvolution(call, ConvDirection::GradWeight)) {
    scratch.oneDnn = carveOneDnnConv(*sizes, carver);
    return scratch;
  }
  ConvGeometry g(call.inputs[1].shape, call.outputs[0].shape, call.inputs[0].shape,
                 attributesOf(call));
  scratch.operands = carveFloatOperands(call, carver);
  int64_t pieces = gradWeightPieces(g), slots = gradWeightSlots(g);
  int64_t width = gradWeightBlockRows(g) * g.outSpatial.back();
  scratch.columnStride = g.columnRows * width;
  scratch.packedStride = width * g.groupOutChannels;
  scratch.sumStride = g.columnRows * g.groupOutChannels;
  scratch.columns = carver.take<float>(slots * scratch.columnStride);
  scratch.packed = carver.take<float>(slots * scratch.packedStride);
  // A sum per slot, or per piece where there are several.
  scratch.sum = carver.take<float>((pieces > 1 ? pieces : slots) * scratch.sumStride);
  scratch.product = carver.take<float>(slots * scratch.sumStride);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CONVOLUTIONBACKWARDWORKSPACE_H
