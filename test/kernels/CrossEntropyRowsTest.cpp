//===- CrossEntropyRowsTest.cpp - the fused head's gradient row ------------===//
//
// logitsGradRow (CrossEntropyRows.h): scale * (softmax - onehot) from the row's logsumexp, with
// probabilities below the smallest normal float flushed to zero, so that no subnormal operand
// reaches the tile's products.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CrossEntropyRows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace memc::kernels {
namespace {

TEST(CrossEntropyRows, LogitsGradRowIsScaledSoftmaxMinusOneHot) {
  std::vector<float> logits = {1.0f, -2.0f, 0.5f, 3.0f, -1.0f};
  double sum = 0.0;
  for (float logit : logits)
    sum += std::exp(static_cast<double>(logit));
  float logsumexp = static_cast<float>(std::log(sum)), scale = 0.25f;
  std::vector<float> row = logits;
  logitsGradRow(row.data(), static_cast<int64_t>(row.size()), logsumexp, scale, 3);
  for (size_t i = 0; i < row.size(); ++i) {
    double expected =
        std::exp(logits[i] - static_cast<double>(logsumexp)) * scale - (i == 3 ? scale : 0.0);
    EXPECT_NEAR(row[i], expected, 1e-6) << i;
  }
  // A label in another chunk of classes: no column loses the scale.
  std::vector<float> other = logits;
  logitsGradRow(other.data(), static_cast<int64_t>(other.size()), logsumexp, scale, 7);
  EXPECT_NEAR(other[3], row[3] + scale, 1e-6);
}

TEST(CrossEntropyRows, LogitsGradRowFlushesSubnormalProbabilitiesToZero) {
  // Logits 80-100 below the row's logsumexp: e^-80 * 2^-10 and smaller are subnormal floats
  // (below 1.18e-38), e^-80 alone is not.
  const float logsumexp = 0.0f, scale = 1.0f / 1024.0f;
  std::vector<float> row;
  for (int i = 0; i <= 40; ++i)
    row.push_back(-60.0f - static_cast<float>(i));
  std::vector<float> logits = row;
  logitsGradRow(row.data(), static_cast<int64_t>(row.size()), logsumexp, scale, -1);
  int zeros = 0;
  for (size_t i = 0; i < row.size(); ++i) {
    EXPECT_NE(std::fpclassify(row[i]), FP_SUBNORMAL) << "logit " << logits[i];
    double exact = std::exp(static_cast<double>(logits[i])) * scale;
    if (exact >= 2 * std::numeric_limits<float>::min()) {
      EXPECT_NEAR(row[i] / exact, 1.0, 1e-5) << "logit " << logits[i];
    }
    zeros += row[i] == 0.0f;
  }
  EXPECT_GT(zeros, 10); // the far ones are zeros, not subnormals
  // A negative upstream gradient (scale < 0) flushes by magnitude, keeping the normal ones.
  std::vector<float> negative = logits;
  logitsGradRow(negative.data(), static_cast<int64_t>(negative.size()), logsumexp, -scale, -1);
  for (size_t i = 0; i < negative.size(); ++i) {
    EXPECT_NE(std::fpclassify(negative[i]), FP_SUBNORMAL) << "logit " << logits[i];
    EXPECT_EQ(negative[i], -row[i]) << "logit " << logits[i];
  }
}

} // namespace
} // namespace memc::kernels
