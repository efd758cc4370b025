//===- MemcDialect.h - the memc dialect and its ops -------------*- C++ -*-===//
#ifndef MEMC_DIALECTS_MEMC_MEMCDIALECT_H
#define MEMC_DIALECTS_MEMC_MEMCDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/memc/MemcDialect.h.inc"

#include "dialects/memc/GradientInterface.h.inc"

#define GET_OP_CLASSES
#include "dialects/memc/MemcOps.h.inc"

namespace memc {

/// Argument attributes that tie a function argument to a tensor in the model's weight store.
constexpr llvm::StringLiteral kParamNameAttr = "memc.param";
constexpr llvm::StringLiteral kParamKindAttr = "memc.param_kind";
/// On an optimizer state or gradient accumulator: the parameter (by its memc.param name) it is
/// kept for, so passes find a parameter's state without reading its name.
constexpr llvm::StringLiteral kStateOfAttr = "memc.state_of";
/// On a ZeRO stage 3 parameter (a DenseI64ArrayAttr): the whole tensor's shape; the argument is
/// this rank's flat shard of it (compiler/training/DataParallel.h).
constexpr llvm::StringLiteral kShardOfAttr = "memc.shard_of";
/// On an argument whose initial values memc makes (compiler/lowering/DerivedWeights.h): how
/// ("kaiming_uniform", "zeros", or a part of an NF4 weight: "nf4", "nf4.absmax",
/// "nf4.nested_absmax", "nf4.nested_offset"), and for the NF4 parts, the stored weight they are
/// made from (compiler/training/LowRankAdapters.h).
constexpr llvm::StringLiteral kDerivedAttr = "memc.derived";
constexpr llvm::StringLiteral kDerivedFromAttr = "memc.derived_from";
/// On a lora_A argument (a UnitAttr): its weight is stored [in, out] and read untransposed
/// (PEFT's fan_in_fan_out).
constexpr llvm::StringLiteral kFanInFanOutAttr = "memc.fan_in_fan_out";
/// On a training step's argument (a UnitAttr): model state offloaded to host memory
/// (--offload-optimizer cpu), which the plan places in its HOST region.
constexpr llvm::StringLiteral kOffloadedAttr = "memc.offloaded";
/// The initializer holding the initial values of a parameter the exporter deduplicated.
constexpr llvm::StringLiteral kParamSourceAttr = "memc.param_source";
/// On a parameter or buffer: its stored values are a causal buffer, torch.tril(ones(N, N)) with
/// any leading dims 1 (1 on and below the diagonal, 0 above), as GPT-2 registers it; the
/// importer checks the data, so memc-fuse-attention can turn a masked_fill that reads it into
/// `causal` without reading weights.
constexpr llvm::StringLiteral kLowerTriangularAttr = "memc.lower_triangular";
/// The same for an additive causal mask, torch.full((N, N), -inf).triu(1) (nn.Transformer's
/// generate_square_subsequent_mask kept as a buffer): 0 on and below the diagonal, -inf above.
constexpr llvm::StringLiteral kCausalAdditiveMaskAttr = "memc.causal_additive_mask";
/// Graph inputs (arguments) and outputs (results) by their ONNX names.
constexpr llvm::StringLiteral kInputNameAttr = "memc.input";
constexpr llvm::StringLiteral kOutputNameAttr = "memc.output";
/// Training-step results: the parameter a gradient belongs to, or the argument a new value
/// replaces.
constexpr llvm::StringLiteral kGradientOfAttr = "memc.gradient_of";
constexpr llvm::StringLiteral kUpdatesAttr = "memc.updates";
/// On a training step: the memc.input name of its labels argument, which is otherwise just
/// another input.
constexpr llvm::StringLiteral kLabelsAttr = "memc.labels";
/// The model file a function's parameters are read from (on the module).
constexpr llvm::StringLiteral kWeightsFileAttr = "memc.weights";

/// A dropout's ratio (the attribute `ratioName`) in [0, 1) and its salt, if any, a scalar:
/// memc.dropout's and flash_attention's.
mlir::LogicalResult verifyDropout(mlir::Operation *op, llvm::StringRef ratioName, double ratio,
                                  mlir::Value salt);

/// flash_attention and flash_attention_grad: query, key and value of one element type (the mask
/// may have another), a finite, positive scale and their dropout (verifyDropout).
mlir::LogicalResult verifyAttentionOperands(mlir::Operation *op, mlir::Value query, mlir::Value key,
                                            mlir::Value value, double scale, double dropoutRatio,
                                            mlir::Value salt);

/// The ONNX node name a location carries (the first one inside a fused location), or "" when
/// it has none.
/// GELU's `approximate` ("none" or "tanh"), for gelu and bias_gelu and bias_gelu_grad.
mlir::LogicalResult verifyGeluApproximate(mlir::Operation *op, llvm::StringRef approximate);

std::string locationName(mlir::Location loc);

} // namespace memc

#endif // MEMC_DIALECTS_MEMC_MEMCDIALECT_H
