//===- StepProfileTest.cpp - the --profile table and trace ----------------===//
#include "runtime/exec/StepProfile.h"
#include "runtime/io/Files.h"
#include "runtime/io/Json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace memc::runtime {
namespace {

LoadedPlan twoSteps() {
  LoadedPlan plan;
  plan.steps.resize(2);
  plan.steps[0].kernelName = "matmul";
  plan.steps[0].location = "/fc/MatMul";
  plan.steps[0].flops = 2e9; // 2 GFLOP per run
  plan.steps[0].bytes = 1e9;
  plan.steps[0].phase = plan::FORWARD;
  plan.steps[1].kernelName = "adamw_update";
  plan.steps[1].phase = plan::OPTIMIZER;
  return plan;
}

std::string printed(const StepProfile &profile) {
  char *text = nullptr;
  size_t size = 0;
  std::FILE *out = open_memstream(&text, &size);
  profile.print(out);
  std::fclose(out);
  std::string result(text, size);
  std::free(text);
  return result;
}

/// The trace `profile` writes, parsed: its traceEvents.
std::vector<JsonValue> traceEvents(const StepProfile &profile) {
  char folder[] = "/tmp/memc-profile-XXXXXX";
  EXPECT_NE(mkdtemp(folder), nullptr);
  std::string path = std::string(folder) + "/trace.json", error, text;
  EXPECT_TRUE(profile.writeTrace(path, error)) << error;
  EXPECT_TRUE(readFile(path, text, error)) << error;
  std::remove(path.c_str());
  rmdir(folder);
  JsonValue trace;
  EXPECT_TRUE(parseJson(text, trace, error)) << error;
  const JsonValue *events = trace.find("traceEvents");
  return events ? events->elements() : std::vector<JsonValue>{};
}

TEST(StepProfile, SumsStepsOverRunsWithTheirThroughput) {
  LoadedPlan plan = twoSteps();
  StepProfile profile(plan);
  for (int run = 0; run < 4; ++run) {
    ExecutionStats stats;
    stats.stepSeconds = {0.5, 0.25}; // 2 GFLOP in 0.5 s: 4 GFLOP/s; 1 GB: 2 GB/s
    stats.runSeconds = 1.0;
    stats.runStartSeconds = 10.0 + run;
    profile.addRun(stats);
  }
  std::string text = printed(profile);
  EXPECT_NE(text.find("profile over 4 runs: steps 750.000 ms per run, wall 1000.000 ms per run "
                      "(75.0% in steps)"),
            std::string::npos)
      << text;
  // The slower step first: 4 calls, 2000 ms, 500 ms each, 66.67%, 4 GFLOP/s, 2 GB/s.
  EXPECT_NE(text.find("      0      4   2000.000  500.0000  66.67      4.00     2.00  forward"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("forward       500.000 ms per run  66.67%"), std::string::npos) << text;
  EXPECT_NE(text.find("optimizer     250.000 ms per run  33.33%"), std::string::npos) << text;
}

TEST(StepProfile, TracesTheFirstRunsAsCompleteEvents) {
  LoadedPlan plan = twoSteps();
  StepProfile profile(plan);
  for (size_t run = 0; run < StepProfile::kMaxTracedRuns + 2; ++run) {
    ExecutionStats stats;
    stats.stepSeconds = {0.001, 0.002};
    stats.runSeconds = 0.003;
    stats.runStartSeconds = 100.0 + 0.01 * static_cast<double>(run);
    profile.addRun(stats);
  }
  std::vector<JsonValue> all = traceEvents(profile);
  // The steps' track's name, then its events.
  ASSERT_EQ(all.size(), 1 + 2 * StepProfile::kMaxTracedRuns);
  EXPECT_EQ(all[0].find("ph")->string(), "M");
  EXPECT_EQ(all[0].find("args")->find("name")->string(), "steps");
  std::vector<JsonValue> events(all.begin() + 1, all.end());
  EXPECT_EQ(events[0].find("name")->string(), "matmul /fc/MatMul");
  EXPECT_EQ(events[0].find("ph")->string(), "X");
  EXPECT_EQ(events[0].find("cat")->string(), "forward");
  EXPECT_DOUBLE_EQ(events[0].find("ts")->number(), 0.0);
  EXPECT_DOUBLE_EQ(events[1].find("ts")->number(), 1000.0); // after the first step, in us
  EXPECT_DOUBLE_EQ(events[1].find("dur")->number(), 2000.0);
  EXPECT_DOUBLE_EQ(events[2].find("ts")->number(), 10000.0); // the second run's start
}

TEST(StepProfile, TracesEachWorkerOnItsTrackNamedAfterTheStepItRanIn) {
  LoadedPlan plan = twoSteps();
  StepProfile profile(plan);
  ExecutionStats stats;
  stats.stepSeconds = {0.001, 0.002}; // steps at [100, 100.001) and [100.001, 100.003)
  stats.runSeconds = 0.003;
  stats.runStartSeconds = 100.0;
  stats.workerSpans = {{0, 100.0001, 0.0008}, // the launching thread, in the matmul
                       {1, 100.0002, 0.0007}, // worker 1, in the matmul
                       {1, 100.0015, 0.001},  // worker 1, in the update
                       {1, 99.0, 0.0001}};    // before the run: in no step, left out
  profile.addRun(stats);
  std::vector<JsonValue> events = traceEvents(profile);
  // Three track names (steps, worker 0, worker 1), two steps, three worker spans.
  ASSERT_EQ(events.size(), 3u + 2 + 3);
  EXPECT_EQ(events[1].find("tid")->number(), 2);
  EXPECT_EQ(events[1].find("args")->find("name")->string(), "worker 0 (the launching thread)");
  EXPECT_EQ(events[2].find("args")->find("name")->string(), "worker 1");
  const JsonValue &first = events[5], &second = events[6], &third = events[7];
  EXPECT_EQ(first.find("tid")->number(), 2);
  EXPECT_EQ(first.find("name")->string(), "matmul /fc/MatMul");
  EXPECT_NEAR(first.find("ts")->number(), 100.0, 1e-3); // us after the first step's start
  EXPECT_NEAR(first.find("dur")->number(), 800.0, 1e-3);
  EXPECT_EQ(second.find("tid")->number(), 3);
  EXPECT_EQ(second.find("name")->string(), "matmul /fc/MatMul");
  EXPECT_EQ(third.find("tid")->number(), 3);
  EXPECT_EQ(third.find("name")->string(), "adamw_update");
  EXPECT_EQ(third.find("args")->find("step")->number(), 1);
}

} // namespace
} // namespace memc::runtime
