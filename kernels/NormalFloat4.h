//===- NormalFloat4.h - QLoRA's 4-bit NormalFloat weights --------*- C++ -*-===//
//
// The 4-bit code of a quantized frozen base (Dettmers et al., "QLoRA", 2023; bitsandbytes'
// nf4): 16 values in [-1, 1], the quantiles of a standard normal scaled to [-1, 1], with an
// exact 0. A weight is quantized over its flat storage order in blocks of 64: one absmax per
// block and, per element, the index of the value nearest to element / absmax, two indices per
// byte (the first in the high nibble, as bitsandbytes packs them). The last block may be short
// and an odd count leaves the last low nibble 0.
//
// Double quantization stores the absmax themselves in 8 bits: their mean is subtracted (the
// offset) and the rest quantized in blocks of 256 on the signed dynamic code
// (DynamicQuantization.h), one f32 scale per block; about 0.127 bits per weight instead of 0.5.
//
// Header-only; the dequantization is free of host state, so a CUDA kernel can use it too. The
// Python reference of the same algorithm is test/kernels/make_nf4.py.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_NORMALFLOAT4_H
#define MEMC_KERNELS_NORMALFLOAT4_H

#include "kernels/DynamicQuantization.h"

#include <cstdint>

namespace memc::kernels {

/// Weights per absmax.
constexpr int64_t kNf4Block = 64;
/// Absmax per scale of double quantization.
constexpr int64_t kNf4AbsmaxBlock = kQuantizationBlock;

/// The code's 16 values (the QLoRA paper's Appendix E, as bitsandbytes' table).
MEMC_HOST_DEVICE inline float nf4Value(int index) {
  constexpr float kValues[16] = {-1.0f,
                                 -0.6961928009986877f,
                                 -0.5250730514526367f,
                                 -0.39491748809814453f,
                                 -0.28444138169288635f,
                                 -0.18477343022823334f,
                                 -0.09105003625154495f,
                                 0.0f,
                                 0.07958029955625534f,
                                 0.16093020141124725f,
                                 0.24611230194568634f,
                                 0.33791524171829224f,
                                 0.44070982933044434f,
                                 0.5626170039176941f,
                                 0.7229568362236023f,
                                 1.0f};
  return kValues[index];
}

/// The index of the code value nearest to `normalized` (ties to the lower): the first index
/// whose next value is no nearer, by binary search (four steps; the values are ascending).
MEMC_HOST_DEVICE inline uint8_t nf4Nearest(float normalized) {
  int low = 0, high = 15;
  while (low < high) {
    const int middle = (low + high) / 2;
    if (normalized - nf4Value(middle) > nf4Value(middle + 1) - normalized)
      low = middle + 1;
    else
      high = middle;
  }
  return static_cast<uint8_t>(low);
}

/// The sizes of one quantized weight of `count` elements.
struct Nf4Layout {
  int64_t count = 0;
  MEMC_HOST_DEVICE int64_t packedBytes() const { return (count + 1) / 2; }
  MEMC_HOST_DEVICE int64_t blocks() const { return (count + kNf4Block - 1) / kNf4Block; }
  MEMC_HOST_DEVICE int64_t absmaxBlocks() const {
    return (blocks() + kNf4AbsmaxBlock - 1) / kNf4AbsmaxBlock;
  }
};

/// Element i's code index in the packed bytes.
MEMC_HOST_DEVICE inline int nf4Index(const uint8_t *packed, int64_t i) {
  uint8_t byte = packed[i / 2];
  return i % 2 == 0 ? byte >> 4 : byte & 0xF;
}

/// A weight's absmax: f32 per block, or (double quantization) 8-bit codes per block with an f32
/// scale per kNf4AbsmaxBlock of them and the offset.
struct Nf4Absmax {
  const float *plain = nullptr;
  const uint8_t *codes = nullptr;
  const float *scales = nullptr;
  float offset = 0;
  /// The signed dynamic code's values (DynamicCode::values), for `codes`.
  const float *dynamicValues = nullptr;

  MEMC_HOST_DEVICE float operator[](int64_t block) const {
    if (plain)
      return plain[block];
    return dynamicValues[codes[block]] * scales[block / kNf4AbsmaxBlock] + offset;
  }
};

/// Each packed byte's two code values (high nibble first), so that a kernel dequantizes a byte
/// at a time: two loads and two products, without unpacking nibbles.
struct Nf4Pairs {
  float values[256][2];
};

inline Nf4Pairs makeNf4Pairs() {
  Nf4Pairs pairs;
  for (int byte = 0; byte < 256; ++byte) {
    pairs.values[byte][0] = nf4Value(byte >> 4);
    pairs.values[byte][1] = nf4Value(byte & 0xF);
  }
  return pairs;
}

/// A double-quantized absmax on the signed dynamic code (dynamicCode, host only).
inline Nf4Absmax doubleQuantizedAbsmax(const uint8_t *codes, const float *scales, float offset) {
  return Nf4Absmax{nullptr, codes, scales, offset, dynamicCode(true).values};
}

/// Elements [begin, begin + count) of the weight, dequantized into `out`; with `pairs`, whole
/// bytes at a time (the same values, faster).
MEMC_HOST_DEVICE inline void dequantizeNf4(const uint8_t *packed, const Nf4Absmax &absmax,
                                           int64_t begin, int64_t count, float *out,
                                           const Nf4Pairs *pairs = nullptr) {
  int64_t i = begin, end = begin + count;
  while (i < end) {
    const int64_t block = i / kNf4Block;
    const int64_t blockEnd = (block + 1) * kNf4Block < end ? (block + 1) * kNf4Block : end;
    const float scale = absmax[block];
    if (pairs && i % 2 == 0) {
      // Blocks hold an even number of elements: a block's bytes are whole, but maybe its last.
      for (; i + 1 < blockEnd; i += 2, out += 2) {
        const float *two = pairs->values[packed[i / 2]];
        out[0] = two[0] * scale;
        out[1] = two[1] * scale;
      }
    }
    for (; i < blockEnd; ++i)
      *out++ = nf4Value(nf4Index(packed, i)) * scale;
  }
}

/// Quantizes `count` values: `packed` (Nf4Layout::packedBytes) and one absmax per block.
inline void quantizeNf4(const float *values, int64_t count, uint8_t *packed, float *absmax) {
  Nf4Layout layout{count};
  for (int64_t byte = 0; byte < layout.packedBytes(); ++byte)
    packed[byte] = 0;
  for (int64_t block = 0; block < layout.blocks(); ++block) {
    const int64_t begin = block * kNf4Block;
    const int64_t end = begin + kNf4Block < count ? begin + kNf4Block : count;
    float largest = 0;
    for (int64_t i = begin; i < end; ++i) {
      float magnitude = values[i] < 0 ? -values[i] : values[i];
      largest = magnitude > largest ? magnitude : largest;
    }
    absmax[block] = largest;
    const float inverse = largest > 0 ? 1.0f / largest : 0.0f;
    for (int64_t i = begin; i < end; ++i)
      packed[i / 2] |= static_cast<uint8_t>(nf4Nearest(values[i] * inverse) << (i % 2 ? 0 : 4));
  }
}

/// Double quantization of `blocks` absmax: returns the offset (their mean, summed in double)
/// and writes one code per absmax and one scale per kNf4AbsmaxBlock of them.
inline float quantizeNf4Absmax(const DynamicCode &signedCode, const float *absmax, int64_t blocks,
                               uint8_t *codes, float *scales) {
  double sum = 0;
  for (int64_t block = 0; block < blocks; ++block)
    sum += absmax[block];
  const float offset = blocks ? static_cast<float>(sum / static_cast<double>(blocks)) : 0.0f;
  float centered[kNf4AbsmaxBlock];
  for (int64_t begin = 0; begin < blocks; begin += kNf4AbsmaxBlock) {
    const int64_t count = blocks - begin < kNf4AbsmaxBlock ? blocks - begin : kNf4AbsmaxBlock;
    for (int64_t i = 0; i < count; ++i)
      centered[i] = absmax[begin + i] - offset;
    scales[begin / kNf4AbsmaxBlock] = quantizeBlock(signedCode, centered, count, codes + begin);
  }
  return offset;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_NORMALFLOAT4_H
