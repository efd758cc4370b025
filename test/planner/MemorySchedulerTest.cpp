//===- MemorySchedulerTest.cpp - memory-aware topological orders ----------===//
#include "compiler/planner/MemoryScheduler.h"

#include "compiler/planner/ArenaPlanner.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

using namespace memc::planner;

namespace {

std::vector<int32_t> identity(size_t n) {
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

/// x -> a (big) -> a2 (small) and x -> b (big) -> b2 (small), then join(a2, b2), in the order an
/// exporter that walks breadth-first writes: both big values are alive together.
ScheduleGraph twoBranches() {
  ScheduleGraph graph;
  int32_t x = graph.addValue(100);
  int32_t a = graph.addValue(1000), b = graph.addValue(1000);
  int32_t a2 = graph.addValue(10), b2 = graph.addValue(10);
  int32_t out = graph.addValue(5, /*keepAliveToEnd=*/true);
  graph.addNode({x}, {a});
  graph.addNode({x}, {b});
  graph.addNode({a}, {a2});
  graph.addNode({b}, {b2});
  graph.addNode({a2, b2}, {out});
  return graph;
}

TEST(PeakLiveBytes, CountsProducedValuesFromProducerToLastConsumer) {
  ScheduleGraph graph = twoBranches();
  // x is a graph input: never counted. Steps: 0 {a}, 1 {a, b}, 2 {a, b, a2}, 3 {b, a2, b2},
  // 4 {a2, b2, out}.
  EXPECT_EQ(peakLiveBytes(graph, identity(5)), 2010u);
  EXPECT_EQ(peakLiveBytes(graph, {0, 2, 1, 3, 4}), 1020u);
}

TEST(PeakLiveBytes, KeepsGraphOutputsAndCountsUnreadValuesAtTheirStep) {
  ScheduleGraph graph;
  int32_t in = graph.addValue(1);
  int32_t kept = graph.addValue(50, /*keepAliveToEnd=*/true);
  int32_t scratch = graph.addValue(70); // produced, never read
  int32_t y = graph.addValue(20);
  graph.addNode({in}, {kept, scratch});
  graph.addNode({in}, {y});
  graph.addNode({y}, {});
  EXPECT_EQ(peakLiveBytes(graph, identity(3)), 120u);
  LiveValues live = liveRanges(graph, identity(3));
  ASSERT_EQ(live.buffers.size(), 3u);
  EXPECT_EQ(live.valueOfBuffer, (std::vector<int32_t>{kept, scratch, y}));
  EXPECT_EQ(live.buffers[0].lastStep, 2); // kept alive to the last step
  EXPECT_EQ(live.buffers[1].lastStep, 0);
  EXPECT_EQ(live.buffers[2].firstStep, 1);
  EXPECT_EQ(live.buffers[2].lastStep, 2);
}

TEST(ScheduleForMemory, FixesABreadthFirstExportOrder) {
  ScheduleGraph graph = twoBranches();
  Schedule schedule = scheduleForMemory(graph);
  EXPECT_TRUE(isTopologicalOrder(graph, schedule.order));
  EXPECT_EQ(schedule.baselinePeakBytes, 2010u);
  EXPECT_EQ(schedule.peakBytes, 1020u);
  EXPECT_EQ(schedule.peakBytes, peakLiveBytes(graph, schedule.order));
  EXPECT_NE(schedule.strategy, "given-order");
}

TEST(ScheduleForMemory, KeepsAGoodGivenOrder) {
  ScheduleGraph graph = twoBranches();
  std::swap(graph.nodes[1], graph.nodes[2]); // a -> a2 first: already optimal
  Schedule schedule = scheduleForMemory(graph);
  EXPECT_EQ(schedule.order, identity(5));
  EXPECT_EQ(schedule.strategy, "given-order");
  EXPECT_EQ(schedule.peakBytes, 1020u);
}

TEST(ScheduleForMemory, RunsOptimizerUpdatesAsSoonAsGradientsExist) {
  // Backward pass of a chain: grad_i = f(grad_{i+1}) and a weight gradient w_i = g(grad_i),
  // each consumed by an optimizer update that the exporter put at the very end.
  ScheduleGraph graph;
  const int layers = 20;
  int32_t grad = graph.addValue(100);
  graph.addNode({}, {grad});
  std::vector<int32_t> weightGradients;
  for (int i = 0; i < layers; ++i) {
    int32_t next = graph.addValue(100), weightGradient = graph.addValue(400);
    graph.addNode({grad}, {next});
    graph.addNode({grad}, {weightGradient});
    weightGradients.push_back(weightGradient);
    grad = next;
  }
  for (int32_t weightGradient : weightGradients)
    graph.addNode({weightGradient}, {});
  std::string error;
  ASSERT_TRUE(validateScheduleGraph(graph, error)) << error;
  Schedule schedule = scheduleForMemory(graph);
  EXPECT_TRUE(isTopologicalOrder(graph, schedule.order));
  EXPECT_GE(schedule.baselinePeakBytes, layers * 400u);
  EXPECT_LE(schedule.peakBytes, 1000u);
}

TEST(ScheduleForMemory, ReordersANonTopologicalGivenOrder) {
  ScheduleGraph graph;
  int32_t a = graph.addValue(10), b = graph.addValue(10);
  graph.addNode({a}, {b}); // reads a before it is produced below
  graph.addNode({}, {a});
  std::string error;
  ASSERT_TRUE(validateScheduleGraph(graph, error)) << error;
  EXPECT_FALSE(isTopologicalOrder(graph, {0, 1}));
  Schedule schedule = scheduleForMemory(graph);
  EXPECT_EQ(schedule.order, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(schedule.baselinePeakBytes, 20u);
}

TEST(ValidateScheduleGraph, RejectsBrokenGraphs) {
  std::string error;
  ScheduleGraph cycle;
  int32_t a = cycle.addValue(1), b = cycle.addValue(1);
  cycle.addNode({a}, {b});
  cycle.addNode({b}, {a});
  EXPECT_FALSE(validateScheduleGraph(cycle, error));
  EXPECT_NE(error.find("cycle"), std::string::npos) << error;

  ScheduleGraph twoProducers;
  int32_t v = twoProducers.addValue(1);
  twoProducers.addNode({}, {v});
  twoProducers.addNode({}, {v});
  EXPECT_FALSE(validateScheduleGraph(twoProducers, error));
  EXPECT_NE(error.find("produced by nodes 0 and 1"), std::string::npos) << error;

  ScheduleGraph badId;
  badId.addValue(1);
  badId.addNode({3}, {});
  EXPECT_FALSE(validateScheduleGraph(badId, error));
}

TEST(IsTopologicalOrder, RejectsRepeatsAndMissingNodes) {
  ScheduleGraph graph = twoBranches();
  EXPECT_TRUE(isTopologicalOrder(graph, identity(5)));
  EXPECT_FALSE(isTopologicalOrder(graph, {0, 1, 2, 3}));
  EXPECT_FALSE(isTopologicalOrder(graph, {0, 0, 2, 3, 4}));
  EXPECT_FALSE(isTopologicalOrder(graph, {2, 0, 1, 3, 4}));
}

/// A random layered DAG: each node reads up to three values of recent nodes.
ScheduleGraph randomGraph(int nodes, uint32_t seed) {
  std::mt19937 rng(seed);
  ScheduleGraph graph;
  std::vector<int32_t> produced;
  for (int node = 0; node < nodes; ++node) {
    std::vector<int32_t> inputs;
    for (int k = rng() % 4; k > 0 && !produced.empty(); --k) {
      size_t window = std::min<size_t>(produced.size(), 50);
      inputs.push_back(produced[produced.size() - 1 - rng() % window]);
    }
    std::vector<int32_t> outputs;
    for (int k = 1 + rng() % 2; k > 0; --k) {
      outputs.push_back(graph.addValue(1 + rng() % 10000, rng() % 50 == 0));
      produced.push_back(outputs.back());
    }
    graph.addNode(inputs, outputs);
  }
  return graph;
}

TEST(ScheduleForMemory, NeverWorseThanTheGivenOrderOnRandomGraphs) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    ScheduleGraph graph = randomGraph(300, seed);
    std::string error;
    ASSERT_TRUE(validateScheduleGraph(graph, error)) << error;
    Schedule schedule = scheduleForMemory(graph);
    ASSERT_TRUE(isTopologicalOrder(graph, schedule.order)) << "seed " << seed;
    EXPECT_EQ(schedule.peakBytes, peakLiveBytes(graph, schedule.order));
    EXPECT_EQ(schedule.baselinePeakBytes, peakLiveBytes(graph, identity(300)));
    EXPECT_LE(schedule.peakBytes, schedule.baselinePeakBytes);
    // The live ranges of the schedule are what the arena planner places.
    LiveValues live = liveRanges(graph, schedule.order);
    EXPECT_EQ(lowerBound(live.buffers, 1), schedule.peakBytes);
  }
}

// Scheduling time is measured by bench/planner, not asserted here.
TEST(ScheduleForMemory, SchedulesAHundredThousandNodes) {
  ScheduleGraph graph = randomGraph(100'000, 5);
  Schedule schedule = scheduleForMemory(graph);
  EXPECT_TRUE(isTopologicalOrder(graph, schedule.order));
  EXPECT_LE(schedule.peakBytes, schedule.baselinePeakBytes);
}

} // namespace
