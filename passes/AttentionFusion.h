//===- AttentionFusion.h - attention subgraphs to flash_attention -*- C++ -*-===//
//
// The free function behind memc-fuse-attention, and its summary as the memory report shows it:
// how many attentions were fused, and why the others were not.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_ATTENTIONFUSION_H
#define MEMC_PASSES_ATTENTIONFUSION_H

#include "passes/UnfusedCandidates.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace memc {

/// An attention candidate (a softmax of a product) left as it was, and why.
using UnfusedAttention = UnfusedCandidate;

struct AttentionFusionSummary {
  int64_t fused = 0;
  std::vector<UnfusedAttention> unfused;
};

/// Replaces each attention subgraph of `function` that memc.flash_attention expresses with it
/// (FuseAttention.cpp says which); the others stay as they are.
AttentionFusionSummary fuseAttention(mlir::func::FuncOp function);

/// The summary as attributes of `function` (memc.attention_fused, memc.attention_unfused: an
/// array of [node, reason] pairs), where the pipeline finds it for the report and lit tests
/// see it.
void recordAttentionFusion(mlir::func::FuncOp function, const AttentionFusionSummary &summary);

/// What recordAttentionFusion wrote, or nothing where the pass did not run.
std::optional<AttentionFusionSummary> readAttentionFusion(mlir::func::FuncOp function);

} // namespace memc

#endif // MEMC_PASSES_ATTENTIONFUSION_H
