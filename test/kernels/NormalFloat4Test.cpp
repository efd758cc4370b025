//===- NormalFloat4Test.cpp - NF4 quantization against its reference ------===//
//
// kernels/NormalFloat4.h against test/kernels/make_nf4.py, written from the QLoRA paper's
// algorithm in Python: every packed byte and absmax of seeded weights (normal, a short last
// block, an outlier, zeros) and the double quantization of 300 absmax (offset, codes, scales) bit
// for bit; then what dequantization promises: each element within half the widest gap of the
// code times its block's absmax, and the double-quantized absmax near the plain ones.
//
//===----------------------------------------------------------------------===//
#include "JsonReference.h"

#include "kernels/NormalFloat4.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace memc::kernels {
namespace {

using testing::numbers;

const runtime::JsonValue &reference() {
  static const runtime::JsonValue parsed = testing::readJsonReference(MEMC_NF4_REFERENCE);
  return parsed;
}

TEST(NormalFloat4, ValuesEqualTheReference) {
  std::vector<float> expected = numbers<float>(*reference().find("values"));
  ASSERT_EQ(expected.size(), 16u);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(nf4Value(i), expected[i]) << i;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(nf4Nearest(nf4Value(i)), i);
}

TEST(NormalFloat4, NearestSearchesLikeAScan) {
  // The binary search against a scan of all 16 values (the reference's loop), on a dense grid,
  // every midpoint and its neighbouring floats.
  auto scan = [](float x) {
    int index = 0;
    while (index < 15 && x - nf4Value(index) > nf4Value(index + 1) - x)
      ++index;
    return index;
  };
  std::vector<float> probes;
  for (int i = -120000; i <= 120000; ++i)
    probes.push_back(static_cast<float>(i) / 100000.0f);
  for (int i = 0; i < 15; ++i) {
    float middle = (nf4Value(i) + nf4Value(i + 1)) / 2;
    probes.insert(probes.end(), {middle, std::nextafter(middle, -2.0f),
                                 std::nextafter(middle, 2.0f)});
  }
  for (float x : probes)
    ASSERT_EQ(nf4Nearest(x), scan(x)) << x;
}

TEST(NormalFloat4, WeightsEqualTheReference) {
  for (const runtime::JsonValue &weight : reference().find("weights")->elements()) {
    const std::string name = weight.find("name")->string();
    std::vector<float> values = numbers<float>(*weight.find("values"));
    Nf4Layout layout{static_cast<int64_t>(values.size())};
    std::vector<uint8_t> packed(layout.packedBytes());
    std::vector<float> absmax(layout.blocks());
    quantizeNf4(values.data(), layout.count, packed.data(), absmax.data());
    EXPECT_EQ(packed, numbers<uint8_t>(*weight.find("packed"))) << name;
    EXPECT_EQ(absmax, numbers<float>(*weight.find("absmax"))) << name;
    // Each element within half the widest gap of the code (-1 to -0.6962) of its block's scale.
    std::vector<float> restored(layout.count);
    dequantizeNf4(packed.data(), Nf4Absmax{absmax.data()}, 0, layout.count, restored.data());
    for (int64_t i = 0; i < layout.count; ++i)
      EXPECT_LE(std::fabs(restored[i] - values[i]), 0.1520f * absmax[i / kNf4Block] + 1e-12f)
          << name << " element " << i;
    // A range that starts mid-block, at an odd or even element, dequantizes the same values,
    // a byte at a time too.
    static const Nf4Pairs pairs = makeNf4Pairs();
    std::vector<float> bytewise(layout.count);
    dequantizeNf4(packed.data(), Nf4Absmax{absmax.data()}, 0, layout.count, bytewise.data(),
                  &pairs);
    EXPECT_EQ(bytewise, restored) << name;
    for (int64_t first : {30, 31})
      if (layout.count > first + 71) {
        std::vector<float> middle(71);
        dequantizeNf4(packed.data(), Nf4Absmax{absmax.data()}, first, 71, middle.data(), &pairs);
        for (int i = 0; i < 71; ++i)
          EXPECT_EQ(middle[i], restored[first + i]) << name << " from " << first;
      }
  }
}

TEST(NormalFloat4, DoubleQuantizationEqualsTheReference) {
  const runtime::JsonValue &expected = *reference().find("absmax");
  std::vector<float> absmax = numbers<float>(*expected.find("absmax"));
  Nf4Layout layout{static_cast<int64_t>(absmax.size()) * kNf4Block};
  ASSERT_EQ(layout.absmaxBlocks(), 2);
  std::vector<uint8_t> codes(absmax.size());
  std::vector<float> scales(layout.absmaxBlocks());
  float offset = quantizeNf4Absmax(dynamicCode(true), absmax.data(), absmax.size(), codes.data(),
                                   scales.data());
  EXPECT_EQ(offset, static_cast<float>(expected.find("offset")->number()));
  EXPECT_EQ(codes, numbers<uint8_t>(*expected.find("codes")));
  EXPECT_EQ(scales, numbers<float>(*expected.find("scales")));
  Nf4Absmax restored = doubleQuantizedAbsmax(codes.data(), scales.data(), offset);
  for (size_t block = 0; block < absmax.size(); ++block)
    EXPECT_NEAR(restored[block], absmax[block], 0.01f * scales[block / kNf4AbsmaxBlock]);
}

} // namespace
} // namespace memc::kernels
