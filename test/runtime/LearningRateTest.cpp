//===- LearningRateTest.cpp - the training loop's learning-rate schedules --===//
//
// memc's schedules against Hugging Face's, computed by transformers' formulas in
// data/make_schedules.py (schedules.json): every step's rate equal to the double Python computes.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Json.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/train/LearningRateSchedule.h"
#include "runtime/train/TrainingLoop.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace memc::runtime {
namespace {

TEST(LearningRate, EveryStepMatchesTransformersSchedules) {
  std::ifstream in(MEMC_RUNTIME_TEST_DATA "/schedules.json");
  std::stringstream text;
  text << in.rdbuf();
  JsonValue cases;
  std::string error;
  ASSERT_TRUE(parseJson(text.str(), cases, error)) << error;
  ASSERT_TRUE(cases.isArray());
  ASSERT_GE(cases.elements().size(), 7u);
  for (const JsonValue &entry : cases.elements()) {
    LearningRateSchedule schedule;
    std::optional<LearningRateSchedule::Kind> kind =
        parseScheduleKind(entry.find("kind")->string());
    ASSERT_TRUE(kind);
    schedule.kind = *kind;
    schedule.peak = entry.find("lr")->number();
    schedule.warmup = entry.find("warmup")->integer();
    schedule.total = entry.find("total")->integer();
    const std::vector<JsonValue> &rates = entry.find("rates")->elements();
    for (size_t i = 0; i < rates.size(); ++i)
      EXPECT_EQ(schedule.at(static_cast<int64_t>(i) + 1),
                std::strtod(rates[i].string().c_str(), nullptr))
          << schedule.shape() << ", lr " << schedule.peak << ", step " << i + 1;
  }
}

// memc's --warmup N --decay-steps M is transformers' cosine schedule over N + M steps.
TEST(LearningRate, CompiledWarmupAndDecayAreTheCosineSchedule) {
  plan::Training training;
  training.set_learning_rate(1e-3);
  training.set_warmup_steps(10);
  training.set_decay_steps(100);
  LearningRateSchedule schedule = LearningRateSchedule::ofPlan(training);
  EXPECT_EQ(schedule.kind, LearningRateSchedule::Kind::Cosine);
  EXPECT_EQ(schedule.total, 110);
  EXPECT_EQ(schedule.shape(), "cosine to step 110, warmup 10");
  EXPECT_EQ(schedule.at(1), 0.0);
  training.set_decay_steps(0);
  EXPECT_EQ(LearningRateSchedule::ofPlan(training).shape(), "constant, warmup 10");
}

// The program's flags over the compiled schedule: --schedule decays to zero at --steps.
TEST(LearningRate, ProgramFlagsOverrideTheCompiledSchedule) {
  plan::Training training;
  training.set_learning_rate(1e-3);
  TrainingOptions options;
  options.steps = 40;
  EXPECT_EQ(runSchedule(training, options).shape(), "constant, warmup 0");
  options.learningRate = 5e-4;
  options.warmupSteps = 4;
  options.schedule = LearningRateSchedule::Kind::Linear;
  LearningRateSchedule schedule = runSchedule(training, options);
  EXPECT_EQ(schedule.shape(), "linear to step 40, warmup 4");
  EXPECT_EQ(schedule.peak, 5e-4);
  EXPECT_EQ(schedule.at(41), 0.0);
}

} // namespace
} // namespace memc::runtime
