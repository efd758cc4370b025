//===- AttentionBlocks.h - tiles of attention shared by forward and backward -*- C++ -*-===//
//
// What flash_attention (Attention.cpp) and flash_attention_grad (AttentionBackward.cpp) both do
// to one block of queries against one block of keys: load tiles as f32, compute the scores
// scale * q k^T + mask with the causal cut, recompute probabilities from a saved logsumexp, and
// drop probabilities with the mask the unfused dropout would draw. Both must compute the same
// scores bit for bit, or the backward's probabilities would not be the forward's; so there is
// one copy, here, and both cut the keys into the same whole blocks.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ATTENTIONBLOCKS_H
#define MEMC_KERNELS_CPU_ATTENTIONBLOCKS_H

#include "kernels/DropoutMask.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/AttentionWorkspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/VectorMath.h"
#include "kernels/ops/CallChecks.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace memc::kernels {

/// The additive mask of one call: any float type, each dimension 1 (broadcast, stride 0) or
/// that of [B, H, Tq, Tk].
class AttentionMask {
public:
  AttentionMask() = default;
  explicit AttentionMask(const TensorView &mask) : data(mask.data) {
    const Shape &shape = mask.shape;
    int64_t stride = 1;
    for (int dim = 3; dim >= 0; --dim) {
      strides[dim] = shape[dim] == 1 ? 0 : stride;
      stride *= shape[dim];
    }
    visitFloat(mask.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      load = [](const void *values, int64_t index) {
        return Element<T>::load(static_cast<const T *>(values)[index]);
      };
    });
  }
  bool present() const { return data != nullptr; }
  /// The mask at (b, h, query, key).
  float at(int64_t b, int64_t h, int64_t query, int64_t key) const {
    return load(data, b * strides[0] + h * strides[1] + query * strides[2] + key * strides[3]);
  }

private:
  const void *data = nullptr;
  int64_t strides[4] = {0, 0, 0, 0};
  float (*load)(const void *, int64_t) = nullptr;
};

/// The dropout of one call on its probabilities: memc.dropout's mask (DropoutMask.h) keyed by
/// the call's seed and salt.
inline DropoutMask attentionDropout(const KernelCall &call, std::optional<size_t> salt) {
  const Attributes &attributes = attributesOf(call);
  std::optional<int64_t> saltValue;
  if (salt)
    saltValue = ScalarOperand<int64_t>(call.inputs[*salt]).get();
  return DropoutMask(attributes.floatOr("dropout_ratio", 0.0), attributes.intOr("seed", 0),
                     saltValue);
}

/// One call's sizes, attributes, mask and dropout, and where its blocks lie.
struct AttentionProblem {
  AttentionSizes sizes;
  float scale;
  bool causal;
  AttentionMask mask;
  DropoutMask dropout;

  /// From the query, key and value at inputs[first, first + 3) and the mask and salt from
  /// inputs[maskIndex] on, those the call has (attentionOptionals).
  AttentionProblem(const KernelCall &call, size_t first, size_t maskIndex)
      : AttentionProblem(call, first, attentionOptionals(call, maskIndex)) {}
  AttentionProblem(const KernelCall &call, size_t first, AttentionOptionals optionals)
      : sizes(call, first), scale(static_cast<float>(attributesOf(call).floatOr("scale", 1.0))),
        causal(attributesOf(call).intOr("causal", 0) == 1),
        mask(optionals.mask ? AttentionMask(call.inputs[*optionals.mask]) : AttentionMask()),
        dropout(attentionDropout(call, optionals.salt)) {}

  /// Query heads per kv head.
  int64_t group() const { return sizes.heads / sizes.kvHeads; }
  /// Causal attention aligns the last query with the last key: query i sees keys
  /// j <= i + keyShift.
  int64_t keyShift() const { return sizes.keys - sizes.queries; }
  /// One past the last key the queries before `queryEnd` see.
  int64_t visibleKeyEnd(int64_t queryEnd) const {
    return causal ? std::clamp<int64_t>(queryEnd + keyShift(), 0, sizes.keys) : sizes.keys;
  }
  /// The first block of queries that sees key `key`.
  int64_t firstQueryBlockSeeing(int64_t key) const {
    if (!causal)
      return 0;
    return std::clamp<int64_t>(key - keyShift(), 0, sizes.queries) / sizes.queryBlock;
  }
  /// Row offsets (elements) of a [B, H, Tq, width] tensor's and a [B, Hkv, Tk, width] tensor's
  /// rows.
  int64_t queryRow(int64_t b, int64_t h, int64_t query, int64_t width) const {
    return ((b * sizes.heads + h) * sizes.queries + query) * width;
  }
  int64_t keyRow(int64_t b, int64_t kvHead, int64_t key, int64_t width) const {
    return ((b * sizes.kvHeads + kvHead) * sizes.keys + key) * width;
  }
  /// The dropout factor (0 or 1 / (1 - ratio)) of probability (b, h, query, key): the mask
  /// element at its flat index in [B, H, Tq, Tk], as the unfused dropout draws it.
  float dropoutFactor(int64_t b, int64_t h, int64_t query, int64_t key) const {
    return dropout.factor(queryRow(b, h, query, sizes.keys) + key);
  }
};

/// rows x cols of `source` (row-major) as f32 in `tile`.
template <typename T> void loadTile(const T *source, int64_t rows, int64_t cols, float *tile) {
  for (int64_t i = 0; i < rows * cols; ++i)
    tile[i] = Element<T>::load(source[i]);
}

/// rows x cols of `source` (row-major) as f32 in `tile`, transposed: tile[c * rows + r].
template <typename T>
void loadTileTransposed(const T *source, int64_t rows, int64_t cols, float *tile) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      tile[c * rows + r] = Element<T>::load(source[r * cols + c]);
}

/// rows x cols f32 `tile` stored to `target`.
template <typename T> void storeTile(const float *tile, int64_t rows, int64_t cols, T *target) {
  for (int64_t i = 0; i < rows * cols; ++i)
    target[i] = Element<T>::store(tile[i]);
}

/// scores[queryCount, keyCount] = scale * queries @ keysT + mask, -inf where causal attention
/// hides the key, for queries [query0, +queryCount) and keys [key0, +keyCount) of (b, h).
inline void scoreTile(const AttentionProblem &problem, int64_t b, int64_t h, int64_t query0,
                      int64_t queryCount, int64_t key0, int64_t keyCount, const float *queries,
                      const float *keysT, float *scores) {
  gemmSerial(queryCount, keyCount, problem.sizes.headDim, queries, problem.sizes.headDim, keysT,
             keyCount, scores, keyCount);
  const float hidden = -std::numeric_limits<float>::infinity();
  const float scale = problem.scale; // a local: `row` could alias the problem's field
  for (int64_t r = 0; r < queryCount; ++r) {
    float *row = scores + r * keyCount;
    for (int64_t c = 0; c < keyCount; ++c)
      row[c] *= scale;
    if (problem.mask.present())
      for (int64_t c = 0; c < keyCount; ++c)
        row[c] += problem.mask.at(b, h, query0 + r, key0 + c);
    if (problem.causal)
      for (int64_t c = std::max<int64_t>(0, query0 + r + problem.keyShift() + 1 - key0);
           c < keyCount; ++c)
        row[c] = hidden;
  }
}

/// Drops a tile of probabilities [query0, +queryCount) x [key0, +keyCount) of (b, h) in place.
inline void dropTile(const AttentionProblem &problem, int64_t b, int64_t h, int64_t query0,
                     int64_t queryCount, int64_t key0, int64_t keyCount, float *tile) {
  for (int64_t r = 0; r < queryCount; ++r)
    for (int64_t c = 0; c < keyCount; ++c)
      tile[r * keyCount + c] *= problem.dropoutFactor(b, h, query0 + r, key0 + c);
}

/// row[c] = exp(row[c] - max) over a row of n, in place: a loop of its own, compiled per
/// instruction set (Attention.cpp), so that it vectorizes; a row sum folded into it would keep
/// it scalar.
void exponentiateRow(float *row, int64_t n, float max);

/// The probabilities exp(score - logsumexp) in place of the scores; rows that saw no key
/// (logsumexp -inf) are 0, as their output is.
inline void probabilitiesFromScores(const float *logsumexp, int64_t queryCount, int64_t keyCount,
                                    float *scores) {
  const float none = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < queryCount; ++r) {
    float *row = scores + r * keyCount;
    if (logsumexp[r] == none)
      std::fill(row, row + keyCount, 0.0f);
    else
      exponentiateRow(row, keyCount, logsumexp[r]);
  }
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ATTENTIONBLOCKS_H
