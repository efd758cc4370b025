//===- Passes.h - memc passes -----------------------------------*- C++ -*-===//
#ifndef MEMC_PASSES_PASSES_H
#define MEMC_PASSES_PASSES_H

#include "dialects/memc/MemcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace memc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Patterns that replace decomposed GELU arithmetic with memc.gelu.
void populateFuseGeluPatterns(mlir::RewritePatternSet &patterns);

/// Patterns that replace decomposed RMS norm arithmetic with memc.rms_norm.
void populateFuseRmsNormPatterns(mlir::RewritePatternSet &patterns);

/// Patterns that fuse a bias add into the GELU that reads it (memc.bias_gelu).
void populateFuseBiasGeluPatterns(mlir::RewritePatternSet &patterns);

/// Patterns that fuse a residual add into the layer_norm that reads it (memc.add_layer_norm);
/// with `fuseSharedSums` false, only where the norm is the sum's one reader.
void populateFuseAddLayerNormPatterns(mlir::RewritePatternSet &patterns, bool fuseSharedSums);

/// Gives each op of `function` the element type the precision policy (PrecisionPolicy.h) says,
/// with `lowType` as the 16-bit type, inserting each needed cast once per value.
void autocastFunction(mlir::func::FuncOp function, mlir::FloatType lowType);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace memc

#endif // MEMC_PASSES_PASSES_H
