//===- ArenaPlannerPropertyTest.cpp - planners on seeded random inputs ----===//
//
// For every generator and seed: every planner's assignment verifies, no arena is below the lower
// bound, memc's is no larger than either baseline's, and on training-like inputs it is within 2%
// of the lower bound. Plus the same with random in-place hints, and the 100k-buffer sizes the
// compiler must plan quickly.
//
//===----------------------------------------------------------------------===//
#include "RandomBuffers.h"

#include "compiler/planner/ArenaPlanner.h"
#include "compiler/planner/Baselines.h"

#include <gtest/gtest.h>

#include <functional>

using namespace memc::planner;
using namespace memc::planner::testing;

namespace {

struct Generator {
  const char *name;
  std::function<std::vector<BufferRequest>(uint32_t seed)> make;
  /// The arena memc must reach, as a multiple of the lower bound (0: no requirement).
  double maxOverhead;
};

const Generator kGenerators[] = {
    {"sparse", [](uint32_t seed) { return uniformBuffers(400, seed, 10, 400); }, 0},
    {"dense", [](uint32_t seed) { return uniformBuffers(600, seed, 80, 300); }, 0},
    {"training", [](uint32_t seed) { return trainingLikeBuffers(60, seed); }, 1.02},
};

class RandomBuffersTest : public ::testing::TestWithParam<std::tuple<int, uint32_t>> {
protected:
  const Generator &generator() const { return kGenerators[std::get<0>(GetParam())]; }
  std::vector<BufferRequest> buffers() const { return generator().make(std::get<1>(GetParam())); }
};

void expectValid(const std::vector<BufferRequest> &buffers, const Assignment &plan,
                 const std::vector<InPlaceHint> &hints = {}) {
  std::string error;
  EXPECT_TRUE(verifyAssignment(buffers, plan, error, kDefaultAlignment, hints))
      << plan.strategy << ": " << error;
}

TEST_P(RandomBuffersTest, MemcIsValidAndNoWorseThanTheBaselines) {
  std::vector<BufferRequest> requests = buffers();
  Assignment greedy = planGreedyBySize(requests);
  Assignment heap = planHeapSimulatorBestFit(requests);
  Assignment memc = planArena(requests);
  uint64_t bound = lowerBound(requests);
  for (const Assignment *plan : {&greedy, &heap, &memc}) {
    expectValid(requests, *plan);
    EXPECT_GE(plan->arenaBytes, bound) << plan->strategy;
    EXPECT_EQ(plan->lowerBoundBytes, bound);
    EXPECT_TRUE(plan->inPlaceSource.empty());
  }
  EXPECT_LE(memc.arenaBytes, greedy.arenaBytes) << memc.strategy;
  EXPECT_LE(memc.arenaBytes, heap.arenaBytes) << memc.strategy;
  if (generator().maxOverhead > 0) {
    EXPECT_LE(memc.arenaBytes, bound * generator().maxOverhead) << memc.strategy;
  }
}

TEST_P(RandomBuffersTest, InPlaceHintsKeepPlansValid) {
  std::vector<BufferRequest> requests = buffers();
  // Offer every pair whose ranges meet, as a caller with only elementwise ops would.
  PlanOptions options;
  for (size_t a = 0; a < requests.size() && options.inPlaceHints.size() < 200; ++a)
    for (size_t b = 0; b < requests.size(); ++b)
      if (a != b && requests[a].lastStep == requests[b].firstStep && (a + b) % 3 == 0)
        options.inPlaceHints.push_back({int32_t(a), int32_t(b)});
  Assignment plan = planArena(requests, options);
  expectValid(requests, plan, options.inPlaceHints);
  // Taking hints is the planner's choice: it must still not lose to the hint-free baselines.
  EXPECT_LE(plan.arenaBytes, planGreedyBySize(requests).arenaBytes);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomBuffersTest,
                         ::testing::Combine(::testing::Range(0, 3),
                                            ::testing::Range(1u, 9u)),
                         [](const auto &info) {
                           return std::string(kGenerators[std::get<0>(info.param)].name) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Planning time is measured by bench/planner (memc-planner-bench), not asserted here: the
// planner's budget counts work units, so its result does not depend on the machine's speed.
TEST(ArenaPlannerScale, PlansAHundredThousandShortLivedBuffers) {
  std::vector<BufferRequest> buffers = uniformBuffers(100'000, 11, 30, 100'000);
  Assignment plan = planArena(buffers);
  expectValid(buffers, plan);
  EXPECT_LE(plan.arenaBytes, plan.lowerBoundBytes * 1.05) << plan.strategy;
}

TEST(ArenaPlannerScale, PlansATrainingStepWithAHundredThousandBuffers) {
  // Most activations are live together at the forward/backward boundary, which puts every
  // gap-placing pass out of budget: the schedule-order allocators must still do well.
  std::vector<BufferRequest> buffers = trainingLikeBuffers(11'000, 12);
  ASSERT_GT(buffers.size(), 95'000u);
  Assignment plan = planArena(buffers);
  expectValid(buffers, plan);
  EXPECT_LE(plan.arenaBytes, plan.lowerBoundBytes * 1.02) << plan.strategy;
}

} // namespace
