//===- RematGraphTest.cpp - the rematerialization simulator ---------------===//
#include "compiler/remat/RematGraph.h"

#include <gtest/gtest.h>

namespace memc::remat {
namespace {

/// x -> a = f(x) -> b = g(a) -> loss; backward reads a and b (like gelu_grad and a matmul's
/// weight gradient), in reverse order.
struct Chain {
  RematGraph graph;
  int32_t x, a, b, loss, da, db;
  int32_t f, g, lossNode, backB, backA;
  Chain() {
    x = graph.addValue(100);
    a = graph.addValue(1000);
    b = graph.addValue(2000);
    loss = graph.addValue(4, /*keepAliveToEnd=*/true);
    db = graph.addValue(50);
    da = graph.addValue(60);
    f = graph.addNode({{x}, {a}, 10, 10, true, true});
    g = graph.addNode({{a}, {b}, 20, 20, true, true});
    lossNode = graph.addNode({{b}, {loss}, 1, 1, true, false});
    backB = graph.addNode({{b}, {db}, 5, 5, false, false});
    backA = graph.addNode({{a, db}, {da}, 5, 5, false, false});
  }
};

TEST(RematGraph, KeepingEverythingHoldsEveryActivationIntoTheBackward) {
  Chain chain;
  RematOutcome outcome = simulateRemat(chain.graph, RematDecision(chain.graph.numNodes(), 0));
  // At the first backward step: a, b, the loss and db (x died at f).
  EXPECT_EQ(outcome.peakBytes, 1000u + 2000 + 4 + 50);
  EXPECT_EQ(outcome.peakStep, 3);
  EXPECT_EQ(outcome.clones, 0);
  EXPECT_EQ(outcome.recomputeCost, 0);
}

TEST(RematGraph, RecomputingAValueFreesItUntilItsBackwardUse) {
  Chain chain;
  RematDecision decision(chain.graph.numNodes(), 0);
  decision[chain.f] = 1;
  RematSchedule schedule = buildRematSchedule(chain.graph, decision);
  // f's clone runs right before backA, reading the kept x.
  ASSERT_EQ(schedule.steps.size(), 6u);
  EXPECT_TRUE(schedule.steps[4].clone);
  EXPECT_EQ(schedule.steps[4].node, chain.f);
  EXPECT_EQ(schedule.inputs(4).vector(), std::vector<int32_t>{chain.x});
  EXPECT_EQ(schedule.inputs(5)[0], schedule.outputs(4)[0]);
  RematOutcome outcome = simulateRemat(chain.graph, decision);
  // a dies at g's step, but x now lives until the clone: g's step holds x, a and b.
  EXPECT_EQ(outcome.peakBytes, 100u + 1000 + 2000);
  EXPECT_EQ(outcome.recomputeCost, 10);
  EXPECT_EQ(outcome.clones, 1);
}

TEST(RematGraph, ClonesOfChainsReadClones) {
  Chain chain;
  RematDecision decision(chain.graph.numNodes(), 1);
  RematSchedule schedule = buildRematSchedule(chain.graph, decision);
  // backB needs b: g's clone needs a, so f's clone runs first; backA reuses f's clone.
  ASSERT_EQ(schedule.steps.size(), 7u);
  EXPECT_EQ(schedule.steps[3].node, chain.f);
  EXPECT_TRUE(schedule.steps[3].clone);
  EXPECT_EQ(schedule.steps[4].node, chain.g);
  EXPECT_EQ(schedule.inputs(4)[0], schedule.outputs(3)[0]);
  EXPECT_EQ(schedule.inputs(6)[0], schedule.outputs(3)[0]);
  // The loss node is not recomputable: the decision's entry for it is ignored.
  EXPECT_EQ(simulateRemat(chain.graph, decision).clones, 2);
}

TEST(RematGraph, LiveBytesCountGraphInputsFromTheStartAndReturnedValuesToTheEnd) {
  Chain chain;
  std::vector<uint64_t> live =
      liveBytesPerStep(buildRematSchedule(chain.graph, RematDecision(chain.graph.numNodes(), 0)));
  ASSERT_EQ(live.size(), 5u);
  EXPECT_EQ(live[0], 100u + 1000);           // x, a
  EXPECT_EQ(live[3], 1000u + 2000 + 4 + 50); // a, b, loss, db
  EXPECT_EQ(live[4], 1000u + 4 + 50 + 60);   // a, loss, db, da
}

} // namespace
} // namespace memc::remat
