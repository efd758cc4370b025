//===- RematGraph.cpp - a training step as rematerialization sees it ------===//
#include "compiler/remat/RematGraph.h"

#include <algorithm>

namespace memc::remat {

int32_t RematGraph::addValue(uint64_t bytes, bool keepAliveToEnd) {
  valueBytes.push_back(bytes);
  producer.push_back(-1);
  keepAlive.push_back(keepAliveToEnd);
  return numValues() - 1;
}

int32_t RematGraph::addNode(Node node) {
  int32_t id = numNodes();
  for (int32_t value : node.outputs)
    producer[value] = id;
  nodes.push_back(std::move(node));
  return id;
}

RematSchedule buildRematSchedule(const RematGraph &graph, const RematDecision &decision) {
  RematSchedule schedule;
  schedule.valueBytes = graph.valueBytes;
  schedule.keepAlive = graph.keepAlive;
  schedule.steps.reserve(graph.nodes.size() * 2);
  auto recomputed = [&](int32_t node) {
    return node >= 0 && graph.nodes[node].recomputable && node < (int32_t)decision.size() &&
           decision[node];
  };
  // cloneOf[v]: the clone's value standing for graph value v, or -1.
  std::vector<int32_t> cloneOf(graph.numValues(), -1);
  std::vector<char> cloned(graph.numNodes(), 0);
  auto readValue = [&](int32_t value) { return cloneOf[value] >= 0 ? cloneOf[value] : value; };
  auto beginStep = [&](int32_t node, bool clone) {
    RematStep step;
    step.node = node;
    step.clone = clone;
    step.workspaceBytes = graph.nodes[node].workspaceBytes;
    step.inputsBegin = static_cast<uint32_t>(schedule.ids.size());
    schedule.steps.push_back(step);
  };
  auto endInputs = [&]() {
    schedule.steps.back().outputsBegin = static_cast<uint32_t>(schedule.ids.size());
  };
  auto endStep = [&]() {
    schedule.steps.back().outputsEnd = static_cast<uint32_t>(schedule.ids.size());
  };
  // Inserts the clone of `node` (and first those of its recomputed producers), iteratively so
  // that deep chains cannot overflow the stack.
  std::vector<std::pair<int32_t, bool>> work;
  auto materialize = [&](int32_t root) {
    work.assign(1, {root, false});
    while (!work.empty()) {
      auto [node, inputsReady] = work.back();
      work.pop_back();
      if (cloned[node])
        continue;
      if (!inputsReady) {
        work.push_back({node, true});
        for (int32_t value : graph.nodes[node].inputs) {
          int32_t producer = graph.producer[value];
          if (recomputed(producer) && !cloned[producer])
            work.push_back({producer, false});
        }
        continue;
      }
      cloned[node] = 1;
      beginStep(node, /*clone=*/true);
      for (int32_t value : graph.nodes[node].inputs)
        schedule.ids.push_back(readValue(value));
      endInputs();
      for (int32_t value : graph.nodes[node].outputs) {
        cloneOf[value] = static_cast<int32_t>(schedule.valueBytes.size());
        schedule.valueBytes.push_back(graph.valueBytes[value]);
        schedule.keepAlive.push_back(0);
        schedule.ids.push_back(cloneOf[value]);
      }
      endStep();
    }
  };
  for (int32_t node = 0; node < graph.numNodes(); ++node) {
    const RematGraph::Node &original = graph.nodes[node];
    if (!original.forward)
      for (int32_t value : original.inputs)
        if (recomputed(graph.producer[value]))
          materialize(graph.producer[value]);
    beginStep(node, /*clone=*/false);
    for (int32_t value : original.inputs)
      schedule.ids.push_back(original.forward ? value : readValue(value));
    endInputs();
    schedule.ids.insert(schedule.ids.end(), original.outputs.begin(), original.outputs.end());
    endStep();
  }
  return schedule;
}

ValueLifetimes valueLifetimes(const RematSchedule &schedule) {
  int64_t steps = static_cast<int64_t>(schedule.steps.size());
  size_t values = schedule.valueBytes.size();
  std::vector<int64_t> written(values, -1), read(values, -1);
  for (int64_t s = 0; s < steps; ++s) {
    for (int32_t value : schedule.inputs(s))
      read[value] = s;
    for (int32_t value : schedule.outputs(s))
      written[value] = s;
  }
  ValueLifetimes lifetimes;
  lifetimes.first.assign(values, 0);
  lifetimes.last.assign(values, -1);
  for (size_t value = 0; value < values; ++value) {
    bool touched = written[value] >= 0 || read[value] >= 0 || schedule.keepAlive[value];
    if (!touched || steps == 0)
      continue;
    lifetimes.first[value] = std::max<int64_t>(written[value], 0);
    lifetimes.last[value] =
        schedule.keepAlive[value] ? steps - 1 : std::max(read[value], lifetimes.first[value]);
  }
  return lifetimes;
}

std::vector<uint64_t> liveBytesPerStep(const RematSchedule &schedule) {
  int64_t steps = static_cast<int64_t>(schedule.steps.size());
  ValueLifetimes lifetimes = valueLifetimes(schedule);
  std::vector<int64_t> delta(steps + 1, 0);
  for (size_t value = 0; value < schedule.valueBytes.size(); ++value) {
    if (lifetimes.last[value] < lifetimes.first[value])
      continue;
    delta[lifetimes.first[value]] += static_cast<int64_t>(schedule.valueBytes[value]);
    delta[lifetimes.last[value] + 1] -= static_cast<int64_t>(schedule.valueBytes[value]);
  }
  std::vector<uint64_t> live(steps);
  int64_t running = 0;
  for (int64_t s = 0; s < steps; ++s) {
    running += delta[s];
    live[s] = static_cast<uint64_t>(running) + schedule.steps[s].workspaceBytes;
  }
  return live;
}

RematOutcome simulateRemat(const RematGraph &graph, const RematDecision &decision) {
  RematSchedule schedule = buildRematSchedule(graph, decision);
  std::vector<uint64_t> live = liveBytesPerStep(schedule);
  RematOutcome outcome;
  auto peak = std::max_element(live.begin(), live.end());
  outcome.peakBytes = graph.fixedBytes + (peak == live.end() ? 0 : *peak);
  outcome.peakStep = peak == live.end() ? 0 : peak - live.begin();
  for (const RematStep &step : schedule.steps) {
    if (!step.clone)
      continue;
    ++outcome.clones;
    outcome.recomputeCost += graph.nodes[step.node].cost;
    outcome.recomputeFlops += graph.nodes[step.node].flops;
  }
  return outcome;
}

double stepFlops(const RematGraph &graph) {
  double total = 0;
  for (const RematGraph::Node &node : graph.nodes)
    total += node.flops;
  return total;
}

} // namespace memc::remat
