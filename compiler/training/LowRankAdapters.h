//===- LowRankAdapters.h - LoRA adapters and an NF4 frozen base -*- C++ -*-===//
//
// PEFT's LoRA (Hu et al., 2021) and QLoRA's quantized base (Dettmers et al., 2023) as a rewrite
// of @forward, before the training step is built: the adapters are parameters like any other,
// so autodiff differentiates them and the optimizer updates them, and the frozen base is an
// argument the step only reads.
//
// For each 2-D weight W read by a matmul (nn.Linear's [out, in] read transposed, or a plain
// [in, out]) whose module name a target glob matches, the product y = x op(W) becomes
//   y = x op(W) + (alpha / rank) * dropout(x) A^T B^T
// with A [rank, in] and B [out, rank] new parameters named `<module>.lora_A.weight` and
// `<module>.lora_B.weight`, PEFT's state_dict names (<module>: the weight's name less
// `.weight`). Their initial values are not in the model: the arguments carry kDerivedAttr
// (MemcDialect.h) (A kaiming-uniform, B zeros), which DerivedWeights.h makes when the program is
// written.
//
// With --quantize-base nf4, each frozen 2-D weight that only matmuls read, except the one whose
// product is a graph output (the LM head, as transformers leaves it), is replaced by its NF4
// storage (kernels/NormalFloat4.h) and the matmuls by memc.matmul_nf4: arguments `W` (packed),
// `W.absmax`, and with double quantization `W.nested_absmax` and `W.nested_offset`, bitsandbytes'
// names, each derived from W's stored values.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_TRAINING_LOWRANKADAPTERS_H
#define MEMC_COMPILER_TRAINING_LOWRANKADAPTERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <vector>

namespace memc {

struct LoraOptions {
  /// 0: no adapters (and nothing quantized).
  int64_t rank = 0;
  double alpha = 0;
  double dropout = 0;
  /// Globs over module names (a weight's name less `.weight`); one matches a module when it
  /// matches the whole name or a dot-separated suffix of it, so PEFT's `q_proj` works as is;
  /// or kAllLinearTargets.
  std::vector<std::string> targets;
  /// --quantize-base nf4, with double quantization unless --no-double-quant.
  bool quantizeNf4 = false;
  bool doubleQuantization = true;
  /// Globs of parameters that also train (--trainable): never quantized.
  std::vector<std::string> alsoTrainable;
  /// Seeds the A matrices' initial values (--seed), which DerivedWeights.h draws.
  uint64_t seed = 0;
};

/// PEFT's `target_modules="all-linear"`: every weight a matmul reads but the LM head's (whose
/// product is a graph output).
inline constexpr const char *kAllLinearTargets = "all-linear";

/// The globs that select what trains once adapters exist: the adapters and `alsoTrainable`.
std::vector<std::string> loraTrainable(const LoraOptions &options);

/// Rewrites `forward` as above. Errors (emitted): a glob that matches no matmul weight, a rank
/// outside [1, min(out, in)], a weight read both as W and as W^T.
mlir::LogicalResult addLowRankAdapters(mlir::func::FuncOp forward, const LoraOptions &options);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_LOWRANKADAPTERS_H
