//===- RematHeuristic.cpp - choosing what to recompute, fast --------------===//
#include "compiler/remat/RematHeuristic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace memc::remat {
namespace {

/// Facts about the graph's values the greedy consults on every round.
struct ValueFacts {
  std::vector<char> readByBackward;
  std::vector<int32_t> lastForwardReader; // node id, -1 if none
  explicit ValueFacts(const RematGraph &graph)
      : readByBackward(graph.numValues(), 0), lastForwardReader(graph.numValues(), -1) {
    for (int32_t node = 0; node < graph.numNodes(); ++node)
      for (int32_t value : graph.nodes[node].inputs) {
        if (graph.nodes[node].forward)
          lastForwardReader[value] = std::max(lastForwardReader[value], node);
        else
          readByBackward[value] = 1;
      }
  }
};

/// Lifetimes (first and last step) of every value of a schedule.
struct Lifetimes {
  std::vector<int64_t> first, last;
  explicit Lifetimes(const RematSchedule &schedule) {
    size_t values = schedule.valueBytes.size();
    first.assign(values, 0);
    last.assign(values, -1);
    std::vector<char> written(values, 0);
    for (int64_t s = 0; s < static_cast<int64_t>(schedule.steps.size()); ++s) {
      for (int32_t value : schedule.steps[s].inputs)
        last[value] = s;
      for (int32_t value : schedule.steps[s].outputs) {
        first[value] = s;
        written[value] = 1;
        last[value] = std::max(last[value], s);
      }
    }
    int64_t end = static_cast<int64_t>(schedule.steps.size()) - 1;
    for (size_t value = 0; value < values; ++value)
      if (schedule.keepAlive[value])
        last[value] = end;
  }
};

struct Score {
  uint64_t peak = 0;
  /// Sum over steps of the bytes above the limit: falls with every byte freed at any step over
  /// the limit, so the greedy progresses when several steps share the peak.
  double excess = 0;
  int64_t peakStep = 0;
  bool operator<(const Score &other) const {
    return peak < other.peak || (peak == other.peak && excess < other.excess);
  }
};

Score score(const RematGraph &graph, const RematSchedule &schedule, uint64_t limit) {
  std::vector<uint64_t> live = liveBytesPerStep(schedule);
  Score result;
  uint64_t arenaLimit = limit > graph.fixedBytes ? limit - graph.fixedBytes : 0;
  for (size_t s = 0; s < live.size(); ++s) {
    if (live[s] > arenaLimit)
      result.excess += static_cast<double>(live[s] - arenaLimit);
    if (live[s] > result.peak) {
      result.peak = live[s];
      result.peakStep = static_cast<int64_t>(s);
    }
  }
  result.peak += graph.fixedBytes;
  return result;
}

/// Node `root` and the not-yet-recomputed producers of the unsaved values it reads (keeping
/// those alive until the clone runs would cost more than it frees), recursively.
std::vector<int32_t> recomputeClosure(const RematGraph &graph, const ValueFacts &facts,
                                      const RematDecision &decision, int32_t root) {
  std::vector<int32_t> closure = {root}, work = {root};
  std::vector<char> inClosure(graph.numNodes(), 0);
  inClosure[root] = 1;
  while (!work.empty()) {
    int32_t node = work.back();
    work.pop_back();
    for (int32_t value : graph.nodes[node].inputs) {
      int32_t producer = graph.producer[value];
      if (producer < 0 || inClosure[producer] || decision[producer] ||
          !graph.nodes[producer].recomputable || facts.readByBackward[value])
        continue;
      inClosure[producer] = 1;
      closure.push_back(producer);
      work.push_back(producer);
    }
  }
  return closure;
}

} // namespace

RematDecision greedyRemat(const RematGraph &graph, uint64_t peakLimitBytes) {
  ValueFacts facts(graph);
  RematDecision decision(graph.numNodes(), 0);
  RematSchedule schedule = buildRematSchedule(graph, decision);
  Score current = score(graph, schedule, peakLimitBytes);
  std::vector<char> rejected(graph.numNodes(), 0);
  while (current.peak > peakLimitBytes) {
    // Candidates: recomputable forward ops with outputs live at the peak only because the
    // backward reads them later.
    Lifetimes lifetimes(schedule);
    int64_t step = current.peakStep;
    int32_t peakNode = schedule.steps[step].node;
    std::vector<double> freed(graph.numNodes(), 0.0);
    for (int32_t value = 0; value < graph.numValues(); ++value) {
      int32_t producer = graph.producer[value];
      if (producer < 0 || decision[producer] || rejected[producer] ||
          !graph.nodes[producer].recomputable || !facts.readByBackward[value] ||
          lifetimes.first[value] > step || lifetimes.last[value] < step ||
          (schedule.steps[step].clone == false && graph.nodes[peakNode].forward &&
           facts.lastForwardReader[value] >= peakNode))
        continue;
      freed[producer] += static_cast<double>(graph.valueBytes[value]);
    }
    int32_t best = -1;
    double bestRatio = -1;
    std::vector<int32_t> bestClosure;
    for (int32_t node = 0; node < graph.numNodes(); ++node) {
      if (freed[node] <= 0)
        continue;
      std::vector<int32_t> closure = recomputeClosure(graph, facts, decision, node);
      double cost = 0;
      for (int32_t member : closure)
        cost += graph.nodes[member].cost;
      double ratio = freed[node] / (cost + 1.0);
      if (ratio > bestRatio) {
        bestRatio = ratio;
        best = node;
        bestClosure = std::move(closure);
      }
    }
    if (best < 0)
      break; // nothing left to recompute at the peak
    for (int32_t member : bestClosure)
      decision[member] = 1;
    RematSchedule trial = buildRematSchedule(graph, decision);
    Score next = score(graph, trial, peakLimitBytes);
    if (next < current) {
      current = next;
      schedule = std::move(trial);
      continue;
    }
    for (int32_t member : bestClosure)
      decision[member] = 0;
    rejected[best] = 1;
  }
  if (current.peak > peakLimitBytes)
    return decision;
  // Undo what the limit does not need, the most expensive first.
  std::vector<int32_t> chosen;
  for (int32_t node = 0; node < graph.numNodes(); ++node)
    if (decision[node])
      chosen.push_back(node);
  std::stable_sort(chosen.begin(), chosen.end(), [&](int32_t a, int32_t b) {
    return graph.nodes[a].cost > graph.nodes[b].cost;
  });
  for (int32_t node : chosen) {
    decision[node] = 0;
    if (simulateRemat(graph, decision).peakBytes > peakLimitBytes)
      decision[node] = 1;
  }
  return decision;
}

std::vector<std::vector<int32_t>> layerBoundaries(const RematGraph &graph) {
  ValueFacts facts(graph);
  std::vector<int32_t> forwardNodes;
  for (int32_t node = 0; node < graph.numNodes(); ++node)
    if (graph.nodes[node].forward)
      forwardNodes.push_back(node);
  // Cuts between consecutive forward nodes: the forward values live across them (graph inputs
  // are always kept, so they do not count).
  std::vector<std::vector<int32_t>> cuts;
  std::vector<int32_t> live;
  for (size_t i = 0; i + 1 < forwardNodes.size(); ++i) {
    int32_t node = forwardNodes[i];
    for (int32_t value : graph.nodes[node].outputs)
      live.push_back(value);
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](int32_t value) { return facts.lastForwardReader[value] <= node; }),
               live.end());
    cuts.push_back(live);
  }
  // A boundary is a cut with the fewest large values (small ones, like normalisation
  // statistics, do not separate layers).
  auto largeCount = [&](const std::vector<int32_t> &cut) {
    uint64_t largest = 0;
    for (int32_t value : cut)
      largest = std::max(largest, graph.valueBytes[value]);
    return std::count_if(cut.begin(), cut.end(), [&](int32_t value) {
      return graph.valueBytes[value] * 16 >= largest && largest > 0;
    });
  };
  int64_t fewest = INT64_MAX;
  for (const std::vector<int32_t> &cut : cuts)
    if (int64_t count = largeCount(cut); count > 0)
      fewest = std::min(fewest, count);
  std::vector<std::vector<int32_t>> boundaries;
  for (std::vector<int32_t> &cut : cuts) {
    if (largeCount(cut) != fewest)
      continue;
    std::sort(cut.begin(), cut.end());
    if (boundaries.empty() || boundaries.back() != cut)
      boundaries.push_back(cut);
  }
  return boundaries;
}

RematDecision boundaryRemat(const RematGraph &graph, int keepEvery) {
  std::vector<std::vector<int32_t>> boundaries = layerBoundaries(graph);
  std::vector<char> kept(graph.numValues(), 0);
  keepEvery = std::max(1, keepEvery);
  // Keep the last of every group of keepEvery boundaries, so the final segment is the short one.
  for (size_t i = 0; i < boundaries.size(); ++i)
    if ((boundaries.size() - 1 - i) % keepEvery == 0)
      for (int32_t value : boundaries[i])
        kept[value] = 1;
  RematDecision decision(graph.numNodes(), 0);
  for (int32_t node = 0; node < graph.numNodes(); ++node) {
    const RematGraph::Node &n = graph.nodes[node];
    if (!n.forward || !n.recomputable)
      continue;
    decision[node] = std::none_of(n.outputs.begin(), n.outputs.end(),
                                  [&](int32_t value) { return kept[value] != 0; });
  }
  return decision;
}

RematDecision chenSqrtRemat(const RematGraph &graph) {
  double boundaries = static_cast<double>(layerBoundaries(graph).size());
  return boundaryRemat(graph, std::max(1, static_cast<int>(std::lround(std::sqrt(boundaries)))));
}

} // namespace memc::remat
