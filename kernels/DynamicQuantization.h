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
// Header-only and free of host state, so a CUDA kernel can use it too; the Python reference of
// the same algorithm is test/kernels/make_dynamic_code.py.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_DYNAMICQUANTIZATION_H
#define MEMC_KERNELS_DYNAMICQUANTIZATION_H

#include "kernels/ScalarOperand.h"

#include <cstdint>

namespace memc::kernels {

/// Elements per block of a quantized optimizer state (bitsandbytes' block-wise optimizers').
constexpr int64_t kQuantizationBlock = 256;

/// The 256 code values, ascending.
struct DynamicCode {
  float values[256];
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
  return code;
}

/// The index of the code value nearest to `normalized` (ties to the lower), by binary search.
MEMC_HOST_DEVICE inline uint8_t quantizeNearest(const DynamicCode &code, float normalized) {
  int low = 0, high = 255;
  while (high - low > 1) { // code.values[low] <= normalized <= code.values[high], or outside
    int middle = (low + high) / 2;
    if (code.values[middle] <= normalized)
      low = middle;
    else
      high = middle;
  }
  return static_cast<uint8_t>(normalized - code.values[low] <= code.values[high] - normalized
                                  ? low
                                  : high);
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
  const float inverse = absmax > 0 ? 1.0f / absmax : 0.0f;
  for (int64_t i = 0; i < count; ++i)
    indices[i] = quantizeNearest(code, values[i] * inverse);
  return absmax;
}

/// The value element i of a block stands for.
MEMC_HOST_DEVICE inline float dequantize(const DynamicCode &code, uint8_t index, float absmax) {
  return code.values[index] * absmax;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_DYNAMICQUANTIZATION_H
