//===- BufferCategories.h - what each value's bytes are for ------*- C++ -*-===//
//
// The memory report breaks every peak into parameters, gradients, optimizer state, saved
// activations, temporaries, workspace, inputs and constants. The lowering records each buffer's
// category in the plan, from these rules on the training step:
//  - arguments: by their kind (PlanVocabulary.h: parameters and buffers, optimizer state,
//    gradient accumulators are gradients; the weights and scales matmul_nf4 reads are the
//    quantized base); other arguments are inputs;
//  - forward values (ancestors of the loss) that a backward op reads, and recomputed clones of
//    them, are activations;
//  - parameter gradients: what the optimizers' updates read as their gradient, what the step
//    returns as a gradient, and the same-typed sums and scalings that produce them;
//  - everything else is a temporary.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_LOWERING_BUFFERCATEGORIES_H
#define MEMC_COMPILER_LOWERING_BUFFERCATEGORIES_H

#include "runtime/plan/Plan.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <string>

namespace memc {

/// The category of every argument and op result of `function`.
llvm::DenseMap<mlir::Value, plan::Category> classifyValues(mlir::func::FuncOp function);

/// What the report calls the values whose op's location says little about them: each
/// parameter gradient "gradient of NAME" (a tied embedding's summed gradient was named after
/// the loss), each 16-bit weight copy "NAME as bf16".
llvm::DenseMap<mlir::Value, std::string> describedValues(mlir::func::FuncOp function);

/// The ops the result named "loss" is computed from: the forward of a training step (empty for
/// a function without a loss).
llvm::DenseSet<mlir::Operation *> lossAncestors(mlir::func::FuncOp function);

/// The location recomputed clones carry (rematerialization marks them so).
mlir::Location recomputedLocation(mlir::Location original);
bool isRecomputed(mlir::Operation *op);

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_BUFFERCATEGORIES_H
