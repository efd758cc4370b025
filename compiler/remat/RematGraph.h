//===- RematGraph.h - a training step as rematerialization sees it -*- C++ -*-===//
//
// Rematerialization decides, for every forward op whose results the backward reads, whether
// those results stay in memory from the forward to their backward use, or whether the op runs a
// second time (a clone) just before the backward needs it. This file holds the problem in plain
// C++ (no MLIR), so that the heuristic, the ILP, the tests and the benchmarks share one
// definition, and the simulator that scores a decision.
//
// The rule every decision is executed by (ApplyRemat.cpp does the same on the IR):
//  - walk the steps in order; before a backward step, for each value it reads whose producer is
//    a recomputed forward node, insert that node's clone unless one exists;
//  - a clone reads the clones of recomputed producers (inserted first, by the same rule) and the
//    original values of kept ones;
//  - every later backward reader of a recomputed value reads the clone.
// So a recomputed op runs at most twice, its original results die after their last forward
// reader, and the clone lives from the first backward use to the last.
//
// Liveness is the memory planner's: a value lives from its producer's step to its last reader's
// (graph inputs from the first step, returned values to the last), and the peak is the most
// bytes live at one step. The planner's scheduler may find an order with a lower peak, and its
// arena may exceed the peak by fragmentation; the caller checks the real plan.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REMAT_REMATGRAPH_H
#define MEMC_COMPILER_REMAT_REMATGRAPH_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memc::remat {

struct RematGraph {
  struct Node {
    /// Arena values read (repeats allowed) and written.
    std::vector<int32_t> inputs, outputs;
    /// The cost model's recompute cost and FLOPs of one execution (dialects/memc/CostModel.h).
    double cost = 0, flops = 0;
    /// Part of the loss's computation, i.e. an ancestor of the loss.
    bool forward = false;
    /// A forward node that may run again: none of its outputs is returned.
    bool recomputable = false;
    /// Kernel scratch live during the node's step only (and its clone's).
    uint64_t workspaceBytes = 0;
  };
  /// Steps in execution order: the forward, then the backward and the optimizer.
  std::vector<Node> nodes;
  std::vector<uint64_t> valueBytes;
  /// Node writing each value; -1 for graph inputs (live from the first step).
  std::vector<int32_t> producer;
  /// Values that live to the last step (returned values).
  std::vector<char> keepAlive;
  /// Bytes outside the arena that every step holds (parameters, optimizer state, constants).
  uint64_t fixedBytes = 0;

  int32_t addValue(uint64_t bytes, bool keepAliveToEnd = false);
  /// Appends a node and sets the producer of its outputs.
  int32_t addNode(Node node);
  int32_t numNodes() const { return static_cast<int32_t>(nodes.size()); }
  int32_t numValues() const { return static_cast<int32_t>(valueBytes.size()); }
};

/// Per node: nonzero where the forward node is recomputed. Entries of nodes that are not
/// recomputable are ignored.
using RematDecision = std::vector<char>;

/// Value ids, a view into a schedule's storage.
struct IdRange {
  const int32_t *first = nullptr, *last = nullptr;
  const int32_t *begin() const { return first; }
  const int32_t *end() const { return last; }
  size_t size() const { return static_cast<size_t>(last - first); }
  int32_t operator[](size_t i) const { return first[i]; }
  std::vector<int32_t> vector() const { return {first, last}; }
};

/// One step of the schedule a decision produces.
struct RematStep {
  int32_t node = -1; // the original node, or the node this step is a clone of
  bool clone = false;
  uint64_t workspaceBytes = 0;
  /// Where the step's value ids lie in the schedule's storage; clones write new ids >=
  /// graph.numValues().
  uint32_t inputsBegin = 0, outputsBegin = 0, outputsEnd = 0;
};

/// Simulations build thousands of schedules: value ids live in one array, not per step.
struct RematSchedule {
  std::vector<RematStep> steps;
  std::vector<int32_t> ids;
  /// Bytes of every value, the graph's followed by the clones', and which live to the end.
  std::vector<uint64_t> valueBytes;
  std::vector<char> keepAlive;

  IdRange inputs(size_t step) const {
    const RematStep &s = steps[step];
    return {ids.data() + s.inputsBegin, ids.data() + s.outputsBegin};
  }
  IdRange outputs(size_t step) const {
    const RematStep &s = steps[step];
    return {ids.data() + s.outputsBegin, ids.data() + s.outputsEnd};
  }
};

/// The steps that executing `decision` runs, by the rule above.
RematSchedule buildRematSchedule(const RematGraph &graph, const RematDecision &decision);

struct RematOutcome {
  /// fixedBytes plus the most arena bytes live at one step.
  uint64_t peakBytes = 0;
  /// Index into the schedule's steps where the peak occurs (first such step).
  int64_t peakStep = 0;
  double recomputeCost = 0, recomputeFlops = 0;
  int64_t clones = 0;
};

RematOutcome simulateRemat(const RematGraph &graph, const RematDecision &decision);

/// The steps each value of a schedule lives over, by the planner's rule: from its writer (the
/// first step for graph inputs) to its last reader (the last step for returned values). Values
/// nothing touches live nowhere (last < first).
struct ValueLifetimes {
  std::vector<int64_t> first, last;
  bool liveAt(int32_t value, int64_t step) const {
    return first[value] <= step && step <= last[value];
  }
};
ValueLifetimes valueLifetimes(const RematSchedule &schedule);

/// Arena bytes live at each step of `schedule`, the step's workspace included. O(steps + values
/// + reads).
std::vector<uint64_t> liveBytesPerStep(const RematSchedule &schedule);

/// Total FLOPs of one training step without recomputation.
double stepFlops(const RematGraph &graph);

} // namespace memc::remat

#endif // MEMC_COMPILER_REMAT_REMATGRAPH_H
