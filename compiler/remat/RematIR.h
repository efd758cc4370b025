//===- RematIR.h - rematerialization on memc IR -----------------*- C++ -*-===//
//
// The bridge between a training step in memc IR and the plain RematGraph the solvers work on:
// extractRematGraph describes the function as the memory planner will see it (one value per
// arena allocation, reshapes being views of their operand), and applyRemat executes a decision
// by cloning the recomputed forward ops into the backward, by the rule of RematGraph.h.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REMAT_REMATIR_H
#define MEMC_COMPILER_REMAT_REMATIR_H

#include "compiler/remat/RematGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace memc::remat {

struct ExtractedRematGraph {
  RematGraph graph;
  /// The op of each node.
  std::vector<mlir::Operation *> nodeOps;
};

/// The steps of `function` in block order. Forward nodes are the ancestors of the result named
/// "loss" (`memc.output`); a function without one (inference) has none, so nothing is
/// recomputable.
/// `workspaceOf` gives the kernel workspace of the ops that need one (PlanSummary::workspaceOf).
ExtractedRematGraph
extractRematGraph(mlir::func::FuncOp function,
                  const llvm::DenseMap<mlir::Operation *, uint64_t> &workspaceOf =
                      llvm::DenseMap<mlir::Operation *, uint64_t>());

/// Clones every recomputed forward op just before the first backward op that reads it (directly
/// or through reshapes or other clones) and makes later backward readers read the clone. Clones
/// keep their op's location, so the report still names the ONNX node. Returns the number of
/// clones.
int64_t applyRemat(const ExtractedRematGraph &extracted, const RematDecision &decision);

} // namespace memc::remat

#endif // MEMC_COMPILER_REMAT_REMATIR_H
