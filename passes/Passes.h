//===- Passes.h - memc passes -----------------------------------*- C++ -*-===//
#ifndef MEMC_PASSES_PASSES_H
#define MEMC_PASSES_PASSES_H

#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace memc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Patterns that replace decomposed GELU arithmetic with memc.gelu.
void populateFuseGeluPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace memc

#endif // MEMC_PASSES_PASSES_H
