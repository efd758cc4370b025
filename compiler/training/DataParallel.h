//===- DataParallel.h - the ranks' side of a training step -------*- C++ -*-===//
//
// A data-parallel step (--world-size N) runs on every rank with its own micro-batches; these
// builders add where the ranks meet. Stage 0 sums every gradient over the ranks
// (memc.all_reduce). ZeRO (--zero-stage) partitions the model state: rank r owns the flat
// elements [r*S, (r+1)*S) of every trained tensor (S = ceil(E / N), the last shard zero-padded;
// kernels::shardElements):
//   stage 1: the optimizer state is shards; each rank takes its shard of the summed gradient,
//            updates its shard of the parameter, and the ranks all-gather the parameter;
//   stage 2: also the gradients: each is reduce-scattered as the backward produces it, and the
//            accumulators are shards.
// Global-norm clipping and fp16's found-inf then see shards, so their sums go over the ranks too.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_TRAINING_DATAPARALLEL_H
#define MEMC_COMPILER_TRAINING_DATAPARALLEL_H

#include "compiler/training/Optimizer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace memc {

/// The flat shard type of `whole` over `worldSize` ranks.
mlir::RankedTensorType shardType(mlir::RankedTensorType whole, int64_t worldSize);

/// Stages 0 and 1: every gradient summed over the ranks, on the micro-batch that applies
/// (`gate`, null without accumulation: every micro-batch), each placed right after its gradient
/// is final, so the first ones are on their way while the backward computes the rest.
void allReduceGradients(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::MutableArrayRef<mlir::Value> gradients, mlir::Value gate,
                        int64_t worldSize);

/// Stage 2: every gradient reduce-scattered right after the backward produces it, so a rank
/// keeps its shard of each and the whole one dies at once.
void reduceScatterGradients(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::MutableArrayRef<mlir::Value> gradients, int64_t worldSize);

/// Stage 1: this rank's shard of each (summed) gradient, right after it is produced.
void shardGradients(mlir::OpBuilder &b, mlir::Location loc,
                    mlir::MutableArrayRef<mlir::Value> gradients, int64_t worldSize);

/// The sum of an f32 scalar over the ranks (every micro-batch: each rank computes it alike).
mlir::Value sumOverRanks(mlir::OpBuilder &b, mlir::Location loc, mlir::Value scalar,
                         int64_t worldSize);

/// Stages 1 and 2: the optimizer's update of this rank's shard of `update.param` (the gradient
/// and state are shards already), then the parameter all-gathered whole on the micro-batch that
/// applies (`gate`). Returns the whole new parameter followed by the new state shards.
llvm::SmallVector<mlir::Value> buildShardedUpdate(mlir::OpBuilder &b, mlir::Location loc,
                                                  const Optimizer &optimizer,
                                                  ParameterUpdate update, mlir::Value gate,
                                                  int64_t worldSize);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_DATAPARALLEL_H
