//===- ArenaLifetimesTest.cpp - the arena's one lifetime rule -------------===//
//
// The compiler's view of the rule (steps clamped to the schedule), on the plans the loader's
// tests use: the loader reads the same uses with graph inputs before step 0 and outputs after
// the last step.
//
//===----------------------------------------------------------------------===//
#include "runtime/plan/ArenaLifetimes.h"

#include "PlanBuilder.h"

#include <gtest/gtest.h>

using namespace memc;
using namespace memc::runtime;

namespace {

TEST(ArenaLifetimes, GraphInputsFromTheFirstStepAndOutputsToTheLast) {
  plan::Plan plan = memc::testing::referencePlan().plan;
  ArenaLifetimes lifetimes(plan);
  // x (0) is read at step 0; y (6) is written at step 3, the last, and is an output.
  EXPECT_EQ(lifetimes.first[0], 0);
  EXPECT_EQ(lifetimes.last[0], 0);
  EXPECT_EQ(lifetimes.first[6], 3);
  EXPECT_EQ(lifetimes.last[6], 3);
  // t (2) from add at step 0 to relu at step 1; persistent and constant buffers have none.
  EXPECT_TRUE(lifetimes.liveAt(2, 1));
  EXPECT_FALSE(lifetimes.liveAt(2, 2));
  EXPECT_EQ(lifetimes.first[1], -1);
  EXPECT_EQ(lifetimes.first[5], -1);
}

TEST(ArenaLifetimes, AViewExtendsTheBufferOwningItsBytes) {
  plan::Plan plan = memc::testing::viewPlan().plan;
  ArenaLifetimes lifetimes(plan);
  // t_flat (2) views t (1) and is an output: t lives from step 0 to the end; the view itself
  // owns nothing.
  EXPECT_EQ(lifetimes.owner[2], 1u);
  EXPECT_EQ(lifetimes.first[1], 0);
  EXPECT_EQ(lifetimes.last[1], 1);
  EXPECT_FALSE(lifetimes.liveAt(2, 0));
}

TEST(ArenaUses, VisitsBindingsAndStepsInScheduleOrder) {
  plan::Plan plan = memc::testing::viewPlan().plan;
  std::vector<std::pair<ArenaUseKind, int64_t>> seen;
  EXPECT_TRUE(forEachArenaUse(plan, bufferOwners(plan), [&](const ArenaUse &use) {
    seen.emplace_back(use.kind, use.position);
    return true;
  }));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), std::make_pair(ArenaUseKind::InputBinding, kBeforeFirstStep));
  EXPECT_EQ(seen.back().first, ArenaUseKind::OutputBinding);
  EXPECT_EQ(seen.back().second, afterLastStep(plan));
  EXPECT_FALSE(forEachArenaUse(plan, bufferOwners(plan), [](const ArenaUse &) { return false; }));
}

} // namespace
