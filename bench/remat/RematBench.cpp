//===- RematBench.cpp - budget -> (peak, recompute) curves on real models -===//
//
// memc-remat-bench MODEL.onnx [--freeze GLOB]... [--ilp-seconds S] [--fractions F,F,...]
//
// Builds the model's AdamW training step as `memc --loss cross_entropy` does, then plans it
// under budgets between the peak without recomputation and the lowest peak memc reaches, with
// each strategy: --remat auto with the heuristic and with the ILP (where it solves within the
// time limit), and the fixed strategies --remat full and Chen et al.'s sqrt(n) segments. Every
// number is a real plan's (persistent state + constants + arena, workspace included). Prints
// markdown tables for docs/benchmarks.md.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/pipeline/PlanWithinBudget.h"
#include "compiler/remat/RematHeuristic.h"
#include "compiler/remat/RematIR.h"
#include "compiler/report/MemoryReport.h"
#include "compiler/training/TrainStep.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

using namespace memc;

namespace {

std::string bytes(uint64_t count) { return formatBytes(count); }

struct Point {
  bool fits = false;
  uint64_t peak = 0;
  double recomputePercent = 0, recomputeCost = 0, seconds = 0;
  std::string strategy;
};

/// Plans a copy of `step` under `options` (the original stays untouched).
std::optional<Point> planCopy(mlir::func::FuncOp step, const std::string &name,
                              const BudgetOptions &options) {
  mlir::func::FuncOp copy = step.clone();
  auto start = std::chrono::steady_clock::now();
  mlir::FailureOr<BudgetedPlan> planned = planWithinBudget(copy, name, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  copy.erase();
  if (mlir::failed(planned))
    return std::nullopt;
  Point point;
  point.fits = planned->fits;
  point.peak = planPeakBytes(planned->plan);
  point.recomputePercent = 100.0 * planned->recomputeFlops / planned->stepFlops;
  point.recomputeCost = planned->recomputeCost;
  point.seconds = seconds;
  point.strategy = planned->strategy;
  return point;
}

std::string cell(const std::optional<Point> &point) {
  if (!point || !point->fits)
    return "—";
  char text[96];
  std::snprintf(text, sizeof text, "%s, %.2f%% (%.2f s)", bytes(point->peak).c_str(),
                point->recomputePercent, point->seconds);
  return text;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: memc-remat-bench MODEL.onnx [--freeze GLOB]... "
                         "[--ilp-seconds S] [--fractions F,F,...]\n");
    return 1;
  }
  std::string path = argv[1];
  TrainStepOptions trainOptions;
  trainOptions.optimizer.name = "adamw";
  trainOptions.optimizer.weightDecay = 0.01;
  trainOptions.warnUnreachable = false;
  double ilpSeconds = 20;
  std::vector<double> fractions = {0.75, 0.5};
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--freeze") {
      trainOptions.freeze.push_back(value);
    } else if (flag == "--ilp-seconds") {
      ilpSeconds = std::stod(value);
    } else if (flag == "--fractions") {
      fractions.clear();
      llvm::SmallVector<llvm::StringRef> parts;
      llvm::StringRef(value).split(parts, ',');
      for (llvm::StringRef part : parts)
        fractions.push_back(std::stod(part.str()));
    } else {
      std::fprintf(stderr, "memc-remat-bench: unknown flag %s\n", flag.c_str());
      return 1;
    }
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module = importOnnxModel(context, path, {});
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  buildCanonicalizationPipeline(pm);
  if (mlir::failed(pm.run(*module)) || mlir::failed(buildTrainStep(*module, trainOptions)) ||
      mlir::failed(pm.run(*module)))
    return 1;
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  std::string name = std::filesystem::path(path).stem().string();

  // The remat decision alone, on the extracted graph (what the "< 2 s" target is about).
  remat::ExtractedRematGraph extracted = remat::extractRematGraph(step);
  BudgetOptions none;
  none.mode = RematMode::None;
  std::optional<Point> baseline = planCopy(step, name, none);
  BudgetOptions full;
  full.mode = RematMode::Full;
  std::optional<Point> fullPoint = planCopy(step, name, full);
  if (!baseline || !fullPoint)
    return 1;
  auto start = std::chrono::steady_clock::now();
  remat::RematDecision half =
      remat::greedyRemat(extracted.graph, (baseline->peak + fullPoint->peak) / 2);
  double decisionSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  (void)half;
  int64_t forwardNodes = 0;
  for (const remat::RematGraph::Node &node : extracted.graph.nodes)
    forwardNodes += node.forward;

  // The lowest peak memc reaches: what an impossible budget reports.
  BudgetOptions impossible;
  impossible.budgetBytes = 1;
  std::optional<Point> lowestPoint = planCopy(step, name, impossible);
  if (!lowestPoint)
    return 1;
  uint64_t lowest = lowestPoint->peak;

  std::printf("### %s\n\n", name.c_str());
  std::printf("Training step: %d steps (%lld forward), %d arena values. Peak without "
              "recomputation %s; lowest peak memc reaches %s (%s); `--remat full` %s at "
              "%.2f%% recompute. Heuristic decision alone at the budget halfway: %.3f s.\n\n",
              extracted.graph.numNodes(), (long long)forwardNodes, extracted.graph.numValues(),
              bytes(baseline->peak).c_str(), bytes(lowest).c_str(), lowestPoint->strategy.c_str(),
              bytes(fullPoint->peak).c_str(), fullPoint->recomputePercent, decisionSeconds);
  std::printf(
      "| budget | auto (heuristic) | auto (ilp, %.0f s limit) | heuristic/ilp recompute cost |\n",
      ilpSeconds);
  std::printf("|---|---|---|---|\n");
  // Budgets as fractions of the peak without recomputation (down to the lowest peak), then
  // evenly between the lowest peak and that peak.
  std::vector<std::pair<std::string, uint64_t>> budgets;
  for (double fraction : fractions)
    if (fraction * baseline->peak >= lowest)
      budgets.push_back({std::to_string(int(fraction * 100 + 0.5)) + "% of none",
                         static_cast<uint64_t>(fraction * baseline->peak)});
  for (double share : {0.75, 0.5, 0.25, 0.0})
    budgets.push_back(
        {share == 0 ? std::string("lowest") : "lowest + " + std::to_string(int(share * 100)) + "%",
         lowest + static_cast<uint64_t>(share * (baseline->peak - lowest))});
  for (auto &[label, budget] : budgets) {
    BudgetOptions options;
    options.budgetBytes = budget;
    std::optional<Point> heuristic = planCopy(step, name, options);
    options.solver = RematSolver::Ilp;
    options.ilpTimeLimitSeconds = ilpSeconds;
    std::optional<Point> ilp = ilpSeconds > 0 ? planCopy(step, name, options) : std::nullopt;
    std::string comparison = "—";
    if (heuristic && heuristic->fits && ilp && ilp->fits &&
        ilp->strategy.find("ilp") != std::string::npos) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f",
                    ilp->recomputeCost > 0 ? heuristic->recomputeCost / ilp->recomputeCost
                                           : (heuristic->recomputeCost > 0 ? INFINITY : 1.0));
      comparison = text;
      if (ilp->strategy.find("optimal") != std::string::npos)
        comparison += " (ilp optimal)";
    } else if (ilp && ilp->fits) {
      comparison = "ilp fell back: " + ilp->strategy;
    }
    std::printf("| %s = %s | %s | %s | %s |\n", label.c_str(), bytes(budget).c_str(),
                cell(heuristic).c_str(), cell(ilp).c_str(), comparison.c_str());
  }
  // Chen's sqrt(n) checkpointing, as a point to compare with auto at the same memory.
  mlir::func::FuncOp chenCopy = step.clone();
  remat::ExtractedRematGraph chenGraph = remat::extractRematGraph(chenCopy);
  remat::RematDecision chen = remat::chenSqrtRemat(chenGraph.graph);
  remat::RematOutcome chenOutcome = remat::simulateRemat(chenGraph.graph, chen);
  remat::applyRemat(chenGraph, chen);
  PlanSummary chenSummary;
  mlir::FailureOr<plan::Plan> chenPlan = buildPlan(chenCopy, name, &chenSummary);
  chenCopy.erase();
  if (mlir::failed(chenPlan))
    return 1;
  uint64_t chenPeak = planPeakBytes(*chenPlan);
  BudgetOptions atChen;
  atChen.budgetBytes = chenPeak;
  std::optional<Point> autoAtChen = planCopy(step, name, atChen);
  std::printf("\n| strategy | peak | recompute %% of step FLOPs |\n|---|---|---|\n");
  std::printf("| none | %s | 0 |\n", bytes(baseline->peak).c_str());
  std::printf("| full (layer boundaries) | %s | %.2f |\n", bytes(fullPoint->peak).c_str(),
              fullPoint->recomputePercent);
  std::printf("| Chen sqrt(n) | %s | %.2f |\n", bytes(chenPeak).c_str(),
              100.0 * chenOutcome.recomputeFlops / remat::stepFlops(chenGraph.graph));
  if (autoAtChen && autoAtChen->fits)
    std::printf("| auto at Chen's peak | %s | %.2f |\n\n", bytes(autoAtChen->peak).c_str(),
                autoAtChen->recomputePercent);
  else
    std::printf("| auto at Chen's peak | — | — |\n\n");
  return 0;
}
