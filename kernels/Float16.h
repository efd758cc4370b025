//===- Float16.h - IEEE half and bfloat16 storage types ---------*- C++ -*-===//
//
// f16 and bf16 tensors are stored as 16-bit patterns and computed in f32. The conversions here
// are exact (and the same in CUDA code, MEMC_HOST_DEVICE): f16/bf16 -> f32 is lossless, f32 -> f16/bf16 rounds to nearest, ties to even,
// including subnormal results, overflow to infinity, and NaN (kept quiet, sign and top payload
// bits preserved). They are bit manipulation only, so they need no F16C/AVX512-BF16 hardware.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_FLOAT16_H
#define MEMC_KERNELS_FLOAT16_H

#include "kernels/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace memc::kernels {

/// IEEE 754 binary16, by its bits. A distinct type so that kernels can dispatch on it.
struct Half {
  uint16_t bits;
};

/// bfloat16 (the top half of an f32), by its bits.
struct BFloat16 {
  uint16_t bits;
};

MEMC_HOST_DEVICE inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

MEMC_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

MEMC_HOST_DEVICE inline float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in f32.
    float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f)
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  return floatFromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

MEMC_HOST_DEVICE inline uint16_t floatToHalf(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    if (magnitude == 0x7f800000u)
      return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  int32_t exponent = static_cast<int32_t>(magnitude >> 23) - 127 + 15;
  if (exponent >= 31)
    return sign | 0x7c00u;
  if (exponent >= 1) {
    uint32_t result = (static_cast<uint32_t>(exponent) << 10) | ((magnitude >> 13) & 0x3ffu);
    uint32_t rest = magnitude & 0x1fffu;
    // A carry out of the mantissa correctly bumps the exponent, up to infinity.
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u)))
      ++result;
    return static_cast<uint16_t>(sign | result);
  }
  // Subnormal or zero in f16: count units of 2^-24. Below 2^-25 everything rounds to zero (and
  // 2^-25 itself ties to the even zero).
  if (magnitude <= 0x33000000u)
    return sign;
  uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - (magnitude >> 23); // 14..24 for this range
  uint32_t result = mantissa >> shift;
  uint32_t rest = mantissa & ((1u << shift) - 1u);
  uint32_t halfway = 1u << (shift - 1u);
  if (rest > halfway || (rest == halfway && (result & 1u)))
    ++result;
  return static_cast<uint16_t>(sign | result);
}

MEMC_HOST_DEVICE inline float bfloat16ToFloat(uint16_t value) {
  return floatFromBits(static_cast<uint32_t>(value) << 16);
}

MEMC_HOST_DEVICE inline uint16_t floatToBFloat16(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  // Round to nearest even on the low 16 bits; overflow carries into infinity as it should.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_FLOAT16_H
