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

bool RematGraph::hasBackwardReader(int32_t node) const {
  // Cheap enough for the sizes involved; callers that ask for every node use readers lists.
  for (const Node &reader : nodes) {
    if (reader.forward)
      continue;
    for (int32_t value : reader.inputs)
      if (producer[value] == node)
        return true;
  }
  return false;
}

RematSchedule buildRematSchedule(const RematGraph &graph, const RematDecision &decision) {
  RematSchedule schedule;
  schedule.valueBytes = graph.valueBytes;
  schedule.keepAlive = graph.keepAlive;
  auto recomputed = [&](int32_t node) {
    return node >= 0 && graph.nodes[node].recomputable && node < (int32_t)decision.size() &&
           decision[node];
  };
  // cloneOf[v]: the clone's value standing for graph value v, or -1.
  std::vector<int32_t> cloneOf(graph.numValues(), -1);
  std::vector<char> cloned(graph.numNodes(), 0);
  // Inserts the clone of `node` (and first those of its recomputed producers), iteratively so
  // that deep chains cannot overflow the stack.
  auto materialize = [&](int32_t root) {
    std::vector<std::pair<int32_t, bool>> work = {{root, false}};
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
      RematStep step;
      step.node = node;
      step.clone = true;
      for (int32_t value : graph.nodes[node].inputs)
        step.inputs.push_back(cloneOf[value] >= 0 ? cloneOf[value] : value);
      for (int32_t value : graph.nodes[node].outputs) {
        cloneOf[value] = static_cast<int32_t>(schedule.valueBytes.size());
        schedule.valueBytes.push_back(graph.valueBytes[value]);
        schedule.keepAlive.push_back(0);
        step.outputs.push_back(cloneOf[value]);
      }
      schedule.steps.push_back(std::move(step));
    }
  };
  for (int32_t node = 0; node < graph.numNodes(); ++node) {
    const RematGraph::Node &original = graph.nodes[node];
    RematStep step;
    step.node = node;
    step.outputs = original.outputs;
    if (original.forward) {
      step.inputs = original.inputs;
    } else {
      for (int32_t value : original.inputs)
        if (recomputed(graph.producer[value]))
          materialize(graph.producer[value]);
      for (int32_t value : original.inputs)
        step.inputs.push_back(cloneOf[value] >= 0 ? cloneOf[value] : value);
    }
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

std::vector<uint64_t> liveBytesPerStep(const RematSchedule &schedule) {
  int64_t steps = static_cast<int64_t>(schedule.steps.size());
  size_t values = schedule.valueBytes.size();
  std::vector<int64_t> first(values, -1), last(values, -1);
  for (int64_t s = 0; s < steps; ++s) {
    for (int32_t value : schedule.steps[s].inputs)
      last[value] = s;
    for (int32_t value : schedule.steps[s].outputs) {
      first[value] = s;
      last[value] = std::max(last[value], s);
    }
  }
  std::vector<int64_t> delta(steps + 1, 0);
  for (size_t value = 0; value < values; ++value) {
    if (first[value] < 0 && last[value] < 0 && !schedule.keepAlive[value])
      continue; // never touched
    int64_t begin = first[value] < 0 ? 0 : first[value];
    int64_t end = schedule.keepAlive[value] ? steps - 1 : std::max(last[value], begin);
    if (steps == 0)
      break;
    delta[begin] += static_cast<int64_t>(schedule.valueBytes[value]);
    delta[end + 1] -= static_cast<int64_t>(schedule.valueBytes[value]);
  }
  std::vector<uint64_t> live(steps);
  int64_t running = 0;
  for (int64_t s = 0; s < steps; ++s) {
    running += delta[s];
    live[s] = static_cast<uint64_t>(running);
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
