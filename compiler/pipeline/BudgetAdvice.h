//===- BudgetAdvice.h - what to say when a budget cannot be met -*- C++ -*-===//
//
// A budget below the lowest peak memc reaches is an error that must help: the lowest peak, where
// its bytes go, and the flags that would lower it, chosen from what the plan holds (optimizer
// state, fixed input shapes, fp32 ops) and the options it was compiled with.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PIPELINE_BUDGETADVICE_H
#define MEMC_COMPILER_PIPELINE_BUDGETADVICE_H

#include "compiler/pipeline/Pipeline.h"

#include <string>

namespace memc {

/// The message (without "error: ") for a plan that does not fit `options.budget`, on three
/// lines: the lowest peak and the --remat that reached it, the peak's categories, and
/// `plannedAdvice` (what planned variants of the flags reach, tools/memc/ChooseFlags.h) or,
/// without it, the flags that would lower the peak.
std::string infeasibleBudgetMessage(mlir::MLIRContext &context, const BudgetedPlan &planned,
                                    const PipelineOptions &options,
                                    const std::string &plannedAdvice = "");

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_BUDGETADVICE_H
