//===- NormalizationWorkspace.h - CPU workspace layouts ----------*- C++ -*-===//
//
// The scratch layout of softmax, log_softmax, layer_norm, add_layer_norm, rms_norm and
// batch_norm: what the run functions carve from call.workspace and what the CPU workspace rules
// (CpuTarget.cpp) size, one walk for both (Workspace.h). Free of OpenBLAS and threads, so the compiler sizes CPU plans without the
// kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_NORMALIZATIONWORKSPACE_H
#define MEMC_KERNELS_CPU_NORMALIZATIONWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

inline int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t count = 1;
  for (size_t i = begin; i < end; ++i)
    count *= shape[i];
  return count;
}

/// Blocks of interleaved rows longer than this recompute exp in the last pass instead of keeping
/// it in scratch.
inline constexpr int64_t kSoftmaxScratch = int64_t{1} << 20;

/// Rows of a softmax task: up to this many interleaved rows along a non-innermost axis.
inline constexpr int64_t kSoftmaxBlock = 64;

/// The softmax's tasks: (outer index, block of up to kSoftmaxBlock interleaved rows).
struct SoftmaxTasks {
  int64_t outer, length, inner, blocks, grain;

  explicit SoftmaxTasks(const KernelCall &call) {
    const Shape &shape = call.inputs[0].shape;
    int64_t axis = attributesOf(call).intOr("axis", 0);
    outer = product(shape, 0, axis);
    length = shape[axis];
    inner = product(shape, axis + 1, shape.size());
    blocks = (inner + kSoftmaxBlock - 1) / kSoftmaxBlock;
    grain = std::max<int64_t>(1, kExpensiveGrain / (length * std::min(inner, kSoftmaxBlock)));
  }
  int64_t count() const { return outer * blocks; }
};

/// Per slot (softmaxColumns only): a block's maxima, sums and kept exponentials.
struct SoftmaxScratch {
  float *maxima = nullptr, *exponentials = nullptr;
  double *sums = nullptr;
  int64_t exponentialStride = 0;
};

inline SoftmaxScratch carveSoftmax(const KernelCall &call, WorkspaceCarver &carver) {
  SoftmaxScratch scratch;
  if (call.inputs[0].numElements() == 0)
    return scratch;
  SoftmaxTasks tasks(call);
  if (tasks.inner == 1)
    return scratch;
  int64_t slots = workspaceSlots(0, tasks.count(), tasks.grain);
  scratch.exponentialStride =
      std::min(tasks.length * std::min(tasks.inner, kSoftmaxBlock), kSoftmaxScratch);
  scratch.maxima = carver.take<float>(slots * kSoftmaxBlock);
  scratch.sums = carver.take<double>(slots * kSoftmaxBlock);
  scratch.exponentials = carver.take<float>(slots * scratch.exponentialStride);
  return scratch;
}

/// The scale and bias as f32.
struct AffineScratch {
  float *scale = nullptr, *bias = nullptr;
};

/// The scale and bias as f32, the scale the input at `scaleIndex` (add_layer_norm's follows
/// its two addends).
inline AffineScratch carveAffine(const KernelCall &call, WorkspaceCarver &carver,
                                 size_t scaleIndex) {
  AffineScratch scratch;
  if (call.inputs[0].numElements() == 0)
    return scratch;
  scratch.scale = carver.take<float>(call.inputs[scaleIndex].numElements());
  scratch.bias = carver.take<float>(call.inputs[scaleIndex].numElements());
  return scratch;
}

inline AffineScratch carveLayerNorm(const KernelCall &call, WorkspaceCarver &carver) {
  return carveAffine(call, carver, 1);
}

inline AffineScratch carveAddLayerNorm(const KernelCall &call, WorkspaceCarver &carver) {
  return carveAffine(call, carver, 2);
}

/// The scale as f32 (no bias).
inline AffineScratch carveRmsNorm(const KernelCall &call, WorkspaceCarver &carver) {
  AffineScratch scratch;
  if (call.inputs[0].numElements() != 0)
    scratch.scale = carver.take<float>(call.inputs[1].numElements());
  return scratch;
}

/// A batch's per-channel moments of an [N, C, spatial...] tensor: a value per plane (its sum,
/// then its squared deviations), then each channel's mean and biased variance.
struct BatchMomentsScratch {
  double *planeValues = nullptr, *means = nullptr, *variances = nullptr;
};

inline BatchMomentsScratch carveBatchMomentsOf(const Shape &shape, WorkspaceCarver &carver) {
  BatchMomentsScratch scratch;
  scratch.planeValues = carver.take<double>(shape[0] * shape[1]);
  scratch.means = carver.take<double>(shape[1]);
  scratch.variances = carver.take<double>(shape[1]);
  return scratch;
}

inline BatchMomentsScratch carveBatchMoments(const KernelCall &call, WorkspaceCarver &carver) {
  return carveBatchMomentsOf(call.inputs[0].shape, carver);
}

/// batch_norm's scale, bias, mean and var as f32, one array of `channels` after the other, then
/// each channel's y = x * a + b coefficients a and b, and in training the batch's moments.
struct BatchNormScratch {
  float *statistics = nullptr, *coefficients = nullptr;
  BatchMomentsScratch moments;
};

inline BatchNormScratch carveBatchNorm(const KernelCall &call, WorkspaceCarver &carver) {
  BatchNormScratch scratch;
  if (call.inputs[0].numElements() == 0)
    return scratch;
  int64_t channels = call.inputs[0].shape[1];
  scratch.statistics = carver.take<float>(4 * channels);
  scratch.coefficients = carver.take<float>(2 * channels);
  if (attributesOf(call).intOr("training", 0) == 1)
    scratch.moments = carveBatchMomentsOf(call.inputs[0].shape, carver);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_NORMALIZATIONWORKSPACE_H
