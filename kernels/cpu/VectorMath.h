//===- VectorMath.h - f32 exp, tanh, erf, sigmoid that vectorize -*- C++ -*-===//
//
// libm's expf, tanhf and erff are calls, so a loop over them runs one element at a time. These
// are branch-free f32 versions: a polynomial on a reduced range, selects instead of branches
// and bit casts for powers of two, so GCC vectorizes a loop that calls them. They stay close to
// libm: over every f32 input, against f64 libm, the largest errors are 1.00 ulp for exp, 1.33
// for tanh, 1.83 for erf and 2.40 for sigmoid (glibc's tanhf: 2.2, erff: 0.9), with or without
// FMA; VectorMathTest bounds them on a sweep. Infinities, NaN, overflow to inf, gradual
// underflow and signed zeros come out as libm's.
//
// MEMC_VECTOR_CLONES on a loop compiles it three times: baseline x86-64 (SSE2), x86-64-v3
// (AVX2, FMA) and x86-64-v4 (AVX-512); the loader picks the best the CPU has (an ifunc), so
// the binary still runs on any x86-64. GCC contracts a * b + c into an FMA where the clone has
// one, so results may differ in the last bit between machines, never between threads or runs.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_VECTORMATH_H
#define MEMC_KERNELS_CPU_VECTORMATH_H

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define MEMC_VECTOR_CLONES                                                                         \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MEMC_VECTOR_CLONES
#endif

// Forced inline: a loop vectorizes only with these bodies in it, and GCC's inliner gave up on
// loops calling two of them (gelu_grad's erf and exp ran as scalar calls: 0.8 GB/s, now 7.7).
#define MEMC_VECTOR_INLINE inline __attribute__((always_inline))

namespace memc::kernels::vectormath {

inline uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

inline float floatOf(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// |x| with the sign of `sign`.
inline float copySign(float x, float sign) {
  return floatOf((bitsOf(x) & 0x7fffffffu) | (bitsOf(sign) & 0x80000000u));
}

inline float absolute(float x) { return floatOf(bitsOf(x) & 0x7fffffffu); }

/// 2^n for n in [-126, 127], built in the exponent field.
inline float powerOfTwo(int32_t n) { return floatOf((static_cast<uint32_t>(n) + 127u) << 23); }

/// e^x.
MEMC_VECTOR_INLINE float exp(float x) {
  // Beyond [-104, 89] the result is 0 or inf whatever x is; clamping keeps n in [-150, 129].
  // NaN fails both comparisons and flows through the polynomial.
  x = x < -104.0f ? -104.0f : x;
  x = x > 89.0f ? 89.0f : x;
  // n = round(x / ln 2): adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits.
  constexpr float kRound = 12582912.0f;
  float shifted = x * 1.44269504f + kRound;
  auto n = static_cast<int32_t>(bitsOf(shifted) - bitsOf(kRound));
  float k = shifted - kRound;
  // r = x - k ln 2 in two steps (Cody-Waite): k * kLn2High is exact, so r keeps its bits.
  constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
  float r = x - k * kLn2High;
  r = r - k * kLn2Low;
  // e^r on |r| <= ln2 / 2: 1 + r + r^2 P(r), P a minimax fit of relative error 5e-11.
  float p = 1.97903210e-4f;
  p = p * r + 1.39446801e-3f;
  p = p * r + 8.33349675e-3f;
  p = p * r + 4.16662954e-2f;
  p = p * r + 1.66666657e-1f;
  p = p * r + 0.5f;
  float er = (p * r) * r + r + 1.0f;
  // 2^n as 2^(n/2) 2^(n - n/2): both factors are normal, the first product is exact and the
  // second rounds once, so overflow to inf and subnormal results round like libm's.
  int32_t half = n >> 1;
  return er * powerOfTwo(half) * powerOfTwo(n - half);
}

/// 1 / (1 + e^-x), as e^x / (1 + e^x) below 0 so that e^-x cannot overflow where the result
/// is still a subnormal.
MEMC_VECTOR_INLINE float sigmoid(float x) {
  float e = exp(-absolute(x));
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

/// tanh(x).
MEMC_VECTOR_INLINE float tanh(float x) {
  float a = absolute(x);
  // Small |x|: |x| + |x|^3 P(x^2), a minimax fit on [0, 0.625] of relative error 4e-9.
  float z = a * a;
  float p = -5.70498733e-3f;
  p = p * z + 2.06390880e-2f;
  p = p * z - 5.37397154e-2f;
  p = p * z + 1.33314416e-1f;
  p = p * z - 3.33332807e-1f;
  float small = (p * z) * a + a;
  // Larger: 1 - 2 / (e^2|x| + 1), which is 1 once e^2|x| overflows; NaN takes this side.
  float large = 1.0f - 2.0f / (exp(2.0f * a) + 1.0f);
  // On |x|, then the sign: tanh is odd, and -0 stays -0.
  return copySign(a < 0.625f ? small : large, x);
}

/// erf(x).
MEMC_VECTOR_INLINE float erf(float x) {
  float a = absolute(x);
  // Small |x|: x + x P(x^2), a minimax fit on [0, 0.921875] of relative error 4e-10. Adding x
  // last keeps P's rounding errors 8 times smaller than folding 2 / sqrt(pi) into P would.
  float z = x * x;
  float p = 8.37012049e-5f;
  p = p * z - 8.14270985e-4f;
  p = p * z + 5.20103285e-3f;
  p = p * z - 2.68593989e-2f;
  p = p * z + 1.12836957e-1f;
  p = p * z - 3.76126349e-1f;
  p = p * z + 1.28379226e-1f;
  float small = p * x + x;
  // Larger: 1 - e^Q(|x|), Q a fit of log(erfc) on [0.921875, 4] weighted by erfc; past 4,
  // erf is 1 in f32 and the clamp keeps Q inside its interval. NaN takes this side.
  float t = a > 4.0f ? 4.0f : a;
  float q = -2.11185015e-5f;
  q = q * t + 4.34733782e-4f;
  q = q * t - 4.17237682e-3f;
  q = q * t + 2.51228884e-2f;
  q = q * t - 1.08285442e-1f;
  q = q * t - 6.33342028e-1f;
  q = q * t - 1.12951732f;
  q = q * t + 1.75184687e-4f;
  float large = copySign(1.0f - exp(q), x);
  return a < 0.921875f ? small : large;
}

} // namespace memc::kernels::vectormath

#endif // MEMC_KERNELS_CPU_VECTORMATH_H
