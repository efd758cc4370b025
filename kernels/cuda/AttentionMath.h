//===- AttentionMath.h - what the CUDA attention kernels compute per element -*- C++ -*-===//
//
// The arithmetic of flash_attention and flash_attention_grad on the GPU, one copy for the CUDA
// kernels (FlashAttention*.cu) and the host test that checks it against the CPU kernels
// (kernels/cpu/Attention.cpp, AttentionBackward.cpp):
//  - AttentionScores: which (query i, key j) pairs exist (the causal cut aligns the last query
//    with the last key) and their score scale * q.k + mask, -inf where hidden;
//  - AttentionDropout: the factor (0 or 1 / (1 - ratio)) of probability (b, h, i, j), drawn by
//    the unfused dropout's mask (DropoutMask.h) at its flat index in [B, H, Tq, Tk];
//  - SoftmaxRow: the forward's online softmax, one query row folding in tiles of scores of any
//    width, so that any cut of the keys gives the same output up to rounding;
//  - probabilityFromLogsumexp and scoreGradient: the backward's per-element rules.
// Plain C++ (MEMC_HOST_DEVICE), no CUDA intrinsics: the host test runs it serially.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ATTENTIONMATH_H
#define MEMC_KERNELS_CUDA_ATTENTIONMATH_H

#include "kernels/DropoutMask.h"
#include "kernels/Float16.h"
#include "kernels/HostDevice.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace memc::kernels::cuda {

/// The score of a hidden pair, and the logsumexp of a row that saw no key.
constexpr float kHiddenScore = -std::numeric_limits<float>::infinity();

/// The sizes of one call: query [B, H, Tq, D], key [B, Hkv, Tk, D], value [B, Hkv, Tk, Dv].
struct AttentionDims {
  int64_t batch, heads, kvHeads, queries, keys, headDim, valueDim;

  /// Query heads per kv head.
  MEMC_HOST_DEVICE int64_t group() const { return heads / kvHeads; }
  /// Causal attention: query i sees keys j <= i + keyShift().
  MEMC_HOST_DEVICE int64_t keyShift() const { return keys - queries; }
  /// Element offsets of row `query` of a [B, H, Tq, width] tensor and of row `key` of a
  /// [B, Hkv, Tk, width] tensor.
  MEMC_HOST_DEVICE int64_t queryRow(int64_t b, int64_t h, int64_t query, int64_t width) const {
    return ((b * heads + h) * queries + query) * width;
  }
  MEMC_HOST_DEVICE int64_t keyRow(int64_t b, int64_t kvHead, int64_t key, int64_t width) const {
    return ((b * kvHeads + kvHead) * keys + key) * width;
  }
};

/// How the mask's elements are stored.
enum class AttentionMaskType : uint8_t { None, F32, F16, BF16 };

/// The additive mask: each dimension that of [B, H, Tq, Tk] or broadcast (stride 0).
struct AttentionMaskView {
  const void *data = nullptr;
  AttentionMaskType type = AttentionMaskType::None;
  int64_t strides[4] = {0, 0, 0, 0};

  MEMC_HOST_DEVICE float at(int64_t b, int64_t h, int64_t query, int64_t key) const {
    int64_t index = b * strides[0] + h * strides[1] + query * strides[2] + key * strides[3];
    switch (type) {
    case AttentionMaskType::F32:
      return static_cast<const float *>(data)[index];
    case AttentionMaskType::F16:
      return halfToFloat(static_cast<const uint16_t *>(data)[index]);
    case AttentionMaskType::BF16:
      return bfloat16ToFloat(static_cast<const uint16_t *>(data)[index]);
    default:
      return 0.0f;
    }
  }
};

/// Which pairs of queries and keys exist and what their scores are.
struct AttentionScores {
  AttentionDims dims;
  float scale;
  bool causal;
  AttentionMaskView mask;

  MEMC_HOST_DEVICE bool visible(int64_t query, int64_t key) const {
    return !causal || key <= query + dims.keyShift();
  }
  /// scale * dot + mask of (b, h, query, key), or -inf where causal attention hides the key.
  MEMC_HOST_DEVICE float score(float dot, int64_t b, int64_t h, int64_t query, int64_t key) const {
    if (!visible(query, key))
      return kHiddenScore;
    float scaled = dot * scale;
    return mask.type == AttentionMaskType::None ? scaled : scaled + mask.at(b, h, query, key);
  }
  /// score(), or -inf for a pair outside the tensors (the padding of a partial tile), whose
  /// mask element is never read.
  MEMC_HOST_DEVICE float scoreOrHidden(float dot, int64_t b, int64_t h, int64_t query,
                                       int64_t key) const {
    if (query >= dims.queries || key >= dims.keys)
      return kHiddenScore;
    return score(dot, b, h, query, key);
  }
  /// One past the last key that queries before `queryEnd` see.
  MEMC_HOST_DEVICE int64_t visibleKeyEnd(int64_t queryEnd) const {
    if (!causal)
      return dims.keys;
    int64_t end = queryEnd + dims.keyShift();
    return end < 0 ? 0 : (end > dims.keys ? dims.keys : end);
  }
  /// The first tile of `tileRows` queries with a query that sees `key`.
  MEMC_HOST_DEVICE int64_t firstQueryTileSeeing(int64_t key, int64_t tileRows) const {
    if (!causal)
      return 0;
    int64_t first = key - dims.keyShift();
    first = first < 0 ? 0 : (first > dims.queries ? dims.queries : first);
    return first / tileRows;
  }
};

/// The dropout of a call, as its attributes and salt operand give it; the salt is read where
/// mask() runs (on the GPU, inside the kernel).
struct AttentionDropout {
  double ratio = 0.0;
  int64_t seed = 0;
  const int64_t *salt = nullptr;

  MEMC_HOST_DEVICE DropoutMask mask() const {
    return salt ? DropoutMask(ratio, seed, std::optional<int64_t>(*salt))
                : DropoutMask(ratio, seed, std::optional<int64_t>());
  }
};

/// The factor of probability (b, h, query, key): the unfused dropout's mask element at its
/// flat index in [B, H, Tq, Tk]; 1 without dropout.
MEMC_HOST_DEVICE inline float dropoutFactor(const DropoutMask &dropout, const AttentionDims &dims,
                                            int64_t b, int64_t h, int64_t query, int64_t key) {
  return dropout.active() ? dropout.factor(dims.queryRow(b, h, query, dims.keys) + key) : 1.0f;
}

/// One query row's online softmax: the largest score folded in so far and the sum of
/// exp(score - max) over them. A GPU thread holding part of a row keeps its part of the sum
/// (the rescaling is linear) and adds the parts up before finishing.
struct SoftmaxRow {
  float max = kHiddenScore;
  float sum = 0.0f;

  /// Raises the maximum to cover a tile whose largest score is `tileMax`; returns the factor
  /// that what was summed so far (the sum and the row's output accumulator) is rescaled by: 0
  /// for the first tile with a visible key, 1 while none has been seen.
  MEMC_HOST_DEVICE float raiseMax(float tileMax) {
    float newMax = fmaxf(max, tileMax);
    if (newMax == kHiddenScore)
      return 1.0f;
    float rescale = expf(max - newMax);
    max = newMax;
    return rescale;
  }
  /// The unnormalised probability exp(score - max) of a score of the tile raiseMax took in.
  MEMC_HOST_DEVICE float weight(float score) const {
    return max == kHiddenScore ? 0.0f : expf(score - max);
  }
  /// Adds a tile's weights (before dropout: the sum normalises the undropped softmax).
  MEMC_HOST_DEVICE void accumulate(float rescale, float tileSum) { sum = sum * rescale + tileSum; }
  /// What the row's accumulated output is multiplied by at the end: 0 for a row that saw no
  /// key (all hidden or masked to -inf), whose output is zeros.
  MEMC_HOST_DEVICE float outputScale() const { return sum > 0.0f ? 1.0f / sum : 0.0f; }
  /// The row's logsumexp, saved for the backward; -inf for a row that saw no key.
  MEMC_HOST_DEVICE float logsumexp() const { return sum > 0.0f ? max + logf(sum) : kHiddenScore; }
};

/// Folds a row of `count` scores into `row`: the scores become their weights (before dropout);
/// returns the factor the row's output accumulator is rescaled by before the weights times the
/// values are added.
MEMC_HOST_DEVICE inline float foldScores(SoftmaxRow &row, float *scores, int64_t count) {
  float tileMax = kHiddenScore;
  for (int64_t c = 0; c < count; ++c)
    tileMax = fmaxf(tileMax, scores[c]);
  float rescale = row.raiseMax(tileMax);
  float tileSum = 0.0f;
  for (int64_t c = 0; c < count; ++c) {
    scores[c] = row.weight(scores[c]);
    tileSum += scores[c];
  }
  row.accumulate(rescale, tileSum);
  return rescale;
}

/// The backward's probability of a score, recomputed from its row's saved logsumexp: 0 in a row
/// that saw no key.
MEMC_HOST_DEVICE inline float probabilityFromLogsumexp(float score, float logsumexp) {
  return logsumexp == kHiddenScore ? 0.0f : expf(score - logsumexp);
}

/// dS = P * (dP * dropout - D) * scale, the gradient of the score (before its scale) from the
/// undropped probability P, dP = dO . v, the dropout factor and the row's D = rowsum(dO * O),
/// which equals rowsum(P * dP * dropout).
MEMC_HOST_DEVICE inline float scoreGradient(float probability, float outputGradDot, float dropout,
                                            float rowDot, float scale) {
  return probability * (outputGradDot * dropout - rowDot) * scale;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_ATTENTIONMATH_H
