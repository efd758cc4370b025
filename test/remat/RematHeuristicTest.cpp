//===- RematHeuristicTest.cpp - the greedy against the ILP and the bounds -===//
#include "compiler/remat/RematHeuristic.h"
#include "SyntheticGraphs.h"
#include "compiler/remat/RematIlp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace memc::remat {
namespace {

using testing::transformerLikeGraph;

RematDecision keepAll(const RematGraph &graph) { return RematDecision(graph.numNodes(), 0); }

/// Limits from the peak without recomputation down to the lowest peak the greedy reaches.
std::vector<uint64_t> limitsBetween(const RematGraph &graph, int count) {
  uint64_t high = simulateRemat(graph, keepAll(graph)).peakBytes;
  uint64_t low = simulateRemat(graph, greedyRemat(graph, 0)).peakBytes;
  std::vector<uint64_t> limits;
  for (int i = 0; i < count; ++i)
    limits.push_back(low + (high - low) * i / (count - 1));
  return limits;
}

TEST(RematHeuristic, RecomputesNothingWhenNothingIsNeeded) {
  RematGraph graph = transformerLikeGraph(2);
  uint64_t peak = simulateRemat(graph, keepAll(graph)).peakBytes;
  RematOutcome outcome = simulateRemat(graph, greedyRemat(graph, peak));
  EXPECT_EQ(outcome.clones, 0);
  EXPECT_EQ(outcome.peakBytes, peak);
}

TEST(RematHeuristic, FitsEveryLimitItClaimsAndLowersThePeak) {
  RematGraph graph = transformerLikeGraph(6);
  uint64_t peak = simulateRemat(graph, keepAll(graph)).peakBytes;
  uint64_t lowest = simulateRemat(graph, greedyRemat(graph, 0)).peakBytes;
  // Recomputation must buy a real reduction on a transformer, at least what keeping only the
  // layer boundaries buys.
  EXPECT_LT(lowest, peak - peak / 8);
  EXPECT_LE(lowest, simulateRemat(graph, boundaryRemat(graph, 1)).peakBytes);
  for (uint64_t limit : limitsBetween(graph, 6))
    EXPECT_LE(simulateRemat(graph, greedyRemat(graph, limit)).peakBytes, limit) << limit;
}

// The target: the heuristic's recompute cost within 5% of the ILP's wherever the ILP
// proves optimality.
TEST(RematHeuristic, WithinFivePercentOfTheIlpOptimum) {
  int compared = 0;
  double worst = 0;
  for (int layers : {1, 2, 3}) {
    RematGraph graph = transformerLikeGraph(layers);
    for (uint64_t limit : limitsBetween(graph, 5)) {
      IlpResult ilp = solveRematIlp(graph, limit, {20});
      if (!ilp.solved || !ilp.provedOptimal)
        continue;
      ++compared;
      double optimum = simulateRemat(graph, ilp.decision).recomputeCost;
      RematOutcome greedy = simulateRemat(graph, greedyRemat(graph, limit));
      EXPECT_LE(greedy.peakBytes, limit);
      if (optimum > 0)
        worst = std::max(worst, greedy.recomputeCost / optimum);
      EXPECT_LE(greedy.recomputeCost, optimum * 1.05 + 1e-9)
          << layers << " layers, limit " << limit << ": greedy " << greedy.recomputeCost << ", ilp "
          << optimum;
    }
  }
  EXPECT_GE(compared, 10) << "the ILP proved too few optima to compare against";
  std::printf("greedy/ilp recompute cost over %d proved optima: worst %.4f\n", compared, worst);
}

// Started from the heuristic's decision, the ILP returns nothing worse than it. A node limit,
// not the clock, bounds CBC (the time limit only catches a hang), so the outcome is the same
// however loaded the machine is; where CBC finds nothing, the start is the answer.
TEST(RematHeuristic, SeedsTheIlpWithItsDecision) {
  RematGraph graph = transformerLikeGraph(4);
  for (uint64_t limit : limitsBetween(graph, 4)) {
    RematDecision greedy = greedyRemat(graph, limit);
    IlpOptions options;
    options.timeLimitSeconds = 600;
    options.maxNodes = 20;
    options.start = greedy;
    IlpResult ilp = solveRematIlp(graph, limit, options);
    ASSERT_TRUE(ilp.solved) << ilp.status;
    EXPECT_LE(simulateRemat(graph, ilp.decision).peakBytes, limit);
    EXPECT_LE(simulateRemat(graph, ilp.decision).recomputeCost,
              simulateRemat(graph, greedy).recomputeCost + 1e-9);
  }
}

TEST(RematHeuristic, LayerBoundariesAreTheResidualStream) {
  const int layers = 4;
  RematGraph graph = transformerLikeGraph(layers);
  // Each block's input (the residual stream) and its attention residual separate layers.
  std::vector<std::vector<int32_t>> boundaries = layerBoundaries(graph);
  EXPECT_GE(boundaries.size(), static_cast<size_t>(layers));
  for (const std::vector<int32_t> &cut : boundaries)
    EXPECT_EQ(cut.size(), 1u);
  // Keeping only them recomputes most of the forward and holds less than keeping everything.
  RematOutcome full = simulateRemat(graph, boundaryRemat(graph, 1));
  RematOutcome none = simulateRemat(graph, keepAll(graph));
  EXPECT_LT(full.peakBytes, none.peakBytes);
  EXPECT_GT(full.clones, 6 * layers);
  // Chen's sqrt(n) keeps fewer boundaries: less memory for the boundaries, the same recompute.
  RematOutcome chen = simulateRemat(graph, chenSqrtRemat(graph));
  EXPECT_GT(chen.clones, 0);
}

} // namespace
} // namespace memc::remat
