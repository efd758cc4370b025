//===- AttentionCall.h - what the CUDA attention kernels take from a call -*- C++ -*-===//
//
// The host side of the CUDA attention: a call's sizes, scores and dropout as the kernels read
// them (AttentionMath.h), which kernel runs it, and the scratch of the backward. Plain C++ and
// free of CUDA, so that the target's record (AttentionTarget.cpp) sizes and limits calls on
// any build machine with the same rules the run functions (FlashAttention.cu) launch by.
//
// Two kernels of each pass: tensor cores (mma.sync) for f16/bf16 with head dimensions of 64 or
// 128 for query, key and value alike, and CUDA cores in f32 for every other call of head
// dimensions up to kMaxCudaAttentionHeadDim, whose tiles of f32 fill a thread block's shared
// memory.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ATTENTIONCALL_H
#define MEMC_KERNELS_CUDA_ATTENTIONCALL_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cuda/AttentionMath.h"
#include "kernels/ops/CallChecks.h"

#include <algorithm>

namespace memc::kernels::cuda {

/// The largest head dimension (query, key or value) the CUDA kernels take.
constexpr int64_t kMaxCudaAttentionHeadDim = 256;

/// The sizes of the call whose query, key and value are inputs[first, first + 3).
inline AttentionDims attentionDims(const KernelCall &call, size_t first) {
  const Shape &q = call.inputs[first].shape, &v = call.inputs[first + 2].shape;
  return AttentionDims{q[0], q[1], v[1], q[2], v[2], q[3], v[3]};
}

inline AttentionMaskView attentionMaskView(const TensorView &mask) {
  AttentionMaskView view;
  view.data = mask.data;
  view.type = mask.dtype == DType::F16    ? AttentionMaskType::F16
              : mask.dtype == DType::BF16 ? AttentionMaskType::BF16
                                          : AttentionMaskType::F32;
  int64_t stride = 1;
  for (int dim = 3; dim >= 0; --dim) {
    view.strides[dim] = mask.shape[dim] == 1 ? 0 : stride;
    stride *= mask.shape[dim];
  }
  return view;
}

/// The scores of the call whose query, key and value are inputs[first, first + 3) and whose
/// mask, if any, is at inputs[maskIndex].
inline AttentionScores attentionScores(const KernelCall &call, size_t first, size_t maskIndex) {
  const Attributes &attributes = attributesOf(call);
  AttentionScores scores;
  scores.dims = attentionDims(call, first);
  scores.scale = static_cast<float>(attributes.floatOr("scale", 1.0));
  scores.causal = attributes.intOr("causal", 0) == 1;
  AttentionOptionals optionals = attentionOptionals(call, maskIndex);
  if (optionals.mask)
    scores.mask = attentionMaskView(call.inputs[*optionals.mask]);
  return scores;
}

/// The call's dropout; its salt stays where it is (device memory on the GPU).
inline AttentionDropout attentionDropout(const KernelCall &call, size_t maskIndex) {
  const Attributes &attributes = attributesOf(call);
  AttentionDropout dropout;
  dropout.ratio = attributes.floatOr("dropout_ratio", 0.0);
  dropout.seed = attributes.intOr("seed", 0);
  AttentionOptionals optionals = attentionOptionals(call, maskIndex);
  if (optionals.salt)
    dropout.salt = call.inputs[*optionals.salt].as<const int64_t>();
  return dropout;
}

/// Whether the tensor-core kernels run a call of this element type and these head dimensions.
inline bool usesTensorCores(DType dtype, const AttentionDims &dims) {
  return (dtype == DType::F16 || dtype == DType::BF16) && dims.headDim == dims.valueDim &&
         (dims.headDim == 64 || dims.headDim == 128);
}

/// Rows of the CUDA-core kernels' tiles of queries and of keys: the six f32 tiles of the
/// backward's key pass stay near 50 KiB of shared memory a block up to 128 columns and near
/// 100 KiB up to 256.
inline int64_t cudaCoreTileRows(const AttentionDims &dims) {
  return std::max(dims.headDim, dims.valueDim) <= 64 ? 32 : 16;
}

/// flash_attention_grad's scratch: D = rowsum(dO * O) of every query row, f32 [B, H, Tq].
inline float *carveAttentionRowDots(const KernelCall &call, WorkspaceCarver &carver) {
  AttentionDims dims = attentionDims(call, 1);
  return carver.take<float>(dims.batch * dims.heads * dims.queries);
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_ATTENTIONCALL_H
