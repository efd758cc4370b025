//===- Pipeline.h - memc's pass pipelines -----------------------*- C++ -*-===//
#ifndef MEMC_COMPILER_PIPELINE_PIPELINE_H
#define MEMC_COMPILER_PIPELINE_PIPELINE_H

#include "mlir/Pass/PassManager.h"

namespace memc {

/// Brings freshly imported IR to memc's canonical form: decomposed GELUs fused, folds and
/// dead code removed, common subexpressions (e.g. repeated scalar constants) merged.
void buildCanonicalizationPipeline(mlir::OpPassManager &pm);

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_PIPELINE_H
