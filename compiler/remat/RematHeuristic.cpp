//===- RematHeuristic.cpp - choosing what to recompute, fast --------------===//
#include "compiler/remat/RematHeuristic.h"

#include <algorithm>
#include <cmath>
#include <iterator>

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
  // Closures are a handful of nodes: a linear search beats a per-call visited array.
  std::vector<int32_t> closure = {root}, work = {root};
  while (!work.empty()) {
    int32_t node = work.back();
    work.pop_back();
    for (int32_t value : graph.nodes[node].inputs) {
      int32_t producer = graph.producer[value];
      if (producer < 0 || decision[producer] || !graph.nodes[producer].recomputable ||
          facts.readByBackward[value] ||
          std::find(closure.begin(), closure.end(), producer) != closure.end())
        continue;
      closure.push_back(producer);
      work.push_back(producer);
    }
  }
  return closure;
}

/// Simulations one greedy run may spend, counted in graph nodes simulated (one simulation of a
/// 2,000-node step costs 2,000; 6M is about 70 ms here, and greedyRemat makes up to 8 runs). The
/// descent always completes; pruning and the improvement walk stop when the work is spent, so
/// large graphs get fewer rounds and the decision stays a pure function of its input.
struct SearchWork {
  int64_t left = 6'000'000;
  bool spent() const { return left <= 0; }
  void charge(const RematGraph &graph) { left -= graph.numNodes(); }
};

double decisionCost(const RematGraph &graph, const RematDecision &decision) {
  return simulateRemat(graph, decision).recomputeCost;
}

/// How the greedy values freeing a value's bytes.
enum class Benefit {
  /// Its bytes, if it is live at the peak step (XLA-style: work at the peak).
  AtPeak,
  /// Its bytes times how much of the schedule's excess over the limit it spans: values that
  /// stand in several peaks at once come first.
  OverExcess,
};

/// Adds recomputation to `decision` until the peak fits or nothing at the peak is left to
/// recompute; `rejected` nodes are never added. Returns whether the peak fits.
bool addUntilFits(const RematGraph &graph, const ValueFacts &facts, SearchWork &work,
                  RematDecision &decision, std::vector<char> rejected, uint64_t peakLimitBytes,
                  Benefit benefit) {
  work.charge(graph);
  RematSchedule schedule = buildRematSchedule(graph, decision);
  Score current = score(graph, schedule, peakLimitBytes);
  uint64_t arenaLimit = peakLimitBytes > graph.fixedBytes ? peakLimitBytes - graph.fixedBytes : 0;
  while (current.peak > peakLimitBytes) {
    // Candidates: recomputable forward ops with outputs live at the peak only because the
    // backward reads them later.
    ValueLifetimes lifetimes = valueLifetimes(schedule);
    int64_t step = current.peakStep;
    int32_t peakNode = schedule.steps[step].node;
    bool forwardPeak = !schedule.steps[step].clone && graph.nodes[peakNode].forward;
    // Prefix sums of each step's share of the largest excess.
    std::vector<double> excessShare(schedule.steps.size() + 1, 0.0);
    if (benefit == Benefit::OverExcess) {
      std::vector<uint64_t> live = liveBytesPerStep(schedule);
      double largest = static_cast<double>(current.peak - graph.fixedBytes - arenaLimit);
      for (size_t s = 0; s < live.size(); ++s)
        excessShare[s + 1] =
            excessShare[s] +
            (live[s] > arenaLimit ? static_cast<double>(live[s] - arenaLimit) / largest : 0.0);
    }
    std::vector<double> freed(graph.numNodes(), 0.0);
    for (int32_t value = 0; value < graph.numValues(); ++value) {
      int32_t producer = graph.producer[value];
      if (producer < 0 || decision[producer] || rejected[producer] ||
          !graph.nodes[producer].recomputable || !facts.readByBackward[value] ||
          lifetimes.first[value] > step || lifetimes.last[value] < step ||
          (forwardPeak && facts.lastForwardReader[value] >= peakNode))
        continue;
      double weight = 1.0;
      if (benefit == Benefit::OverExcess) {
        // Only the part of its life after its last forward reader goes away.
        int64_t from =
            std::max<int64_t>(lifetimes.first[value], facts.lastForwardReader[value] + 1);
        from = std::min<int64_t>(from, step);
        weight = excessShare[lifetimes.last[value] + 1] - excessShare[from];
      }
      freed[producer] += weight * static_cast<double>(graph.valueBytes[value]);
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
      return false; // nothing left to recompute at the peak
    for (int32_t member : bestClosure)
      decision[member] = 1;
    work.charge(graph);
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
  return true;
}

/// Undoes every recomputation the limit does not need, those that free the fewest bytes per
/// unit of cost first (the knapsack view: keep the best value for money).
void pruneUnneeded(const RematGraph &graph, SearchWork &work, RematDecision &decision,
                   uint64_t peakLimitBytes) {
  std::vector<int32_t> chosen;
  std::vector<double> bytesPerCost(graph.numNodes(), 0.0);
  for (int32_t node = 0; node < graph.numNodes(); ++node) {
    if (!decision[node])
      continue;
    chosen.push_back(node);
    double bytes = 0;
    for (int32_t value : graph.nodes[node].outputs)
      bytes += static_cast<double>(graph.valueBytes[value]);
    bytesPerCost[node] = bytes / (graph.nodes[node].cost + 1.0);
  }
  std::stable_sort(chosen.begin(), chosen.end(),
                   [&](int32_t a, int32_t b) { return bytesPerCost[a] < bytesPerCost[b]; });
  for (int32_t node : chosen) {
    if (work.spent())
      return;
    work.charge(graph);
    decision[node] = 0;
    if (simulateRemat(graph, decision).peakBytes > peakLimitBytes)
      decision[node] = 1;
  }
}

/// One greedy run from `decision`: add recomputation until the peak is at most `descentLimit`
/// (the limit, or lower to then prune back from below), prune to the limit, then, if `walk`,
/// improve.
RematDecision greedyWith(const RematGraph &graph, const ValueFacts &facts, RematDecision decision,
                         uint64_t peakLimitBytes, uint64_t descentLimit, Benefit benefit,
                         bool walk) {
  SearchWork work;
  std::vector<char> none(graph.numNodes(), 0);
  addUntilFits(graph, facts, work, decision, none, descentLimit, benefit);
  if (simulateRemat(graph, decision).peakBytes > peakLimitBytes)
    return decision;
  pruneUnneeded(graph, work, decision, peakLimitBytes);
  if (!walk)
    return decision;
  // Improvement, a ruin-and-recreate walk: the greedy's early choices were made for a peak that
  // later moved. Forbid the most expensive recomputation of the current decision, let the greedy
  // refill from there, prune, and walk on from the result even when it costs more (the next
  // round forbids its most expensive choice in turn, so expensive alternatives get excluded one
  // by one until a cheaper combination appears); keep the cheapest decision seen. A bounded
  // number of rounds keeps the decision well under a second on 24-layer transformers.
  RematDecision current = decision;
  double cost = decisionCost(graph, decision);
  std::vector<char> forbidden(graph.numNodes(), 0), tried(graph.numNodes(), 0);
  for (int round = 0; round < 24 && !work.spent(); ++round) {
    int32_t expensive = -1;
    for (int32_t node = 0; node < graph.numNodes(); ++node)
      if (current[node] && !tried[node] &&
          (expensive < 0 || graph.nodes[node].cost > graph.nodes[expensive].cost))
        expensive = node;
    if (expensive < 0)
      break;
    tried[expensive] = 1;
    forbidden[expensive] = 1;
    RematDecision trial = current;
    trial[expensive] = 0;
    if (!addUntilFits(graph, facts, work, trial, forbidden, peakLimitBytes, benefit)) {
      forbidden[expensive] = 0; // needed: nothing else frees its bytes
      continue;
    }
    pruneUnneeded(graph, work, trial, peakLimitBytes);
    current = trial;
    if (double trialCost = decisionCost(graph, trial); trialCost < cost) {
      cost = trialCost;
      decision = std::move(trial);
    }
  }
  return decision;
}

} // namespace

RematDecision greedyRemat(const RematGraph &graph, uint64_t peakLimitBytes) {
  // Starting points: nothing recomputed, growing by two ways of valuing freed bytes; a descent
  // as low as the greedy goes, pruned back up to the limit; and layer-boundary checkpointing
  // with segments of 1, 2, 4, sqrt(n) and 2 sqrt(n) layers, pruned likewise (segment
  // recomputation reaches peaks the op-by-op greedy cannot, on ResNets in particular). The
  // cheapest decision that fits wins (the lowest peak when none fits).
  ValueFacts facts(graph);
  RematDecision empty(graph.numNodes(), 0);
  std::vector<RematDecision> candidates = {
      greedyWith(graph, facts, empty, peakLimitBytes, peakLimitBytes, Benefit::AtPeak, true),
      greedyWith(graph, facts, empty, peakLimitBytes, peakLimitBytes, Benefit::OverExcess, true),
      greedyWith(graph, facts, empty, peakLimitBytes, 0, Benefit::AtPeak, true)};
  int sqrtBoundaries =
      static_cast<int>(std::lround(std::sqrt(static_cast<double>(layerBoundaries(graph).size()))));
  std::vector<int> segments = {1, 2, 4, sqrtBoundaries, 2 * sqrtBoundaries};
  std::sort(segments.begin(), segments.end());
  segments.erase(std::unique(segments.begin(), segments.end()), segments.end());
  for (int segment : segments)
    if (segment >= 1)
      candidates.push_back(greedyWith(graph, facts, boundaryRemat(graph, segment), peakLimitBytes,
                                      peakLimitBytes, Benefit::AtPeak, false));
  RematDecision best;
  RematOutcome bestOutcome;
  for (RematDecision &decision : candidates) {
    RematOutcome outcome = simulateRemat(graph, decision);
    bool fits = outcome.peakBytes <= peakLimitBytes;
    bool bestFits = !best.empty() && bestOutcome.peakBytes <= peakLimitBytes;
    if (best.empty() ||
        (fits && (!bestFits || outcome.recomputeCost < bestOutcome.recomputeCost)) ||
        (!fits && !bestFits && outcome.peakBytes < bestOutcome.peakBytes)) {
      best = std::move(decision);
      bestOutcome = outcome;
    }
  }
  return best;
}

std::vector<std::vector<int32_t>> layerBoundaries(const RematGraph &graph) {
  ValueFacts facts(graph);
  std::vector<int32_t> forwardNodes;
  for (int32_t node = 0; node < graph.numNodes(); ++node)
    if (graph.nodes[node].forward)
      forwardNodes.push_back(node);
  // Values computed from the step's data (graph inputs in the arena), not from parameters
  // alone: a 16-bit copy of a weight made at the start lives across every layer, and would
  // otherwise count as a large value of every cut (a Llama head's copy made the whole forward
  // look like one layer).
  std::vector<char> fromData(graph.numValues(), 0);
  for (int32_t value = 0; value < graph.numValues(); ++value)
    fromData[value] = graph.producer[value] < 0;
  for (const RematGraph::Node &n : graph.nodes) {
    bool reads = std::any_of(n.inputs.begin(), n.inputs.end(),
                             [&](int32_t value) { return fromData[value] != 0; });
    for (int32_t value : n.outputs)
      fromData[value] = reads;
  }
  // Cuts between consecutive forward nodes: the forward values computed from the data live
  // across them (graph inputs are always kept, so they do not count).
  std::vector<std::vector<int32_t>> cuts;
  std::vector<int32_t> live;
  for (size_t i = 0; i + 1 < forwardNodes.size(); ++i) {
    int32_t node = forwardNodes[i];
    for (int32_t value : graph.nodes[node].outputs)
      if (fromData[value])
        live.push_back(value);
    live.erase(
        std::remove_if(live.begin(), live.end(),
                       [&](int32_t value) { return facts.lastForwardReader[value] <= node; }),
        live.end());
    cuts.push_back(live);
  }
  // A boundary is a cut with the fewest large values. Large is relative to the typical cut's
  // largest value (the median over cuts), not to the cut's own: normalisation statistics do not
  // separate layers, and neither does a cut whose attention scores dwarf the residual stream.
  std::vector<uint64_t> largestPerCut;
  for (const std::vector<int32_t> &cut : cuts) {
    uint64_t largest = 0;
    for (int32_t value : cut)
      largest = std::max(largest, graph.valueBytes[value]);
    largestPerCut.push_back(largest);
  }
  uint64_t typical = 0;
  if (!largestPerCut.empty()) {
    std::vector<uint64_t> sorted = largestPerCut;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    typical = sorted[sorted.size() / 2];
  }
  auto isLarge = [&](int32_t value) {
    return graph.valueBytes[value] * 16 >= typical && graph.valueBytes[value] > 0;
  };
  auto largeCount = [&](const std::vector<int32_t> &cut) {
    return std::count_if(cut.begin(), cut.end(), isLarge);
  };
  int64_t fewest = INT64_MAX;
  for (const std::vector<int32_t> &cut : cuts)
    if (int64_t count = largeCount(cut); count > 0)
      fewest = std::min(fewest, count);
  // Consecutive boundary cuts with the same large values are one boundary (a normalisation's
  // statistics come and go around the residual stream); it keeps the union of their values.
  std::vector<std::vector<int32_t>> boundaries;
  std::vector<int32_t> lastLarge;
  for (std::vector<int32_t> &cut : cuts) {
    if (largeCount(cut) != fewest)
      continue;
    std::vector<int32_t> large;
    std::copy_if(cut.begin(), cut.end(), std::back_inserter(large), isLarge);
    std::sort(large.begin(), large.end());
    if (!boundaries.empty() && large == lastLarge) {
      std::vector<int32_t> &merged = boundaries.back();
      merged.insert(merged.end(), cut.begin(), cut.end());
      std::sort(merged.begin(), merged.end());
      merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
      continue;
    }
    std::sort(cut.begin(), cut.end());
    boundaries.push_back(cut);
    lastLarge = std::move(large);
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
