//===- LearningRateTest.cpp - the training loop's learning-rate schedule --===//
#include "runtime/plan/Plan.pb.h"
#include "runtime/train/TrainingLoop.h"

#include <gtest/gtest.h>

#include <cmath>

namespace memc::runtime {
namespace {

plan::Training schedule(double lr, int64_t warmup, int64_t decay) {
  plan::Training training;
  training.set_learning_rate(lr);
  training.set_warmup_steps(warmup);
  training.set_decay_steps(decay);
  return training;
}

TEST(LearningRate, ConstantWithoutWarmupOrDecay) {
  plan::Training training = schedule(3e-4, 0, 0);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 1), 3e-4);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 1000), 3e-4);
}

TEST(LearningRate, LinearWarmupReachesTheRateAtItsLastStep) {
  plan::Training training = schedule(1e-3, 4, 0);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 1), 0.25e-3);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 2), 0.5e-3);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 4), 1e-3);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 5), 1e-3);
}

TEST(LearningRate, CosineDecayAfterWarmupEndsAtZero) {
  plan::Training training = schedule(1e-3, 10, 100);
  EXPECT_DOUBLE_EQ(learningRateAt(training, 10), 1e-3);
  // Halfway through the decay the cosine is at half the rate.
  EXPECT_NEAR(learningRateAt(training, 60), 0.5e-3, 1e-15);
  EXPECT_NEAR(learningRateAt(training, 35), 1e-3 * 0.5 * (1 + std::cos(M_PI * 0.25)), 1e-15);
  EXPECT_NEAR(learningRateAt(training, 110), 0.0, 1e-18);
  EXPECT_NEAR(learningRateAt(training, 500), 0.0, 1e-18);
}

} // namespace
} // namespace memc::runtime
