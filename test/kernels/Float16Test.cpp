//===- Float16Test.cpp - f16/bf16 conversions against arithmetic ----------===//
//
// The conversions in kernels/Float16.h are bit manipulation; these tests derive the same
// values independently with ldexp and round-to-nearest-even arithmetic in f64.
//
//===----------------------------------------------------------------------===//
#include "kernels/Float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace memc::kernels {
namespace {

/// The value of f16 bits from the IEEE 754 definition.
double halfValue(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

/// x rounded to nearest even on a grid with `precision` significand bits, exponents down to
/// `minExponent` (subnormals below), overflowing to infinity above `maxFinite`.
double roundToFormat(float x, int precision, int minExponent, double maxFinite) {
  if (std::isnan(x) || std::isinf(x) || x == 0)
    return x;
  int exponent = std::max(std::ilogb(static_cast<double>(x)), minExponent);
  double quantum = std::ldexp(1.0, exponent - (precision - 1));
  double rounded = std::nearbyint(static_cast<double>(x) / quantum) * quantum; // ties to even
  if (std::abs(rounded) > maxFinite)
    return std::copysign(INFINITY, x);
  return std::copysign(rounded, x); // keeps -0 for negative values that round to zero
}

void expectSameValue(double actual, double expected, float input) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << "input " << input;
    return;
  }
  EXPECT_EQ(actual, expected) << "input " << input;
  EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << "input " << input;
}

TEST(Float16, EveryHalfDecodesToItsValue) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    float value = halfToFloat(static_cast<uint16_t>(bits));
    double expected = halfValue(static_cast<uint16_t>(bits));
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(value)) << bits;
      // Re-encoding keeps a NaN a NaN of the same sign.
      uint16_t back = floatToHalf(value);
      EXPECT_EQ(back & 0x7c00, 0x7c00);
      EXPECT_NE(back & 0x3ff, 0);
      EXPECT_EQ(back & 0x8000, bits & 0x8000);
      continue;
    }
    ASSERT_EQ(static_cast<double>(value), expected) << bits;
    ASSERT_EQ(std::signbit(value), std::signbit(expected)) << bits;
    ASSERT_EQ(floatToHalf(value), bits) << "round trip of " << bits;
  }
}

TEST(Float16, EveryBFloat16DecodesAndRoundTrips) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    float value = bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(value))));
      continue;
    }
    ASSERT_EQ(floatToBFloat16(value), bits);
  }
}

std::vector<float> interestingFloats() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               65504.0f,
                               65519.99f,
                               65520.0f,
                               65536.0f,
                               1e-8f,
                               5.96e-8f,
                               2.98e-8f,
                               6.1e-5f,
                               1.0f + 1.0f / 2048,
                               1.0f + 3.0f / 2048,
                               3.3895e38f,
                               3.4028235e38f,
                               1e-45f,
                               1.17549435e-38f,
                               INFINITY,
                               -INFINITY};
  // Exact midpoints between neighbouring f16 and bf16 values, either side of them, across
  // the normal and subnormal ranges.
  for (int e = -26; e <= 16; ++e)
    for (int m : {0, 1, 2, 3, 1023, 1024, 2047})
      for (double delta : {-1e-3, 0.0, 1e-3}) {
        double base = std::ldexp(2.0 * m + 1 + delta, e - 11);
        values.push_back(static_cast<float>(base));
        values.push_back(static_cast<float>(-base));
      }
  for (int e = -135; e <= 127; e += 3)
    for (int m : {0, 1, 127, 255}) {
      double midpoint = std::ldexp(2.0 * m + 1, e - 8);
      values.push_back(static_cast<float>(midpoint));
      values.push_back(std::nextafter(static_cast<float>(midpoint), 0.0f));
    }
  std::mt19937 random(7);
  for (int i = 0; i < 2000000; ++i)
    values.push_back(floatFromBits(static_cast<uint32_t>(random())));
  return values;
}

TEST(Float16, FloatToHalfRoundsToNearestEven) {
  for (float x : interestingFloats()) {
    double expected = roundToFormat(x, 11, -14, 65504.0);
    expectSameValue(halfToFloat(floatToHalf(x)), expected, x);
    if (::testing::Test::HasFailure())
      return;
  }
}

TEST(Float16, FloatToBFloat16RoundsToNearestEven) {
  double maxFinite = std::ldexp(255.0, 120); // (2 - 2^-7) * 2^127
  for (float x : interestingFloats()) {
    double expected = roundToFormat(x, 8, -126, maxFinite);
    expectSameValue(bfloat16ToFloat(floatToBFloat16(x)), expected, x);
    if (::testing::Test::HasFailure())
      return;
  }
}

TEST(Float16, NaNStaysQuietNaNWithSign) {
  float negativeNaN = floatFromBits(0xffc00001u);
  EXPECT_EQ(floatToHalf(negativeNaN) & 0xfe00, 0xfe00);
  EXPECT_EQ(floatToBFloat16(negativeNaN) & 0xffc0, 0xffc0);
  // A signalling NaN whose payload is only in the low bits must not become infinity.
  float lowPayload = floatFromBits(0x7f800001u);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(lowPayload))));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(lowPayload))));
}

} // namespace
} // namespace memc::kernels
