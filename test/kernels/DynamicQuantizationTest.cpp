//===- DynamicQuantizationTest.cpp - the 8-bit dynamic code against its reference -===//
//
// kernels/DynamicQuantization.h against test/kernels/make_dynamic_code.py, written from the same
// algorithm in Python: both codes value for value, and the absmax and every index of seeded
// blocks (normal, an outlier, zeros, 1e-8 scale, a partial block, squares on the unsigned code)
// bit for bit; then what the code promises: a round trip within half the gap between
// neighbouring code values.
//
//===----------------------------------------------------------------------===//
#include "JsonReference.h"

#include "kernels/DynamicQuantization.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace memc::kernels {
namespace {

using testing::numbers;

const runtime::JsonValue &reference() {
  static const runtime::JsonValue parsed = testing::readJsonReference(MEMC_DYNAMIC_CODE_REFERENCE);
  return parsed;
}

TEST(DynamicQuantization, CodesEqualTheReference) {
  for (bool isSigned : {true, false}) {
    DynamicCode code = makeDynamicCode(isSigned);
    std::vector<float> expected = numbers<float>(*reference().find(isSigned ? "signed" : "unsigned"));
    ASSERT_EQ(expected.size(), 256u);
    for (int i = 0; i < 256; ++i)
      EXPECT_EQ(code.values[i], expected[i]) << (isSigned ? "signed " : "unsigned ") << i;
    EXPECT_EQ(code.values[255], 1.0f);
    EXPECT_EQ(code.values[isSigned ? 127 : 0], 0.0f);
  }
}

TEST(DynamicQuantization, BlocksEqualTheReference) {
  const DynamicCode signedCode = makeDynamicCode(true), unsignedCode = makeDynamicCode(false);
  for (const runtime::JsonValue &block : reference().find("blocks")->elements()) {
    const std::string name = block.find("name")->string();
    std::vector<float> values = numbers<float>(*block.find("values"));
    std::vector<uint8_t> indices(values.size());
    const DynamicCode &code = block.find("signed")->boolean() ? signedCode : unsignedCode;
    float absmax = quantizeBlock(code, values.data(), static_cast<int64_t>(values.size()),
                                 indices.data());
    EXPECT_EQ(absmax, static_cast<float>(block.find("absmax")->number())) << name;
    const auto &expected = block.find("indices")->elements();
    ASSERT_EQ(expected.size(), indices.size()) << name;
    for (size_t i = 0; i < indices.size(); ++i)
      EXPECT_EQ(indices[i], expected[i].integer()) << name << " element " << i;
  }
}

TEST(DynamicQuantization, NearestIsTheBruteForceNearest) {
  // The search starts from a table by the float's upper bits; it must find what scanning all
  // 256 values finds: at each code value, its neighbours in f32, the midpoints between
  // neighbours (ties go to the lower), and beyond both ends.
  for (bool isSigned : {true, false}) {
    const DynamicCode code = makeDynamicCode(isSigned);
    auto bruteForce = [&](float x) {
      int best = 0;
      for (int i = 1; i < 256; ++i)
        if (std::fabs(x - code.values[i]) < std::fabs(x - code.values[best]))
          best = i;
      return best;
    };
    std::vector<float> probes = {-2.0f, -1.0f, 2.0f, 1.5f, 0.0f, -0.0f, 1e-30f, -1e-30f};
    for (int i = 0; i < 256; ++i) {
      float v = code.values[i];
      probes.insert(probes.end(), {v, std::nextafter(v, 2.0f), std::nextafter(v, -2.0f)});
      if (i < 255)
        probes.push_back(v + (code.values[i + 1] - v) / 2);
    }
    for (float x : probes)
      EXPECT_EQ(quantizeNearest(code, x), bruteForce(x)) << x << (isSigned ? " signed" : "");
  }
}

TEST(DynamicQuantization, RoundTripIsWithinHalfAGap) {
  // Every element comes back as its nearest code value times the absmax: within half the gap
  // around it, and exactly for 0 and for the absmax itself.
  const DynamicCode code = makeDynamicCode(true);
  std::vector<float> values;
  for (int i = 0; i < 256; ++i)
    values.push_back(std::sin(0.37f * i) * std::exp(-0.05f * i));
  std::vector<uint8_t> indices(values.size());
  float absmax = quantizeBlock(code, values.data(), 256, indices.data());
  for (int i = 0; i < 256; ++i) {
    int at = indices[i];
    float below = at > 0 ? code.values[at] - code.values[at - 1] : 0;
    float above = at < 255 ? code.values[at + 1] - code.values[at] : 0;
    float bound = 0.5f * std::max(below, above) * absmax * (1 + 1e-6f);
    EXPECT_LE(std::fabs(dequantize(code, indices[i], absmax) - values[i]), bound) << i;
  }
  EXPECT_EQ(dequantize(code, quantizeNearest(code, 0.0f), absmax), 0.0f);
  EXPECT_EQ(dequantize(code, quantizeNearest(code, 1.0f), absmax), absmax);
}

} // namespace
} // namespace memc::kernels
