//===- TrainingDataTest.cpp - the order a training loop takes samples in --===//
//
// --shuffle: every pass over the data takes each sample once, in an order of its own drawn from
// the seed; the same seed draws the same orders (so a resumed run takes the same samples), and
// micro-batches run on across the passes.
//
//===----------------------------------------------------------------------===//
#include "runtime/train/TrainingData.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace memc::runtime {
namespace {

/// The samples of the first `passes` passes over 10 samples in micro-batches of 4.
std::vector<int64_t> order(bool shuffle, uint64_t seed, int passes) {
  Dataset dataset;
  dataset.samples = 10;
  dataset.batch = 4;
  dataset.shuffle = shuffle;
  dataset.seed = seed;
  std::vector<int64_t> samples;
  for (int64_t index = 0; static_cast<int64_t>(samples.size()) < passes * 10; ++index)
    for (int64_t row = 0; row < dataset.batch; ++row)
      samples.push_back(dataset.sampleAt(index, row));
  samples.resize(passes * 10);
  return samples;
}

TEST(TrainingData, InOrderWithoutShuffle) {
  std::vector<int64_t> samples = order(false, 3, 2), expected(20);
  for (int i = 0; i < 20; ++i)
    expected[i] = i % 10;
  EXPECT_EQ(samples, expected);
}

TEST(TrainingData, ShuffleTakesEverySampleOncePerPassInAnOrderOfItsOwn) {
  std::vector<int64_t> samples = order(true, 3, 3);
  std::vector<int64_t> identity(10);
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<std::vector<int64_t>> passes;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<int64_t> one(samples.begin() + pass * 10, samples.begin() + pass * 10 + 10);
    passes.push_back(one);
    std::sort(one.begin(), one.end());
    EXPECT_EQ(one, identity) << "pass " << pass;
  }
  EXPECT_NE(passes[0], identity);
  EXPECT_NE(passes[0], passes[1]);
  EXPECT_NE(passes[1], passes[2]);
  EXPECT_EQ(order(true, 3, 3), samples);
  EXPECT_NE(order(true, 4, 1), std::vector<int64_t>(samples.begin(), samples.begin() + 10));
}

} // namespace
} // namespace memc::runtime
