//===- NormalizationBackwardWorkspace.h - CPU workspace layouts --*- C++ -*-===//
//
// The scratch layout of layer_norm_grad, rms_norm_grad and batch_norm_grad: what the run functions carve from
// call.workspace and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both
// (Workspace.h). Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_NORMALIZATIONBACKWARDWORKSPACE_H
#define MEMC_KERNELS_CPU_NORMALIZATIONBACKWARDWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/BatchNormChannels.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// At most this many blocks of rows (each with its own dscale and dbias sums).
inline constexpr int64_t kMaxRowBlocks = 64;

/// How layer_norm_grad and rms_norm_grad split their rows: blocks fixed by the shape alone, so the sums' order is
/// too.
struct RowBlocks {
  int64_t rows = 1, width = 1, rowsPerBlock = 1, blocks = 0;

  explicit RowBlocks(const KernelCall &call) {
    const TensorView &input = call.inputs[1];
    int64_t axis = attributesOf(call).intOr("axis", 0);
    for (int64_t d = 0; d < input.rank(); ++d)
      (d < axis ? rows : width) *= input.shape[d];
    if (width == 0)
      return;
    rowsPerBlock = std::max<int64_t>(1, kElementwiseGrain / width);
    rowsPerBlock = std::max(rowsPerBlock, (rows + kMaxRowBlocks - 1) / kMaxRowBlocks);
    blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
  }
};

/// The parameter gradients a row normalization's backward sums: dscale and dbias for
/// layer_norm_grad, dscale alone for rms_norm_grad (one per output after input_grad).
inline int64_t parameterGradients(const KernelCall &call) {
  return static_cast<int64_t>(call.outputs.size()) - 1;
}

struct RowNormGradScratch {
  float *scale = nullptr;
  double *sums = nullptr;      // per block: dscale terms, then (layer_norm_grad) dbias terms
  double *scaleGrad = nullptr; // then (layer_norm_grad) biasGrad, `width` apart
  float *rows = nullptr;       // per slot: 2 * width
};

inline RowNormGradScratch carveRowNormGrad(const KernelCall &call, WorkspaceCarver &carver) {
  RowNormGradScratch scratch;
  RowBlocks split(call);
  if (split.width == 0)
    return scratch;
  int64_t gradients = parameterGradients(call);
  scratch.scale = carver.take<float>(split.width);
  scratch.sums = carver.take<double>(gradients * split.blocks * split.width);
  scratch.scaleGrad = carver.take<double>(gradients * split.width);
  scratch.rows = carver.take<float>(workspaceSlots(0, split.blocks, 1) * 2 * split.width);
  return scratch;
}

/// The scale as f32, then the f64 dscale and dbias, `channels` each; each plane's gradient sums
/// and squared deviations (BatchNormChannels.h); each channel's mean and dx coefficients.
struct BatchNormGradScratch {
  float *scale = nullptr;
  double *scaleGrad = nullptr, *biasGrad = nullptr;
  PlaneGradSums *planeSums = nullptr;
  double *planeSquares = nullptr, *means = nullptr;
  ChannelInputGrad *inputGrad = nullptr;
};

inline BatchNormGradScratch carveBatchNormGrad(const KernelCall &call, WorkspaceCarver &carver) {
  int64_t planes = call.inputs[1].shape[0] * call.inputs[1].shape[1];
  int64_t channels = call.inputs[1].shape[1];
  BatchNormGradScratch scratch;
  scratch.scale = carver.take<float>(channels);
  scratch.scaleGrad = carver.take<double>(channels);
  scratch.biasGrad = carver.take<double>(channels);
  scratch.planeSums = carver.take<PlaneGradSums>(planes);
  scratch.planeSquares = carver.take<double>(planes);
  scratch.means = carver.take<double>(channels);
  scratch.inputGrad = carver.take<ChannelInputGrad>(channels);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_NORMALIZATIONBACKWARDWORKSPACE_H
