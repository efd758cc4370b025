//===- RematerializePass.cpp - the memc-remat pass ------------------------===//
//
// A thin wrapper: the decision and the rewrite are planWithinBudget's (PlanWithinBudget.h),
// which the pipeline calls for memc --vram-budget as well.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Passes.h"
#include "compiler/pipeline/PlanWithinBudget.h"
#include "dialects/memc/MemcDialect.h"
#include "runtime/support/Bytes.h"

namespace memc {
#define GEN_PASS_DEF_REMATERIALIZE
#include "compiler/pipeline/Passes.h.inc"

namespace {

struct RematerializePass : impl::RematerializeBase<RematerializePass> {
  using RematerializeBase::RematerializeBase;

  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    BudgetOptions options;
    if (mode == "auto" || mode == "none" || mode == "full") {
      options.mode = mode == "auto"   ? RematMode::Auto
                     : mode == "none" ? RematMode::None
                                      : RematMode::Full;
    } else {
      function.emitError("memc-remat: mode must be auto, none or full, got '") << mode << "'";
      return signalPassFailure();
    }
    if (solver != "heuristic" && solver != "ilp") {
      function.emitError("memc-remat: solver must be heuristic or ilp, got '") << solver << "'";
      return signalPassFailure();
    }
    options.solver = solver == "ilp" ? RematSolver::Ilp : RematSolver::Heuristic;
    if (!budget.empty()) {
      options.budgetBytes = runtime::parseByteSize(budget);
      if (!options.budgetBytes) {
        function.emitError("memc-remat: budget must be a size such as 24GiB, got '")
            << budget << "'";
        return signalPassFailure();
      }
    }
    bool hasLoss = false;
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      if (auto name = function.getResultAttrOfType<mlir::StringAttr>(i, kOutputNameAttr))
        hasLoss |= name.getValue() == "loss";
    if (!hasLoss)
      return;
    mlir::FailureOr<BudgetedPlan> planned =
        planWithinBudget(function, function.getSymName().str(), options);
    if (mlir::failed(planned))
      return signalPassFailure();
    if (!planned->fits) {
      function.emitError("memc-remat: the budget of ")
          << *options.budgetBytes << " bytes cannot be met; the lowest peak reached is "
          << planPeakBytes(planned->plan) << " bytes";
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace memc
