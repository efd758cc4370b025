//===- MemoryScheduler.h - a topological order with a low memory peak ---*- C++ -*-===//
//
// The order of a graph's nodes decides which tensors are alive together. ONNX files come in the
// exporter's order, which for training graphs often keeps gradients or activations alive far
// longer than needed; scheduleForMemory picks a topological order with a lower peak of live
// bytes, and liveRanges turns any order into the requests the arena planner places.
//
// A value is live from its producer's step to its last consumer's step (inclusive); values no
// node produces (weights, graph inputs) are persistent and not counted; values marked keepAlive
// (graph outputs) stay live until the last step.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_MEMORYSCHEDULER_H
#define MEMC_COMPILER_PLANNER_MEMORYSCHEDULER_H

#include "compiler/planner/LiveRange.h"

#include <string>
#include <vector>

namespace memc::planner {

struct ScheduleGraph {
  struct Node {
    std::vector<int32_t> inputs;  // value ids read (repeats allowed)
    std::vector<int32_t> outputs; // value ids written; each value has at most one producer
  };
  /// In the given (ONNX) order, which is the baseline.
  std::vector<Node> nodes;
  /// Bytes of each value id.
  std::vector<uint64_t> valueBytes;
  /// Per value, or empty: nonzero for values that must live until the last step.
  std::vector<char> keepAlive;

  int32_t addValue(uint64_t bytes, bool keepAliveToEnd = false);
  int32_t addNode(std::vector<int32_t> inputs, std::vector<int32_t> outputs);
  bool isKeptAlive(int32_t value) const {
    return !keepAlive.empty() && keepAlive[value] != 0;
  }
};

struct Schedule {
  /// Node ids in execution order: a topological order of the graph.
  std::vector<int32_t> order;
  uint64_t peakBytes = 0;
  /// The peak of the given order (or, if that is not topological, of its stable topological
  /// sort).
  uint64_t baselinePeakBytes = 0;
  /// Which heuristic produced `order`.
  std::string strategy;
};

/// Checks value ids, at most one producer per value, and that the graph has no cycle.
bool validateScheduleGraph(const ScheduleGraph &graph, std::string &error);

/// Whether `order` is a permutation of the nodes in which every producer precedes its consumers.
bool isTopologicalOrder(const ScheduleGraph &graph, const std::vector<int32_t> &order);

/// The peak of live bytes over the steps of `order` (a topological order).
/// O(nodes + values + edges).
uint64_t peakLiveBytes(const ScheduleGraph &graph, const std::vector<int32_t> &order);

/// One request per produced value, live over the steps (positions in `order`) it is alive;
/// valueOfBuffer maps the requests back to value ids.
struct LiveValues {
  std::vector<BufferRequest> buffers;
  std::vector<int32_t> valueOfBuffer;
};
LiveValues liveRanges(const ScheduleGraph &graph, const std::vector<int32_t> &order);

/// The lowest-peak order among: the given order; greedy list schedules, forward (among ready
/// nodes, the one whose step adds the fewest bytes net of the inputs it is the last reader of)
/// and backward from the outputs (the same rule on the reversed graph), each with ties broken by
/// given order or by most recently readied node; and depth-first orders. Ties between
/// heuristics keep the given order. Precondition: validateScheduleGraph. Each heuristic is
/// O((nodes + edges) log nodes).
Schedule scheduleForMemory(const ScheduleGraph &graph);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_MEMORYSCHEDULER_H
