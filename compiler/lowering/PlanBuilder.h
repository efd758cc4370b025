//===- PlanBuilder.h - memc IR -> execution plan ----------------*- C++ -*-===//
//
// Lowers a function in canonical memc IR to the runtime's plan: a memory-aware linear schedule
// of kernel calls, one buffer per value, arena offsets from the memory planner, parameters in
// the persistent region and constants carried in the plan. Reshapes cost nothing: a reshape's
// result is the same bytes as its operand under another shape.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_LOWERING_PLANBUILDER_H
#define MEMC_COMPILER_LOWERING_PLANBUILDER_H

#include "compiler/planner/LiveRange.h"
#include "runtime/plan/Plan.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace memc {

struct PlanSummary {
  uint64_t arenaBytes = 0;
  uint64_t arenaLowerBoundBytes = 0;
  uint64_t persistentBytes = 0;
  uint64_t constantBytes = 0;
  size_t steps = 0;
  size_t inPlaceSteps = 0;
  /// The largest scratch one step's kernel needs (its workspace buffer, in the arena).
  uint64_t workspacePeakBytes = 0;
  /// Kernel workspace of every op that needs one (rematerialization counts it for clones too).
  llvm::DenseMap<mlir::Operation *, uint64_t> workspaceOf;
  /// Peak live bytes of the schedule memc chose and of the function's original order.
  uint64_t schedulePeakBytes = 0;
  uint64_t originalOrderPeakBytes = 0;
  std::string strategy;
  /// What the arena planner was given, so benchmarks can run other planners on the same input.
  std::vector<planner::BufferRequest> arenaRequests;
  std::vector<planner::InPlaceHint> inPlaceHints;
};

struct PlanOptions {
  /// The device kind the plan is for (Plan.target): its kernel contracts check the steps and
  /// size their workspaces (kernels/KernelTargets.h), and only its devices load the plan.
  std::string target = "cpu";
  /// --allow-tf32: the steps built on matrix products may multiply f32 on TF32 tensor cores
  /// (kernels/Tf32.h).
  bool allowTf32 = false;
  /// Give every input a staging buffer (runtime/plan/InputStaging.h): a training step's plan
  /// on a target that stages inputs (kernels/Target.h).
  bool stageInputs = false;
};

/// The value that owns `value`'s bytes: through reshapes to the first non-reshape producer.
mlir::Value allocationRoot(mlir::Value value);

/// Builds the plan for `function`. Emits an error and fails on ops that have no kernel.
mlir::FailureOr<plan::Plan> buildPlan(mlir::func::FuncOp function, const std::string &modelName,
                                      PlanSummary *summary = nullptr,
                                      const PlanOptions &options = {});

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_PLANBUILDER_H
