//===- ZooPlans.cpp - memc's plans of real models against the baselines ---===//
//
// memc-plan-zoo MODEL.onnx...
//
// Compiles each model's inference plan exactly as `memc --mode=infer` does, then runs the
// TFLite-style and XLA-style planners on the same arena requests (same schedule, same live
// ranges) and prints one markdown row per model: arena / lower bound for each planner, the
// peak of memc's schedule against the exporter's order, and the time memc took to plan.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/OnnxImporter.h"
#include "compiler/lowering/PlanBuilder.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/planner/Baselines.h"
#include "compiler/planner/LiveRange.h"
#include "runtime/plan/PlanFormat.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

using namespace memc;

namespace {

double mib(uint64_t bytes) { return bytes / 1048576.0; }

double ratio(uint64_t arena, uint64_t bound) { return bound ? double(arena) / bound : 1.0; }

} // namespace

int main(int argc, char **argv) {
  std::printf("| model | steps | arena buffers | lower bound MiB | memc | TFLite greedy-by-size | "
              "XLA best-fit | schedule peak MiB (exporter order) | plan s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 1; i < argc; ++i) {
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> module = importOnnxModel(context, argv[i], {});
    if (!module)
      return 1;
    mlir::PassManager pm(&context);
    buildCanonicalizationPipeline(pm);
    if (mlir::failed(pm.run(*module)))
      return 1;
    auto start = std::chrono::steady_clock::now();
    PlanSummary summary;
    if (mlir::failed(buildPlan(module->lookupSymbol<mlir::func::FuncOp>("forward"), argv[i],
                               &summary)))
      return 1;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The baselines take no in-place hints, so compare against the bound without them.
    uint64_t bound = planner::lowerBound(summary.arenaRequests, plan::kPlanAlignment);
    planner::Assignment tflite =
        planner::planGreedyBySize(summary.arenaRequests, plan::kPlanAlignment);
    planner::Assignment xla =
        planner::planHeapSimulatorBestFit(summary.arenaRequests, plan::kPlanAlignment);
    std::printf("| %s | %zu | %zu | %.1f | %.4f× | %.4f× | %.4f× | %.1f (%.1f) | %.2f |\n",
                std::filesystem::path(argv[i]).stem().c_str(), summary.steps,
                summary.arenaRequests.size(), mib(bound), ratio(summary.arenaBytes, bound),
                ratio(tflite.arenaBytes, bound), ratio(xla.arenaBytes, bound),
                mib(summary.schedulePeakBytes), mib(summary.originalOrderPeakBytes), seconds);
  }
  return 0;
}
