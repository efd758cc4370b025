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
    scratch.slotStride = g.columnRows * columnBlockRows(g) * g.outSpatial.back();
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
  int64_t slots = taskSlots(g, g.group), width = gradWeightBlockRows(g) * g.outSpatial.back();
  scratch.columnStride = g.columnRows * width;
  scratch.packedStride = width * g.groupOutChannels;
  scratch.sumStride = g.columnRows * g.groupOutChannels;
  scratch.columns = carver.take<float>(slots * scratch.columnStride);
  scratch.packed = carver.take<float>(slots * scratch.packedStride);
  scratch.sum = carver.take<float>(slots * scratch.sumStride);
  scratch.product = carver.take<float>(slots * scratch.sumStride);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CONVOLUTIONBACKWARDWORKSPACE_H
