//===- RematIlpTest.cpp - the ILP rematerialization reference -------------===//
#include "compiler/remat/RematIlp.h"
#include "compiler/remat/RematHeuristic.h"
#include "test/remat/SyntheticGraphs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <chrono>
#include <functional>
#include <limits>

namespace memc::remat {
namespace {

using testing::mlpChainGraph;
using testing::transformerLikeGraph;
using testing::TransformerShape;

std::vector<int32_t> recomputableNodes(const RematGraph &graph) {
  std::vector<int32_t> nodes;
  for (int32_t n = 0; n < graph.numNodes(); ++n)
    if (graph.nodes[n].forward && graph.nodes[n].recomputable)
      nodes.push_back(n);
  return nodes;
}

/// Calls `visit` with every decision over the recomputable nodes (at most 2^14 of them).
void forEachDecision(const RematGraph &graph,
                     const std::function<void(const RematDecision &)> &visit) {
  std::vector<int32_t> nodes = recomputableNodes(graph);
  EXPECT_LE(nodes.size(), 14u);
  for (uint32_t mask = 0; mask < (1u << nodes.size()); ++mask) {
    RematDecision decision(graph.numNodes(), 0);
    for (size_t i = 0; i < nodes.size(); ++i)
      decision[nodes[i]] = (mask >> i) & 1;
    visit(decision);
  }
}

/// Every decision's simulated outcome and the model's charge for it.
struct Enumeration {
  struct Entry {
    RematOutcome outcome;
    uint64_t modelPeak;
  };
  std::vector<Entry> entries;
  uint64_t minPeak = std::numeric_limits<uint64_t>::max(), maxPeak = 0;

  explicit Enumeration(const RematGraph &graph) {
    forEachDecision(graph, [&](const RematDecision &decision) {
      Entry entry{simulateRemat(graph, decision), modelPeakBytes(graph, decision)};
      minPeak = std::min(minPeak, entry.outcome.peakBytes);
      entries.push_back(entry);
    });
    maxPeak = simulateRemat(graph, RematDecision(graph.numNodes(), 0)).peakBytes;
  }
  /// The least recompute cost whose simulated (or modelled) peak is within `limit`; infinity if
  /// none is.
  double optimum(uint64_t limit, bool modelled) const {
    double best = std::numeric_limits<double>::infinity();
    for (const Entry &entry : entries)
      if ((modelled ? entry.modelPeak : entry.outcome.peakBytes) <= limit)
        best = std::min(best, entry.outcome.recomputeCost);
    return best;
  }
};

TransformerShape smallShape() {
  TransformerShape shape;
  shape.tokens = 64;
  shape.width = 32;
  shape.hidden = 128;
  return shape;
}

std::vector<std::pair<std::string, RematGraph>> smallGraphs() {
  return {{"mlp3", mlpChainGraph(3, smallShape())},
          {"mlp6", mlpChainGraph(6, smallShape())},
          {"mlp7", mlpChainGraph(7)},
          {"transformer1", transformerLikeGraph(1)},
          {"transformer1small", transformerLikeGraph(1, smallShape())}};
}

TEST(RematIlp, ModelNeverChargesLessThanTheSimulator) {
  for (auto &[name, graph] : smallGraphs()) {
    Enumeration all(graph);
    for (const Enumeration::Entry &entry : all.entries)
      ASSERT_GE(entry.modelPeak, entry.outcome.peakBytes) << name;
  }
}

TEST(RematIlp, MatchesBruteForceOnSmallGraphs) {
  for (auto &[name, graph] : smallGraphs()) {
    Enumeration all(graph);
    for (double fraction : {0.0, 0.1, 0.25, 0.5, 0.75, 0.9}) {
      uint64_t limit =
          all.minPeak + static_cast<uint64_t>(fraction * double(all.maxPeak - all.minPeak));
      SCOPED_TRACE(name + " at " + std::to_string(fraction));
      IlpResult result = solveRematIlp(graph, limit);
      double trueOptimum = all.optimum(limit, /*modelled=*/false);
      double modelOptimum = all.optimum(limit, /*modelled=*/true);
      if (!result.solved) {
        EXPECT_EQ(modelOptimum, std::numeric_limits<double>::infinity()) << result.status;
        continue;
      }
      RematOutcome outcome = simulateRemat(graph, result.decision);
      EXPECT_LE(outcome.peakBytes, limit);
      EXPECT_GE(outcome.recomputeCost, trueOptimum * (1 - 1e-9));
      ASSERT_TRUE(result.provedOptimal) << result.status;
      EXPECT_NEAR(outcome.recomputeCost, modelOptimum, 1e-9 * modelOptimum);
    }
  }
}

TEST(RematIlp, IsExactWhereNoGroupHoldsTwoClones) {
  // With one clone per group, what lives at the clone is what lived across the step before
  // plus the clone's outputs: the model's charge is the simulator's peak.
  RematGraph graph = mlpChainGraph(4, smallShape());
  forEachDecision(graph, [&](const RematDecision &decision) {
    RematSchedule schedule = buildRematSchedule(graph, decision);
    for (size_t s = 1; s < schedule.steps.size(); ++s)
      if (schedule.steps[s].clone && schedule.steps[s - 1].clone)
        return;
    EXPECT_EQ(modelPeakBytes(graph, decision), simulateRemat(graph, decision).peakBytes);
  });
}

TEST(RematIlp, ReportsAnInfeasibleLimit) {
  RematGraph graph = mlpChainGraph(3, smallShape());
  Enumeration all(graph);
  IlpResult result = solveRematIlp(graph, all.minPeak - 1);
  EXPECT_FALSE(result.solved);
  EXPECT_NE(result.status.find("infeasible"), std::string::npos) << result.status;
}

TEST(RematIlp, NeedsNoRecomputationWhenTheLimitHoldsAlready) {
  RematGraph graph = transformerLikeGraph(2, smallShape());
  uint64_t peak = simulateRemat(graph, RematDecision(graph.numNodes(), 0)).peakBytes;
  IlpResult result = solveRematIlp(graph, peak);
  ASSERT_TRUE(result.solved);
  EXPECT_TRUE(result.provedOptimal);
  EXPECT_EQ(simulateRemat(graph, result.decision).recomputeCost, 0);
}

/// What a solve may overrun its time limit by in these tests: enough for a loaded machine,
/// far below the overrun of a limit that is ignored (CBC's own rounds, the root LP).
constexpr double kOverrunSeconds = 10;

/// Asks for 7/8 of the peak without recomputation within `seconds`, and checks the time and
/// that any answer holds.
void expectAnswerWithin(const RematGraph &graph, double seconds) {
  RematDecision keepAll(graph.numNodes(), 0);
  uint64_t peak = simulateRemat(graph, keepAll).peakBytes;
  IlpOptions options;
  options.timeLimitSeconds = seconds;
  auto start = std::chrono::steady_clock::now();
  IlpResult result = solveRematIlp(graph, peak * 7 / 8, options);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(elapsed, seconds + kOverrunSeconds);
  if (result.solved)
    EXPECT_LE(simulateRemat(graph, result.decision).peakBytes, peak * 7 / 8);
  else
    EXPECT_FALSE(result.status.empty());
}

TEST(RematIlp, HonoursTheTimeLimitInsideCbc) {
  // Small enough to be handed to CBC, large enough that it may not finish in a second.
  expectAnswerWithin(transformerLikeGraph(10), 1.0);
}

TEST(RematIlp, HonoursTheTimeLimitOnALargeGraph) {
  RematGraph graph = transformerLikeGraph(300, smallShape());
  ASSERT_GT(graph.numNodes(), 5000);
  uint64_t peak = simulateRemat(graph, RematDecision(graph.numNodes(), 0)).peakBytes;
  IlpOptions options;
  options.timeLimitSeconds = 0.5;
  auto start = std::chrono::steady_clock::now();
  IlpResult result = solveRematIlp(graph, peak / 2, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, options.timeLimitSeconds + kOverrunSeconds);
  if (result.solved)
    EXPECT_LE(simulateRemat(graph, result.decision).peakBytes, peak / 2);
  else
    EXPECT_FALSE(result.status.empty());
}

// A start that meets the limit is the answer when the solver has no time for anything: the
// smallest limit makes the graph too large for it, whatever the machine.
TEST(RematIlp, ReturnsItsStartWhenItRunsOutOfTime) {
  RematGraph graph = transformerLikeGraph(4, smallShape());
  uint64_t peak = simulateRemat(graph, RematDecision(graph.numNodes(), 0)).peakBytes;
  RematDecision everything = greedyRemat(graph, 0); // the heuristic's lowest peak
  uint64_t limit = simulateRemat(graph, everything).peakBytes;
  ASSERT_LT(limit, peak);
  IlpOptions options;
  options.timeLimitSeconds = 1e-9;
  options.start = everything;
  IlpResult result = solveRematIlp(graph, limit, options);
  ASSERT_TRUE(result.solved) << result.status;
  EXPECT_FALSE(result.provedOptimal);
  EXPECT_EQ(result.decision, everything);
  EXPECT_NE(result.status.find("kept the start decision"), std::string::npos) << result.status;
  // Without a start, the same solve has no answer.
  options.start.clear();
  EXPECT_FALSE(solveRematIlp(graph, limit, options).solved);
}

// A long solve says how it goes as it runs. With reports due at every event and a node limit
// (not the clock) bounding the search, each report names the time, the nodes, the best cost
// and the bound, whatever the machine's speed.
TEST(RematIlp, ReportsProgressAsItSearches) {
  RematGraph graph = transformerLikeGraph(4);
  uint64_t peak = simulateRemat(graph, RematDecision(graph.numNodes(), 0)).peakBytes;
  std::vector<std::string> reports;
  IlpOptions options;
  options.timeLimitSeconds = 600;
  options.maxNodes = 20;
  options.progressSeconds = 0;
  options.progress = [&](const std::string &text) { reports.push_back(text); };
  uint64_t lowest = simulateRemat(graph, greedyRemat(graph, 0)).peakBytes;
  uint64_t limit = lowest + (peak - lowest) / 2;
  options.start = greedyRemat(graph, limit);
  IlpResult result = solveRematIlp(graph, limit, options);
  ASSERT_TRUE(result.solved) << result.status;
  ASSERT_FALSE(reports.empty());
  for (const std::string &report : reports) {
    EXPECT_EQ(report.rfind("remat ILP: ", 0), 0u) << report;
    EXPECT_NE(report.find(" nodes, best recompute cost "), std::string::npos) << report;
    EXPECT_NE(report.find(", bound "), std::string::npos) << report;
  }
}

} // namespace
} // namespace memc::remat
