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
//   stage 3: also the parameters: a parameter's argument, trained or frozen, is its shard
//            (memc.shard_of names the whole shape); the ranks all-gather it right before the
//            forward first reads it and again before the backward does, so the whole tensor
//            lives only around its uses, and the update writes the shard. Buffers (batch
//            norm's statistics, which the step updates) stay whole.
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
/// (`gate`, null without accumulation: every micro-batch), in buckets as DDP's: the gradients,
/// in the order the backward produces them, fill a bucket (of their element type) until it
/// holds `bucketBytes`; each bucket is flattened into one tensor and all-reduced right after its
/// last gradient is final, so the first buckets are on their way while the backward computes
/// the rest, and small gradients do not each pay a collective's latency.
void allReduceGradients(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::MutableArrayRef<mlir::Value> gradients, mlir::Value gate,
                        int64_t worldSize, uint64_t bucketBytes);

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

/// Stage 3: the whole parameter from this rank's shard `shard` of it (a step argument), built
/// at the builder's insertion point; placeGathers moves it to where it is read.
mlir::Value gatherParameter(mlir::OpBuilder &b, mlir::Location loc, mlir::Value shard,
                            mlir::RankedTensorType whole, int64_t worldSize);

/// Stage 3: a parameter the step reads only in a narrower float type (--precision bf16's
/// compute copy) is gathered in that type (each rank rounds its shard): half the bytes to
/// exchange and to hold. Replaces such entries of `gathers`.
void narrowGathers(mlir::OpBuilder &b, mlir::MutableArrayRef<mlir::Value> gathers);

/// Stage 3: moves each of `gathers` right before its first reader, and gives the readers after
/// `lastForward` (the backward's) a gather of their own right before the first of them, with
/// the forward's casts, reshapes and transposes of it repeated, so neither the whole parameter
/// nor its 16-bit copy is kept from the forward to the backward. Returns the backward's gathers.
llvm::SmallVector<mlir::Value> placeGathers(mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> gathers,
                                            mlir::Operation *lastForward);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_DATAPARALLEL_H
