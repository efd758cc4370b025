//===- TrainingGraphs.h - synthetic training-step graphs for the planner --*- C++ -*-===//
//
// Forward + backward + optimizer graphs shaped like what an autodiff pass emits for GPT-2 and
// ResNet-50: per op the activations its gradient needs are kept alive until the backward pass
// reads them. Node order is the exporter's: forward, loss, backward in reverse, and the
// optimizer updates last. Weights and optimizer state are persistent (not in the arena).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_BENCH_PLANNER_TRAININGGRAPHS_H
#define MEMC_BENCH_PLANNER_TRAININGGRAPHS_H

#include "compiler/planner/MemoryScheduler.h"

#include <utility>

namespace memc::bench {

/// How the exporter wrote the training step.
struct TrainingStyle {
  /// 4 for f32 activations, 2 for f16/bf16.
  int64_t elementBytes = 4;
  /// Weight-gradient products come after the whole backward pass (as in gradient builders that
  /// emit the input-gradient chain first), keeping the activations they read alive.
  bool deferWeightGradients = false;
  /// Every block is recomputed in the backward pass from its saved input (activation
  /// checkpointing), instead of keeping its activations.
  bool checkpointBlocks = false;
};

struct Gpt2Config {
  int64_t layers = 12, batch = 8, sequence = 1024, hidden = 768, heads = 12, vocabulary = 50257;
  /// GPT-2's dropout on embeddings, attention probabilities and both residual branches, with
  /// one-byte masks kept for backward.
  bool dropout = false;
  TrainingStyle style;
};

struct ResNetConfig {
  int64_t batch = 32, imageSize = 224, classes = 1000;
  /// Bottleneck blocks per stage: ResNet-50 is {3, 4, 6, 3}, ResNet-152 {3, 8, 36, 3}.
  std::vector<int64_t> blocks = {3, 4, 6, 3};
  TrainingStyle style;
};

struct TrainingGraph {
  planner::ScheduleGraph graph;
  /// (input, output) value pairs of elementwise nodes (activations, residual adds, dropout,
  /// their gradients, gradient sums): the output may overwrite the input when the node is the
  /// input's last reader.
  std::vector<std::pair<int32_t, int32_t>> elementwise;
};

TrainingGraph buildGpt2TrainingGraph(const Gpt2Config &config);
TrainingGraph buildResNetTrainingGraph(const ResNetConfig &config);

/// The in-place hints an elementwise-aware caller would offer for `order`: an elementwise
/// output may take its input's bytes where the input's live range ends at that node.
std::vector<planner::InPlaceHint> elementwiseHints(const TrainingGraph &training,
                                                   const planner::LiveValues &live);

} // namespace memc::bench

#endif // MEMC_BENCH_PLANNER_TRAININGGRAPHS_H
