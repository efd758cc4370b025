//===- LossFusion.h - the LM head and cross_entropy to linear_cross_entropy -*- C++ -*-===//
//
// The free functions behind memc-fuse-loss, which the training step also calls on the loss it
// attaches (before autodiff), and their summary as the memory report shows it: whether the head
// was fused, the logits bytes that saved, and why a loss was not fused.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_LOSSFUSION_H
#define MEMC_PASSES_LOSSFUSION_H

#include "dialects/memc/MemcDialect.h"
#include "passes/UnfusedCandidates.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memc {

/// A cross_entropy left as it was, and why.
using UnfusedLoss = UnfusedCandidate;

struct LossFusionSummary {
  int64_t fused = 0;
  /// Bytes of the logits tensors the fused losses no longer compute (each as large again for
  /// its gradient in the backward).
  int64_t logitsBytesAvoided = 0;
  std::vector<UnfusedLoss> unfused;
};

/// Replaces `loss` and the head product feeding its logits (a matmul of hidden states by a
/// 2-D weight, plus a [V] bias or not, through reshapes that keep the class axis and casts
/// between float types) with
/// one memc.linear_cross_entropy when nothing else reads the logits; records the outcome in
/// `summary`. Returns the loss value that stands afterwards.
mlir::Value fuseHeadIntoLoss(CrossEntropyOp loss, LossFusionSummary &summary);

/// fuseHeadIntoLoss on every cross_entropy of `function`.
LossFusionSummary fuseLoss(mlir::func::FuncOp function);

/// The summary as attributes of `function` (memc.loss_fused, memc.loss_logits_bytes_avoided,
/// memc.loss_unfused: an array of [node, reason] pairs), where the pipeline finds it for the
/// report and lit tests see it.
void recordLossFusion(mlir::func::FuncOp function, const LossFusionSummary &summary);

/// What recordLossFusion wrote, or nothing where fusion did not run.
std::optional<LossFusionSummary> readLossFusion(mlir::func::FuncOp function);

} // namespace memc

#endif // MEMC_PASSES_LOSSFUSION_H
