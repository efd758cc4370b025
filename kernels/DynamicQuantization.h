//===- DynamicQuantization.h - 8-bit block-wise dynamic quantization -*- C++ -*-===//
//
// The 8-bit code of block-wise optimizer states (Dettmers et al., "8-bit Optimizers via
// Block-wise Quantization", 2022; bitsandbytes' dynamic map): 256 values in [-1, 1] (signed, for
// Adam's first moment) or [0, 1] (unsigned, its second moment), dense near zero and sparse near
// one. Level i of 7 holds values 10^(i-6) x m for the midpoints m of an even split of
// [0.1, 1] into 2^i parts (signed: with their negatives) or 2^(i+1) parts (unsigned); 0 and 1
// complete the 256. A block of elements is stored as one f32 absmax and, per element, the index
// of the code value nearest to element / absmax.
//
// Header-only; the quantizers are free of host state, so a CUDA kernel can use them too (the
// host makes each code once, dynamicCode). The Python reference of the same algorithm is
// test/kernels/make_dynamic_code.py.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_DYNAMICQUANTIZATION_H
#define MEMC_KERNELS_DYNAMICQUANTIZATION_H

#include "kernels/Float16.h"
#include "kernels/ScalarOperand.h"

#include <cstdint>
#include <memory>

namespace memc::kernels {

/// Elements per block of a quantized optimizer state (bitsandbytes' block-wise optimizers').
constexpr int64_t kQuantizationBlock = 256;

/// The 256 code values, ascending, and where a search for a value starts: for each upper 16
/// bits of an f32 (a bucket of 2^16 floats), the last code value at or below every float in it
/// (or 0). The code's neighbours are several buckets apart, so a search from there takes a
/// step or two instead of a binary search's eight dependent ones.
struct DynamicCode {
  float values[256];
  uint8_t start[1 << 16];
};


/// The signed or unsigned code. Computed in double and rounded once to f32, as the reference.
inline DynamicCode makeDynamicCode(bool isSigned) {
  double values[256];
  int count = 0;
  for (int level = 0; level < 7; ++level) {
    const int parts = isSigned ? 1 << level : 1 << (level + 1);
    double scale = 1.0;
    for (int k = level; k < 6; ++k) // 10^(level - 6), by division as the reference
      scale /= 10.0;
    for (int part = 0; part < parts; ++part) {
      // The midpoint of parts `part` and `part + 1` of linspace(0.1, 1, parts + 1).
      const double low = 0.1 + 0.9 * part / parts, high = 0.1 + 0.9 * (part + 1) / parts;
      const double value = scale * (low + high) / 2.0;
      values[count++] = value;
      if (isSigned)
        values[count++] = -value;
    }
  }
  values[count++] = 0.0;
  values[count++] = 1.0;
  // Insertion sort: 256 values, once per code.
  for (int i = 1; i < count; ++i)
    for (int j = i; j > 0 && values[j - 1] > values[j]; --j) {
      double swap = values[j];
      values[j] = values[j - 1];
      values[j - 1] = swap;
    }
  DynamicCode code;
  for (int i = 0; i < 256; ++i)
    code.values[i] = static_cast<float>(values[i]);
  for (uint32_t bucket = 0; bucket < (1u << 16); ++bucket) {
    // The bucket's least float: its first for a positive sign, its last for a negative one.
    float least = floatFromBits(bucket & 0x8000 ? bucket << 16 | 0xFFFF : bucket << 16);
    int below = 0;
    while (below < 255 && code.values[below + 1] <= least)
      ++below;
    code.start[bucket] = static_cast<uint8_t>(below);
  }
  return code;
}

/// The signed or unsigned code, made once per process: the host's users share these.
inline const DynamicCode &dynamicCode(bool isSigned) {
  static const std::unique_ptr<DynamicCode> signedCode =
      std::make_unique<DynamicCode>(makeDynamicCode(true));
  static const std::unique_ptr<DynamicCode> unsignedCode =
      std::make_unique<DynamicCode>(makeDynamicCode(false));
  return isSigned ? *signedCode : *unsignedCode;
}

/// The index of the code value nearest to `normalized` (ties to the lower).
MEMC_HOST_DEVICE inline uint8_t quantizeNearest(const DynamicCode &code, float normalized) {
  uint32_t bits;
  __builtin_memcpy(&bits, &normalized, sizeof(bits));
  int low = code.start[bits >> 16]; // then the last value at or below `normalized`, or 0
  while (low < 255 && code.values[low + 1] <= normalized)
    ++low;
  int high = low < 255 ? low + 1 : 255;
  return static_cast<uint8_t>(normalized - code.values[low] <= code.values[high] - normalized
                                  ? low
                                  : high);
}

/// Each of `count` elements' code index, for the block's `absmax` (the largest magnitude
/// among them, which a caller may have tracked while computing them).
MEMC_HOST_DEVICE inline void quantizeWithAbsmax(const DynamicCode &code, const float *values,
                                                int64_t count, float absmax, uint8_t *indices) {
  const float inverse = absmax > 0 ? 1.0f / absmax : 0.0f;
  for (int64_t i = 0; i < count; ++i)
    indices[i] = quantizeNearest(code, values[i] * inverse);
}

/// Quantizes `count` (at most kQuantizationBlock) elements: their absmax, and each element's
/// code index. An all-zero block has absmax 0 and the index of 0.
MEMC_HOST_DEVICE inline float quantizeBlock(const DynamicCode &code, const float *values,
                                            int64_t count, uint8_t *indices) {
  float absmax = 0;
  for (int64_t i = 0; i < count; ++i) {
    float magnitude = values[i] < 0 ? -values[i] : values[i];
    absmax = magnitude > absmax ? magnitude : absmax;
  }
  quantizeWithAbsmax(code, values, count, absmax, indices);
  return absmax;
}

/// The value element i of a block stands for.
MEMC_HOST_DEVICE inline float dequantize(const DynamicCode &code, uint8_t index, float absmax) {
  return code.values[index] * absmax;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_DYNAMICQUANTIZATION_H
