//===- Passes.h - memc's passes over compiler transforms --------*- C++ -*-===//
#ifndef MEMC_COMPILER_PIPELINE_PASSES_H
#define MEMC_COMPILER_PIPELINE_PASSES_H

#include "compiler/training/TrainStep.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace memc {

#define GEN_PASS_DECL
#include "compiler/pipeline/Passes.h.inc"

/// memc-build-train-step with options the caller has already validated (the pipeline's), and
/// those the pass's textual options do not expose (the function's name, whether to warn).
std::unique_ptr<mlir::Pass> createBuildTrainStepPass(const TrainStepOptions &options);

#define GEN_PASS_REGISTRATION
#include "compiler/pipeline/Passes.h.inc"

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_PASSES_H
