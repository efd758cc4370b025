//===- AttentionFusion.h - attention subgraphs to flash_attention -*- C++ -*-===//
//
// The free function behind memc-fuse-attention, for the pipeline, which reports its counts.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_ATTENTIONFUSION_H
#define MEMC_PASSES_ATTENTIONFUSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace memc {

/// An attention candidate (a softmax of a product) left as it was, and why.
struct UnfusedAttention {
  std::string node;
  std::string reason;
};

struct AttentionFusionSummary {
  int64_t fused = 0;
  std::vector<UnfusedAttention> unfused;
};

/// Replaces each attention subgraph of `function` that memc.flash_attention expresses with it
/// (FuseAttention.cpp says which); the others stay as they are.
AttentionFusionSummary fuseAttention(mlir::func::FuncOp function);

} // namespace memc

#endif // MEMC_PASSES_ATTENTIONFUSION_H
