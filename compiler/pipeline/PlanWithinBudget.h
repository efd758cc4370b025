//===- PlanWithinBudget.h - a plan whose peak fits the VRAM budget -*- C++ -*-===//
//
// What `memc --vram-budget` does, for inference and training alike: plan the function as it is;
// for a training step whose peak (persistent state, constants and the arena) exceeds the
// budget, decide what to recompute (compiler/remat), apply it to a copy of the function and
// plan that, the real planner's peak being the check. When the plan misses the budget the
// simulator promised (the planner's arena is above its bound, or kernel workspace the simulator
// does not see), the limit given to the solver drops by the overflow and it decides again. The
// function is rewritten only when a decision is taken. Inference plans with RematMode::None.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PIPELINE_PLANWITHINBUDGET_H
#define MEMC_COMPILER_PIPELINE_PLANWITHINBUDGET_H

#include "compiler/lowering/PlanBuilder.h"
#include "passes/AttentionFusion.h"
#include "passes/LossFusion.h"

#include <functional>
#include <optional>
#include <string>

namespace memc {

enum class RematMode { Auto, None, Full };
enum class RematSolver { Heuristic, Ilp };

struct BudgetOptions {
  std::optional<uint64_t> budgetBytes;
  RematMode mode = RematMode::Auto;
  RematSolver solver = RematSolver::Heuristic;
  double ilpTimeLimitSeconds = 20;
  /// Where a long ILP solve reports its progress as it runs (remat::IlpOptions::progress).
  std::function<void(const std::string &)> progress;
  /// What every attempt is planned for (its target).
  PlanOptions plan;
};

struct BudgetedPlan {
  plan::Plan plan;
  PlanSummary summary;
  /// The plan without recomputation (the same as `plan` when nothing is recomputed).
  plan::Plan baseline;
  PlanSummary baselineSummary;
  /// Whether plan's peak is within the budget (true without one). When false, `plan` is the
  /// lowest-peak plan memc found.
  bool fits = true;
  /// What was recomputed: "none", "auto", "full", "chen-sqrt", with the solver.
  std::string strategy = "none";
  int64_t clones = 0;
  /// What the recomputation costs: FLOPs, and the cost model's objective (FLOPs and bytes).
  double recomputeFlops = 0, recomputeCost = 0;
  /// FLOPs of the training step without recomputation (cost model of dialects/memc).
  double stepFlops = 0;
  double solveSeconds = 0;
  /// Things the user should know (an ILP that fell back to the heuristic).
  std::vector<std::string> notes;
  /// What attention fusion did to the model (nothing when it did not run).
  std::optional<AttentionFusionSummary> attention;
  /// What loss fusion did to the training step (nothing when it did not run).
  std::optional<LossFusionSummary> loss;
};

/// Bytes the program holds on the device at its peak: persistent state, constants and arena.
uint64_t planPeakBytes(const plan::Plan &plan);

/// Plans `function` within the budget, rewriting it when recomputation is chosen. Fails only
/// when planning itself fails (errors emitted); a budget it cannot meet gives fits = false.
mlir::FailureOr<BudgetedPlan> planWithinBudget(mlir::func::FuncOp function,
                                               const std::string &modelName,
                                               const BudgetOptions &options);

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_PLANWITHINBUDGET_H
