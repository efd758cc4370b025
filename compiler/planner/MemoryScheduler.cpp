//===- MemoryScheduler.cpp - memory-aware topological orders --------------===//
//
// Every heuristic produces a topological order; the orders are compared by their exact peak, so
// a heuristic only has to be good sometimes. The greedy schedulers keep the ready nodes in an
// ordered set keyed by the bytes a node would add; a node's key changes only when it becomes the
// last reader of an input (forward) or when another reader activates an input first (backward),
// which happens once per value, so a schedule costs O((nodes + edges) log nodes).
//
//===----------------------------------------------------------------------===//
#include "compiler/planner/MemoryScheduler.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>

namespace memc::planner {

int32_t ScheduleGraph::addValue(uint64_t bytes, bool keepAliveToEnd) {
  valueBytes.push_back(bytes);
  if (keepAliveToEnd && keepAlive.empty())
    keepAlive.assign(valueBytes.size() - 1, 0);
  if (!keepAlive.empty())
    keepAlive.push_back(keepAliveToEnd);
  return static_cast<int32_t>(valueBytes.size() - 1);
}

int32_t ScheduleGraph::addNode(std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
  nodes.push_back({std::move(inputs), std::move(outputs)});
  return static_cast<int32_t>(nodes.size() - 1);
}

namespace {

/// Adjacency of a validated graph: who produces each value, which distinct nodes read it, and
/// which distinct produced values each node reads.
struct GraphIndex {
  explicit GraphIndex(const ScheduleGraph &graph) : graph(graph) {
    int32_t values = static_cast<int32_t>(graph.valueBytes.size());
    int32_t nodes = static_cast<int32_t>(graph.nodes.size());
    producer.assign(values, -1);
    for (int32_t node = 0; node < nodes; ++node)
      for (int32_t value : graph.nodes[node].outputs)
        producer[value] = node;

    inputBegin.assign(nodes + 1, 0);
    std::vector<int32_t> readBy(values, -1);
    for (int32_t node = 0; node < nodes; ++node) {
      for (int32_t value : graph.nodes[node].inputs)
        if (producer[value] >= 0 && readBy[value] != node) {
          readBy[value] = node;
          inputs.push_back(value);
        }
      inputBegin[node + 1] = static_cast<int32_t>(inputs.size());
    }

    consumerBegin.assign(values + 1, 0);
    for (int32_t value : inputs)
      ++consumerBegin[value + 1];
    std::partial_sum(consumerBegin.begin(), consumerBegin.end(), consumerBegin.begin());
    consumers.resize(inputs.size());
    std::vector<int32_t> fill(consumerBegin.begin(), consumerBegin.end() - 1);
    for (int32_t node = 0; node < nodes; ++node)
      for (int32_t k = inputBegin[node]; k < inputBegin[node + 1]; ++k)
        consumers[fill[inputs[k]]++] = node;
  }

  int32_t numNodes() const { return static_cast<int32_t>(graph.nodes.size()); }
  int32_t consumerCount(int32_t value) const {
    return consumerBegin[value + 1] - consumerBegin[value];
  }
  /// Whether the value occupies memory after its producer's step.
  bool outlivesProducer(int32_t value) const {
    return consumerCount(value) > 0 || graph.isKeptAlive(value);
  }
  template <typename Visit> void forEachInput(int32_t node, Visit &&visit) const {
    for (int32_t k = inputBegin[node]; k < inputBegin[node + 1]; ++k)
      visit(inputs[k]);
  }
  template <typename Visit> void forEachConsumer(int32_t value, Visit &&visit) const {
    for (int32_t k = consumerBegin[value]; k < consumerBegin[value + 1]; ++k)
      visit(consumers[k]);
  }

  const ScheduleGraph &graph;
  std::vector<int32_t> producer;
  std::vector<int32_t> inputBegin, inputs;       // per node: distinct produced values read
  std::vector<int32_t> consumerBegin, consumers; // per value: distinct reading nodes
};

/// Ties between ready nodes of equal cost.
enum class TieBreak { GivenOrder, MostRecentlyReady };

/// The ready list of a greedy scheduler: nodes by (cost, tie key). A backward scheduler walks
/// the given order from its end, so its given-order tie prefers later ids.
class ReadyList {
public:
  ReadyList(int32_t nodes, TieBreak tieBreak, bool backward)
      : key(nodes), tieBreak(tieBreak), backward(backward) {}

  void add(int32_t node, int64_t cost) {
    int64_t tie = tieBreak == TieBreak::MostRecentlyReady ? -(readyCount++)
                  : backward                             ? -node
                                                         : node;
    key[node] = {cost, tie};
    ready.emplace(cost, tie, node);
  }
  void updateCost(int32_t node, int64_t cost) {
    auto [oldCost, tie] = key[node];
    ready.erase({oldCost, tie, node});
    key[node].first = cost;
    ready.emplace(cost, tie, node);
  }
  int64_t cost(int32_t node) const { return key[node].first; }
  bool empty() const { return ready.empty(); }
  int32_t pop() {
    int32_t node = std::get<2>(*ready.begin());
    ready.erase(ready.begin());
    return node;
  }

private:
  std::set<std::tuple<int64_t, int64_t, int32_t>> ready;
  std::vector<std::pair<int64_t, int64_t>> key;
  TieBreak tieBreak;
  bool backward;
  int64_t readyCount = 0;
};

/// Forward greedy: a node's cost is the bytes it allocates that outlive its step minus the bytes
/// of the inputs it is the last reader of.
std::vector<int32_t> greedyForward(const GraphIndex &index, TieBreak tieBreak) {
  const ScheduleGraph &graph = index.graph;
  int32_t n = index.numNodes();
  std::vector<int32_t> readersLeft(graph.valueBytes.size()), waitingFor(n, 0);
  for (size_t value = 0; value < graph.valueBytes.size(); ++value)
    readersLeft[value] = index.consumerCount(static_cast<int32_t>(value));
  for (int32_t node = 0; node < n; ++node)
    index.forEachInput(node, [&](int32_t) { ++waitingFor[node]; });

  auto frees = [&](int32_t value) { return !graph.isKeptAlive(value) && readersLeft[value] == 1; };
  auto cost = [&](int32_t node) {
    int64_t bytes = 0;
    for (int32_t value : graph.nodes[node].outputs)
      if (index.outlivesProducer(value))
        bytes += static_cast<int64_t>(graph.valueBytes[value]);
    index.forEachInput(node, [&](int32_t value) {
      if (frees(value))
        bytes -= static_cast<int64_t>(graph.valueBytes[value]);
    });
    return bytes;
  };

  ReadyList ready(n, tieBreak, /*backward=*/false);
  std::vector<char> isReady(n, 0), done(n, 0);
  for (int32_t node = 0; node < n; ++node)
    if (waitingFor[node] == 0) {
      ready.add(node, cost(node));
      isReady[node] = 1;
    }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    int32_t node = ready.pop();
    done[node] = 1;
    order.push_back(node);
    index.forEachInput(node, [&](int32_t value) {
      if (--readersLeft[value] != 1 || graph.isKeptAlive(value))
        return;
      // The one reader left now frees the value: it became cheaper.
      index.forEachConsumer(value, [&](int32_t reader) {
        if (!done[reader] && isReady[reader])
          ready.updateCost(reader, ready.cost(reader) - int64_t(graph.valueBytes[value]));
      });
    });
    for (int32_t value : graph.nodes[node].outputs)
      index.forEachConsumer(value, [&](int32_t reader) {
        if (--waitingFor[reader] == 0) {
          ready.add(reader, cost(reader));
          isReady[reader] = 1;
        }
      });
  }
  return order;
}

/// Backward greedy, from the last step to the first: scheduling a node ends its outputs' lives
/// (seen backwards) and starts those of its inputs no later reader has started. The cost is
/// the bytes started minus the bytes ended; the result is reversed into execution order.
std::vector<int32_t> greedyBackward(const GraphIndex &index, TieBreak tieBreak) {
  const ScheduleGraph &graph = index.graph;
  int32_t n = index.numNodes();
  std::vector<int32_t> readersOfOutputs(n, 0);
  for (int32_t node = 0; node < n; ++node)
    for (int32_t value : graph.nodes[node].outputs)
      readersOfOutputs[node] += index.consumerCount(value);
  std::vector<char> started(graph.valueBytes.size(), 0);
  for (size_t value = 0; value < graph.valueBytes.size(); ++value)
    started[value] = graph.isKeptAlive(static_cast<int32_t>(value));

  auto cost = [&](int32_t node) {
    int64_t bytes = 0;
    index.forEachInput(node, [&](int32_t value) {
      if (!started[value])
        bytes += static_cast<int64_t>(graph.valueBytes[value]);
    });
    for (int32_t value : graph.nodes[node].outputs)
      if (index.outlivesProducer(value))
        bytes -= static_cast<int64_t>(graph.valueBytes[value]);
    return bytes;
  };

  ReadyList ready(n, tieBreak, /*backward=*/true);
  std::vector<char> isReady(n, 0), done(n, 0);
  for (int32_t node = n - 1; node >= 0; --node)
    if (readersOfOutputs[node] == 0) {
      ready.add(node, cost(node));
      isReady[node] = 1;
    }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    int32_t node = ready.pop();
    done[node] = 1;
    order.push_back(node);
    index.forEachInput(node, [&](int32_t value) {
      if (!started[value]) {
        started[value] = 1;
        // Other readers of the value no longer start it: they became cheaper.
        index.forEachConsumer(value, [&](int32_t reader) {
          if (!done[reader] && isReady[reader])
            ready.updateCost(reader, ready.cost(reader) - int64_t(graph.valueBytes[value]));
        });
      }
      int32_t producer = index.producer[value];
      if (--readersOfOutputs[producer] == 0) {
        ready.add(producer, cost(producer));
        isReady[producer] = 1;
      }
    });
  }
  std::reverse(order.begin(), order.end());
  return order;
}

/// Depth-first from the outputs: each sink (in given order) is preceded by whatever it still
/// needs, inputs in the order the node lists them. Producers run just before they are needed.
std::vector<int32_t> depthFirstFromSinks(const GraphIndex &index) {
  const ScheduleGraph &graph = index.graph;
  int32_t n = index.numNodes();
  std::vector<char> visited(n, 0);
  std::vector<int32_t> order;
  order.reserve(n);
  std::vector<std::pair<int32_t, int32_t>> stack; // (node, next input position)
  for (int32_t sink = 0; sink < n; ++sink) {
    bool isSink = true;
    for (int32_t value : graph.nodes[sink].outputs)
      isSink = isSink && index.consumerCount(value) == 0;
    if (!isSink || visited[sink])
      continue;
    visited[sink] = 1;
    stack.emplace_back(sink, index.inputBegin[sink]);
    while (!stack.empty()) {
      auto &[node, next] = stack.back();
      if (next == index.inputBegin[node + 1]) {
        order.push_back(node);
        stack.pop_back();
        continue;
      }
      int32_t producer = index.producer[index.inputs[next++]];
      if (!visited[producer]) {
        visited[producer] = 1;
        stack.emplace_back(producer, index.inputBegin[producer]);
      }
    }
  }
  return order;
}

/// Depth-first along consumers: the most recently readied node runs next, so a chain is finished
/// before another starts.
std::vector<int32_t> depthFirstFromSources(const GraphIndex &index) {
  const ScheduleGraph &graph = index.graph;
  int32_t n = index.numNodes();
  std::vector<int32_t> waitingFor(n, 0), stack, order;
  for (int32_t node = 0; node < n; ++node)
    index.forEachInput(node, [&](int32_t) { ++waitingFor[node]; });
  for (int32_t node = n - 1; node >= 0; --node)
    if (waitingFor[node] == 0)
      stack.push_back(node);
  order.reserve(n);
  std::vector<int32_t> readied;
  while (!stack.empty()) {
    int32_t node = stack.back();
    stack.pop_back();
    order.push_back(node);
    readied.clear();
    for (int32_t value : graph.nodes[node].outputs)
      index.forEachConsumer(value, [&](int32_t reader) {
        if (--waitingFor[reader] == 0)
          readied.push_back(reader);
      });
    // Push the highest id first so that the lowest runs first.
    std::sort(readied.begin(), readied.end(), std::greater<int32_t>());
    stack.insert(stack.end(), readied.begin(), readied.end());
  }
  return order;
}

/// The given order if it is topological, else its stable topological sort.
std::vector<int32_t> givenOrder(const GraphIndex &index) {
  const ScheduleGraph &graph = index.graph;
  int32_t n = index.numNodes();
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (isTopologicalOrder(graph, order))
    return order;
  std::vector<int32_t> waitingFor(n, 0);
  for (int32_t node = 0; node < n; ++node)
    index.forEachInput(node, [&](int32_t) { ++waitingFor[node]; });
  std::set<int32_t> ready;
  for (int32_t node = 0; node < n; ++node)
    if (waitingFor[node] == 0)
      ready.insert(node);
  order.clear();
  while (!ready.empty()) {
    int32_t node = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(node);
    for (int32_t value : graph.nodes[node].outputs)
      index.forEachConsumer(value, [&](int32_t reader) {
        if (--waitingFor[reader] == 0)
          ready.insert(reader);
      });
  }
  return order;
}

} // namespace

bool validateScheduleGraph(const ScheduleGraph &graph, std::string &error) {
  size_t values = graph.valueBytes.size();
  if (!graph.keepAlive.empty() && graph.keepAlive.size() != values) {
    error = "keepAlive has " + std::to_string(graph.keepAlive.size()) + " entries for " +
            std::to_string(values) + " values";
    return false;
  }
  std::vector<int32_t> producer(values, -1);
  for (size_t node = 0; node < graph.nodes.size(); ++node) {
    const ScheduleGraph::Node &current = graph.nodes[node];
    for (const std::vector<int32_t> *list : {&current.inputs, &current.outputs})
      for (int32_t value : *list)
        if (value < 0 || static_cast<size_t>(value) >= values) {
          error = "node " + std::to_string(node) + " uses value " + std::to_string(value) +
                  ", but there are " + std::to_string(values) + " values";
          return false;
        }
    for (int32_t value : current.outputs) {
      if (producer[value] >= 0) {
        error = "value " + std::to_string(value) + " is produced by nodes " +
                std::to_string(producer[value]) + " and " + std::to_string(node);
        return false;
      }
      producer[value] = static_cast<int32_t>(node);
    }
  }
  GraphIndex index(graph);
  std::vector<int32_t> order = givenOrder(index);
  if (order.size() != graph.nodes.size()) {
    error = "the graph has a cycle";
    return false;
  }
  return true;
}

bool isTopologicalOrder(const ScheduleGraph &graph, const std::vector<int32_t> &order) {
  size_t n = graph.nodes.size();
  if (order.size() != n)
    return false;
  std::vector<char> done(n, 0), produced(graph.valueBytes.size(), 0), hasProducer = produced;
  for (const ScheduleGraph::Node &node : graph.nodes)
    for (int32_t value : node.outputs)
      hasProducer[value] = 1;
  for (int32_t node : order) {
    if (node < 0 || static_cast<size_t>(node) >= n || done[node])
      return false;
    done[node] = 1;
    for (int32_t value : graph.nodes[node].inputs)
      if (hasProducer[value] && !produced[value])
        return false;
    for (int32_t value : graph.nodes[node].outputs)
      produced[value] = 1;
  }
  return true;
}

LiveValues liveRanges(const ScheduleGraph &graph, const std::vector<int32_t> &order) {
  int64_t lastStep = static_cast<int64_t>(order.size()) - 1;
  std::vector<int64_t> first(graph.valueBytes.size(), -1), last(graph.valueBytes.size(), -1);
  for (int64_t step = 0; step <= lastStep; ++step) {
    const ScheduleGraph::Node &node = graph.nodes[order[step]];
    for (int32_t value : node.outputs)
      first[value] = last[value] = step;
    for (int32_t value : node.inputs)
      if (first[value] >= 0)
        last[value] = step;
  }
  LiveValues live;
  for (size_t value = 0; value < graph.valueBytes.size(); ++value) {
    if (first[value] < 0)
      continue;
    int64_t end = graph.isKeptAlive(static_cast<int32_t>(value)) ? lastStep : last[value];
    live.buffers.push_back({graph.valueBytes[value], first[value], end});
    live.valueOfBuffer.push_back(static_cast<int32_t>(value));
  }
  return live;
}

uint64_t peakLiveBytes(const ScheduleGraph &graph, const std::vector<int32_t> &order) {
  std::vector<int64_t> delta(order.size() + 1, 0);
  for (const BufferRequest &buffer : liveRanges(graph, order).buffers) {
    delta[buffer.firstStep] += static_cast<int64_t>(buffer.size);
    delta[buffer.lastStep + 1] -= static_cast<int64_t>(buffer.size);
  }
  int64_t live = 0, peak = 0;
  for (int64_t bytes : delta)
    peak = std::max(peak, live += bytes);
  return static_cast<uint64_t>(peak);
}

Schedule scheduleForMemory(const ScheduleGraph &graph) {
  GraphIndex index(graph);
  Schedule best;
  best.order = givenOrder(index);
  best.peakBytes = best.baselinePeakBytes = peakLiveBytes(graph, best.order);
  best.strategy = "given-order";
  auto consider = [&](std::vector<int32_t> order, const char *name) {
    uint64_t peak = peakLiveBytes(graph, order);
    if (peak < best.peakBytes) {
      best.order = std::move(order);
      best.peakBytes = peak;
      best.strategy = name;
    }
  };
  consider(greedyForward(index, TieBreak::GivenOrder), "greedy-forward");
  consider(greedyForward(index, TieBreak::MostRecentlyReady), "greedy-forward-lifo");
  consider(greedyBackward(index, TieBreak::GivenOrder), "greedy-backward");
  consider(greedyBackward(index, TieBreak::MostRecentlyReady), "greedy-backward-lifo");
  consider(depthFirstFromSinks(index), "depth-first-from-sinks");
  consider(depthFirstFromSources(index), "depth-first-from-sources");
  return best;
}

} // namespace memc::planner
