//===- PlannerBench.cpp - memc's memory planner against TFLite's and XLA's -===//
//
// memc-planner-bench [--quick]: builds synthetic training-step graphs (GPT-2 and ResNet shapes),
// takes the live ranges of the exporter's node order, plans them with TFLite's greedy by size,
// XLA's best-fit heap planning and memc's planner (also with the in-place hints of elementwise
// nodes), and prints markdown tables: arena size over the lower bound and planning time per
// planner, then what memory-aware scheduling saves. Every plan is checked with verifyAssignment;
// a failed check fails the program. --quick leaves out the 92k-buffer graph, on which the
// baselines take seconds.
//
//===----------------------------------------------------------------------===//
#include "TrainingGraphs.h"

#include "compiler/planner/ArenaPlanner.h"
#include "compiler/planner/Baselines.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>

using namespace memc;
using namespace memc::planner;

namespace {

struct Workload {
  std::string name;
  std::function<bench::TrainingGraph()> build;
};

struct Timed {
  Assignment assignment;
  double milliseconds = 0;
};

Timed timed(const std::function<Assignment()> &plan) {
  auto start = std::chrono::steady_clock::now();
  Timed result{plan()};
  result.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::string mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / (1 << 20));
  return text;
}

/// "arena MiB (arena / lower bound ×) time ms"
std::string cell(const Timed &plan) {
  const Assignment &a = plan.assignment;
  double ratio = a.lowerBoundBytes ? static_cast<double>(a.arenaBytes) / a.lowerBoundBytes : 1;
  char text[96];
  std::snprintf(text, sizeof text, "%s (%.4f×) %.1f ms", mib(a.arenaBytes).c_str(), ratio,
                plan.milliseconds);
  return text;
}

bool check(const std::vector<BufferRequest> &buffers, const Timed &plan,
           const std::vector<InPlaceHint> &hints = {}) {
  std::string error;
  if (verifyAssignment(buffers, plan.assignment, error, kDefaultAlignment, hints))
    return true;
  std::fprintf(stderr, "%s: invalid plan: %s\n", plan.assignment.strategy.c_str(), error.c_str());
  return false;
}

std::vector<Workload> workloads(bool quick) {
  bench::Gpt2Config gpt12, gpt24, gptMixed, gptCheckpointed, gptDeferred, gptDeep;
  gpt24.layers = 24;
  gptMixed.dropout = true;
  gptMixed.style.elementBytes = 2;
  gptCheckpointed.style.checkpointBlocks = true;
  gptDeferred.style.deferWeightGradients = true;
  gptDeep.layers = 2000;
  gptDeep.batch = 1;
  gptDeep.sequence = 128;
  gptDeep.hidden = 256;
  gptDeep.heads = 4;
  gptDeep.vocabulary = 1024;
  bench::ResNetConfig resnet50, resnet152, resnetCheckpointed, resnetDeferred;
  resnet152.blocks = {3, 8, 36, 3};
  resnetCheckpointed.style.checkpointBlocks = true;
  resnetCheckpointed.style.elementBytes = 2;
  resnetDeferred.style.deferWeightGradients = true;
  auto gpt = [](const bench::Gpt2Config &config) {
    return [config] { return bench::buildGpt2TrainingGraph(config); };
  };
  auto resnet = [](const bench::ResNetConfig &config) {
    return [config] { return bench::buildResNetTrainingGraph(config); };
  };
  std::vector<Workload> list = {
      {"GPT-2 12L, B8×T1024, f32", gpt(gpt12)},
      {"GPT-2 24L, B8×T1024, f32", gpt(gpt24)},
      {"GPT-2 12L, f16 + dropout", gpt(gptMixed)},
      {"GPT-2 12L, checkpointed blocks", gpt(gptCheckpointed)},
      {"GPT-2 12L, dW deferred", gpt(gptDeferred)},
      {"ResNet-50, B32×224², f32", resnet(resnet50)},
      {"ResNet-152, B32×224², f32", resnet(resnet152)},
      {"ResNet-50, f16, checkpointed", resnet(resnetCheckpointed)},
      {"ResNet-50, dW deferred", resnet(resnetDeferred)},
  };
  if (!quick)
    list.push_back({"GPT 2000L, B1×T128, d256", gpt(gptDeep)});
  return list;
}

/// One row of the offset-assignment table; false if a plan fails its check.
bool planRow(const std::string &name, const bench::TrainingGraph &training) {
  const ScheduleGraph &graph = training.graph;
  std::vector<int32_t> order(graph.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  LiveValues live = liveRanges(graph, order);
  const std::vector<BufferRequest> &buffers = live.buffers;

  Timed greedy = timed([&] { return planGreedyBySize(buffers); });
  Timed heap = timed([&] { return planHeapSimulatorBestFit(buffers); });
  Timed memc = timed([&] { return planArena(buffers); });
  PlanOptions inPlace;
  inPlace.inPlaceHints = bench::elementwiseHints(training, live);
  Timed memcInPlace = timed([&] { return planArena(buffers, inPlace); });
  bool valid = check(buffers, memcInPlace, inPlace.inPlaceHints);
  for (const Timed *plan : {&greedy, &heap, &memc})
    valid = check(buffers, *plan) && valid;

  std::printf("| %s | %zu | %s | %s | %s | %s | %s | %s |\n", name.c_str(), buffers.size(),
              mib(memc.assignment.lowerBoundBytes).c_str(), cell(greedy).c_str(),
              cell(heap).c_str(), cell(memc).c_str(), memc.assignment.strategy.c_str(),
              cell(memcInPlace).c_str());
  std::fflush(stdout);
  return valid;
}

/// One row of the scheduling table; false if the schedule or its plan is invalid.
bool scheduleRow(const std::string &name, const ScheduleGraph &graph) {
  auto start = std::chrono::steady_clock::now();
  Schedule schedule = scheduleForMemory(graph);
  double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!isTopologicalOrder(graph, schedule.order)) {
    std::fprintf(stderr, "%s: the schedule is not topological\n", name.c_str());
    return false;
  }
  std::vector<BufferRequest> buffers = liveRanges(graph, schedule.order).buffers;
  Timed memc = timed([&] { return planArena(buffers); });
  std::printf("| %s | %zu | %s | %s | %s | %.1f ms | %s |\n", name.c_str(), graph.nodes.size(),
              mib(schedule.baselinePeakBytes).c_str(), mib(schedule.peakBytes).c_str(),
              schedule.strategy.c_str(), milliseconds, cell(memc).c_str());
  std::fflush(stdout);
  return check(buffers, memc);
}

} // namespace

int main(int argc, char **argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::vector<std::pair<std::string, bench::TrainingGraph>> graphs;
  for (const Workload &workload : workloads(quick)) {
    bench::TrainingGraph training = workload.build();
    std::string error;
    if (!validateScheduleGraph(training.graph, error)) {
      std::fprintf(stderr, "%s: %s\n", workload.name.c_str(), error.c_str());
      return 1;
    }
    graphs.emplace_back(workload.name, std::move(training));
  }

  bool valid = true;
  std::printf("## Offset assignment, exporter's node order\n\n"
              "Arena MiB (arena / lower bound) and planning time. The last column lets memc "
              "take the in-place hints of elementwise nodes, which can go below the bound.\n\n"
              "| graph | buffers | lower bound MiB | TFLite greedy-by-size | XLA best-fit | memc | "
              "memc strategy | memc + in-place |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto &[name, training] : graphs)
    valid = planRow(name, training) && valid;

  std::printf("\n## Memory-aware scheduling\n\n"
              "| graph | nodes | peak, exporter's order MiB | peak, scheduled MiB | heuristic | "
              "time | memc arena on the schedule |\n|---|---|---|---|---|---|---|\n");
  for (const auto &[name, training] : graphs)
    valid = scheduleRow(name, training.graph) && valid;
  return valid ? 0 : 1;
}
