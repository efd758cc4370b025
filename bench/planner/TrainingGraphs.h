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

namespace memc::bench {

struct Gpt2Config {
  int64_t layers = 12, batch = 8, sequence = 1024, hidden = 768, heads = 12, vocabulary = 50257;
  int64_t elementBytes = 4;
};

struct ResNetConfig {
  int64_t batch = 32, imageSize = 224, classes = 1000;
  int64_t elementBytes = 4;
  /// Bottleneck blocks per stage: ResNet-50 is {3, 4, 6, 3}, ResNet-152 {3, 8, 36, 3}.
  std::vector<int64_t> blocks = {3, 4, 6, 3};
};

planner::ScheduleGraph buildGpt2TrainingGraph(const Gpt2Config &config);
planner::ScheduleGraph buildResNetTrainingGraph(const ResNetConfig &config);

} // namespace memc::bench

#endif // MEMC_BENCH_PLANNER_TRAININGGRAPHS_H
