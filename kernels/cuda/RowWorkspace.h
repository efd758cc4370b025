//===- RowWorkspace.h - how the CUDA row kernels split work and scratch -*- C++ -*-===//
//
// The CUDA row kernels sum across rows (a normalization's parameter gradients, a batch_norm
// channel, a reduction's long range) without float atomics: each block writes its partial
// result into the workspace and a second pass adds the partials in a fixed order, so a result
// does not depend on how the GPU schedules blocks. How a call is split is a function of its
// shapes alone; the layouts below are what the run functions carve from call.workspace and
// what the workspace rules (RowTarget.cpp) size, one walk for both (kernels/Workspace.h).
// Plain C++: the compiler sizes CUDA plans without nvcc.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ROWWORKSPACE_H
#define MEMC_KERNELS_CUDA_ROWWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cuda/ReductionMath.h"
#include "kernels/cuda/RowMath.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace memc::kernels::cuda::rows {

/// Product of shape[begin, end).
inline int64_t extent(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t count = 1;
  for (size_t d = begin; d < end; ++d)
    count *= shape[d];
  return count;
}

/// ceil(a / b) for b > 0.
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

//===----------------------------------------------------------------------===//
// layer_norm_grad, rms_norm_grad
//===----------------------------------------------------------------------===//

/// Rows of a normalization's gradient, cut into chunks whose parameter-gradient sums a thread
/// per column and chunk accumulates (enough chunks to fill the GPU when the width does not).
struct RowChunks {
  int64_t rows, width, rowsPerChunk, chunks;

  explicit RowChunks(const KernelCall &call) {
    const std::vector<int64_t> &shape = call.inputs[1].shape;
    int64_t axis = attributesOf(call).intOr("axis", 0);
    rows = extent(shape, 0, axis);
    width = extent(shape, axis, shape.size());
    rowsPerChunk = 1;
    chunks = 0;
    if (rows == 0 || width == 0)
      return;
    constexpr int64_t kMinRowsPerChunk = 16, kMaxChunks = 1024;
    int64_t wanted =
        std::min({ceilDiv(kTargetThreads, width), ceilDiv(rows, kMinRowsPerChunk), kMaxChunks});
    rowsPerChunk = ceilDiv(rows, std::max<int64_t>(wanted, 1));
    chunks = ceilDiv(rows, rowsPerChunk);
  }
};

/// dscale (and, for layer_norm_grad, dbias): one output each after input_grad.
inline int64_t parameterGradients(const KernelCall &call) {
  return static_cast<int64_t>(call.outputs.size()) - 1;
}

/// Each row's f64 mean and rstd, and the parameter gradients' partial sums, in f64 as the
/// CPU's.
struct RowNormGradScratch {
  RowStatistics *statistics = nullptr; // per row
  double *partials = nullptr;          // [gradient][chunk][width]
};

inline RowNormGradScratch carveRowNormGrad(const KernelCall &call, WorkspaceCarver &carver) {
  RowChunks split(call);
  RowNormGradScratch scratch;
  if (split.width == 0)
    return scratch;
  scratch.statistics = carver.take<RowStatistics>(split.rows);
  scratch.partials = carver.take<double>(parameterGradients(call) * split.chunks * split.width);
  return scratch;
}

//===----------------------------------------------------------------------===//
// batch_norm, batch_norm_grad, batch_moments
//===----------------------------------------------------------------------===//

/// The channels of an [N, C, spatial...] tensor, each cut into `splits` chunks of its
/// perChannel = N * spatial values (element m of a channel, ChannelOf), one block per chunk.
struct ChannelSplit {
  int64_t channels, spatial, perChannel, splits, chunk;

  explicit ChannelSplit(const TensorView &input) {
    channels = input.shape[1];
    spatial = extent(input.shape, 2, input.shape.size());
    perChannel = input.shape[0] * spatial;
    constexpr int64_t kTargetBlocks = 132 * 8, kMinChunk = 4096, kMaxSplits = 256;
    int64_t wanted = std::min({ceilDiv(kTargetBlocks, std::max<int64_t>(channels, 1)),
                               ceilDiv(perChannel, kMinChunk), kMaxSplits});
    splits = std::max<int64_t>(wanted, 1);
    chunk = ceilDiv(perChannel, splits);
  }
  MEMC_HOST_DEVICE int64_t chunkBegin(int64_t split) const {
    return split * chunk < perChannel ? split * chunk : perChannel;
  }
  MEMC_HOST_DEVICE int64_t chunkEnd(int64_t split) const { return chunkBegin(split + 1); }
};

/// batch_norm's per-block moments (training only) and each channel's y = x * a + b.
struct BatchNormScratch {
  Moments *moments = nullptr; // [channel][split]
  BatchNormCoefficients *coefficients = nullptr;
};

inline BatchNormScratch carveBatchNorm(const KernelCall &call, WorkspaceCarver &carver) {
  BatchNormScratch scratch;
  if (call.inputs[0].numElements() == 0)
    return scratch;
  ChannelSplit split(call.inputs[0]);
  if (attributesOf(call).intOr("training", 0) == 1)
    scratch.moments = carver.take<Moments>(split.channels * split.splits);
  scratch.coefficients = carver.take<BatchNormCoefficients>(split.channels);
  return scratch;
}

/// batch_norm_grad's per-block moments and gradient sums, and each channel's dx coefficients.
struct BatchNormGradScratch {
  Moments *moments = nullptr;        // [channel][split]
  BatchNormGradSums *sums = nullptr; // [channel][split]
  BatchNormGradCoefficients *coefficients = nullptr;
};

inline BatchNormGradScratch carveBatchNormGrad(const KernelCall &call, WorkspaceCarver &carver) {
  ChannelSplit split(call.inputs[1]);
  BatchNormGradScratch scratch;
  scratch.moments = carver.take<Moments>(split.channels * split.splits);
  scratch.sums = carver.take<BatchNormGradSums>(split.channels * split.splits);
  scratch.coefficients = carver.take<BatchNormGradCoefficients>(split.channels);
  return scratch;
}

/// batch_moments' per-block moments.
inline Moments *carveBatchMoments(const KernelCall &call, WorkspaceCarver &carver) {
  ChannelSplit split(call.inputs[0]);
  return carver.take<Moments>(split.channels * split.splits);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// The reductions' names, for their messages.
constexpr char kReduceSum[] = "reduce_sum";
constexpr char kReduceMean[] = "reduce_mean";
constexpr char kReduceMax[] = "reduce_max";
constexpr char kReduceProd[] = "reduce_prod";
constexpr char kReduceL2[] = "reduce_l2";
constexpr char kReduceLogSumExp[] = "reduce_log_sum_exp";

/// The call's plan; false when its dimensions merge into more groups than the kernels take.
inline bool reductionPlanOf(const KernelCall &call, ReductionPlan &plan) {
  std::vector<int64_t> axes;
  attributesOf(call).getInts("axes", axes);
  return planReduction(call.inputs[0].shape, axes, plan);
}

/// kPartialBytes per output and chunk when the reduced range is cut; nothing otherwise.
inline void *carveReduction(const KernelCall &call, WorkspaceCarver &carver) {
  ReductionPlan plan;
  if (!reductionPlanOf(call, plan) || plan.outputs == 0 || plan.splits == 1)
    return nullptr;
  return carver.take<uint8_t>(plan.outputs * plan.splits * kPartialBytes);
}

//===----------------------------------------------------------------------===//
// cross_entropy, cross_entropy_grad
//===----------------------------------------------------------------------===//

/// Rows of the logits [..., classes] (not numElements() / classes: with no classes there may
/// still be ignored rows).
inline int64_t lossRows(const TensorView &logits) {
  return extent(logits.shape, 0, logits.shape.size() - 1);
}

/// Each counted row's loss (f64, as the CPU's), added in a fixed order by the pass that takes
/// the mean.
inline double *carveCrossEntropy(const KernelCall &call, WorkspaceCarver &carver) {
  return carver.take<double>(lossRows(call.inputs[0]));
}

/// The number of counted rows, which scales every row's gradient.
inline int64_t *carveCrossEntropyGrad(const KernelCall &, WorkspaceCarver &carver) {
  return carver.take<int64_t>(1);
}

} // namespace memc::kernels::cuda::rows

#endif // MEMC_KERNELS_CUDA_ROWWORKSPACE_H
