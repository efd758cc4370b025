//===- DropoutMask.h - which elements a dropout keeps -----------*- C++ -*-===//
//
// The one mask function of every dropout: memc.dropout (kernels/cpu/Unary.cpp) and the dropout
// flash_attention applies to its probabilities (AttentionBlocks.h). Element i of the tensor the
// dropout reads is kept when the i-th output of a splitmix64 stream keyed by (seed, salt) is at
// least the ratio: a pure function of (seed, salt, i), so forward, backward and recomputation
// draw the same mask without storing it, any thread split gives the same one, and a fused
// attention draws exactly the mask the unfused dropout on its [B, H, Tq, Tk] probabilities
// would. Header-only and free of host state so that a CUDA kernel can call it too.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_DROPOUTMASK_H
#define MEMC_KERNELS_DROPOUTMASK_H

#include "kernels/ScalarOperand.h"

#include <cstdint>
#include <optional>

namespace memc::kernels {

/// splitmix64's output function: a bijective 64-bit mixer.
MEMC_HOST_DEVICE inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The dropout of one call: its ratio and the key its seed and salt make. A ratio of 0 keeps
/// every element at scale 1.
class DropoutMask {
public:
  DropoutMask() = default;
  MEMC_HOST_DEVICE DropoutMask(double ratio, int64_t seed, std::optional<int64_t> salt)
      : ratio(ratio), scale(static_cast<float>(1.0 / (1.0 - ratio))),
        key(mix64(static_cast<uint64_t>(seed))) {
    if (salt)
      key = mix64(key ^ mix64(static_cast<uint64_t>(*salt)));
  }

  MEMC_HOST_DEVICE bool active() const { return ratio > 0.0; }
  /// Whether element `index` (flat, row-major) of the dropped tensor is kept.
  MEMC_HOST_DEVICE bool keeps(int64_t index) const {
    uint64_t bits = mix64(key + (static_cast<uint64_t>(index) + 1) * 0x9e3779b97f4a7c15ull);
    double uniform = static_cast<double>(bits >> 11) * 0x1.0p-53;
    return uniform >= ratio;
  }
  /// What a kept element is multiplied by: 1 / (1 - ratio).
  MEMC_HOST_DEVICE float keptScale() const { return scale; }
  /// Element `index`'s factor: keptScale() where kept, 0 where dropped.
  MEMC_HOST_DEVICE float factor(int64_t index) const { return keeps(index) ? scale : 0.0f; }

private:
  double ratio = 0.0;
  float scale = 1.0f;
  uint64_t key = 0;
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_DROPOUTMASK_H
