//===- MasterWeights.h - 16-bit parameters train in f32 ---------*- C++ -*-===//
//
// A model exported in 16 bits (model.half(), model.bfloat16()) has 16-bit parameters. Training
// holds those it trains in f32 instead, as mixed precision does (master weights): the optimizer
// and its state update f32, and the model computes on a 16-bit copy of each made once per
// step. A frozen parameter never changes, so it keeps its own 16-bit storage (a frozen base).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_TRAINING_MASTERWEIGHTS_H
#define MEMC_COMPILER_TRAINING_MASTERWEIGHTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"

namespace memc {

/// Gives every f16 or bf16 argument of `forward` that trains (`trained[i]`, selectTrainable's
/// answer; buffers and frozen parameters keep their types) the f32 type, and casts it back to
/// its 16-bit type once at the entry for all its readers. Run before the training step is
/// built, so the step's parameters, optimizer state and gradients are f32 (the gradient of a
/// cast is the cast back). Returns how many parameters it changed.
unsigned holdParametersInFloat32(mlir::func::FuncOp forward, llvm::ArrayRef<bool> trained);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_MASTERWEIGHTS_H
