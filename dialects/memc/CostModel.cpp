//===- CostModel.cpp - FLOPs and bytes of one memc op ---------------------===//
#include "dialects/memc/CostModel.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;

namespace memc {
namespace {

double elements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? static_cast<double>(type.getNumElements()) : 0.0;
}

double bytesOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return static_cast<double>(storageBytes(type));
}

/// FLOPs per output element of elementwise and normalisation ops: the arithmetic a careful
/// kernel does (exp, erf and tanh count as a few operations each, as in profilers' tables).
double flopsPerElement(Operation *op) {
  return TypeSwitch<Operation *, double>(op)
      .Case<GeluOp, GeluGradOp>([](auto) { return 14.0; })
      .Case<BiasGeluOp, BiasGeluGradOp>([](auto) { return 15.0; }) // gelu's and the add
      .Case<SoftplusOp>([](auto) { return 8.0; }) // an exp and a log
      .Case<ExpOp, LogOp, ErfOp, TanhOp, SigmoidOp, PowOp, SinOp, CosOp, EluOp>(
          [](auto) { return 4.0; })
      .Case<HardSwishOp, HardSigmoidOp, PReluOp>([](auto) { return 3.0; })
      .Case<SoftmaxOp, LogSoftmaxOp, SoftmaxGradOp, LogSoftmaxGradOp>([](auto) { return 5.0; })
      .Case<LayerNormOp, BatchNormOp>([](auto) { return 8.0; })
      .Case<AddLayerNormOp>([](auto) { return 4.5; }) // per output: the add and the norm's 8
      .Case<RmsNormOp>([](auto) { return 4.0; })
      .Case<LayerNormGradOp, BatchNormGradOp>([](auto) { return 12.0; })
      .Case<RmsNormGradOp>([](auto) { return 8.0; })
      .Case<AdamWUpdateOp>([](auto) { return 12.0; })
      .Case<AdamW8bitUpdateOp>([](auto) { return 16.0; }) // adamw's and the 8-bit codes
      .Case<SgdUpdateOp, DropoutOp, CrossEntropyOp, CrossEntropyGradOp>([](auto) { return 4.0; })
      .Case<LossScaleUpdateOp>([](auto) { return 4.0; })
      .Case<TransposeOp, BroadcastToOp, ConcatOp, SplitOp, SliceOp, SliceGradOp, GatherOp,
            GatherGradOp, CastOp, TriluOp, RefreshCopyOp, AllReduceOp, ShardOp,
            ReduceScatterOp, AllGatherOp>([](auto) { return 0.0; })
      .Default([](Operation *) { return 1.0; });
}

/// The query-key pairs one attention computes: B*H*Tq*Tk, about half with `causal` (the pairs
/// at or below the diagonal).
double attentionPairs(RankedTensorType query, RankedTensorType key, bool causal) {
  double queries = query.getShape()[2], keys = key.getShape()[2];
  double pairs = static_cast<double>(query.getNumElements()) / query.getShape()[3] * keys;
  if (!causal || queries == 0 || keys == 0)
    return pairs;
  // Query i sees min(Tk, i + 1 + Tk - Tq) keys (bottom-right alignment), at least 0.
  double seen = 0;
  for (double i = 0; i < queries; ++i)
    seen += std::clamp(i + 1 + keys - queries, 0.0, keys);
  return pairs * seen / (queries * keys);
}

/// Attention as FlashAttention counts it: the forward's two products (scores and
/// probabilities @ value, 2*D and 2*Dv per pair) and its softmax (5 per pair); the backward's
/// five products (scores again, dV, dP, dQ, dK) and the softmax backward. A dropout draws its
/// mask per pair as memc.dropout does per element (4), the backward twice (both its passes).
double attentionFlops(Operation *op) {
  bool backward = isa<FlashAttentionGradOp>(op);
  Value query = op->getOperand(backward ? 1 : 0), key = op->getOperand(backward ? 2 : 1),
        value = op->getOperand(backward ? 3 : 2);
  auto queryType = cast<RankedTensorType>(query.getType());
  double d = queryType.getShape()[3];
  double dv = cast<RankedTensorType>(value.getType()).getShape()[3];
  bool causal = op->getAttrOfType<BoolAttr>("causal").getValue();
  double pairs = attentionPairs(queryType, cast<RankedTensorType>(key.getType()), causal);
  auto ratio = op->getAttrOfType<FloatAttr>("dropout_ratio");
  double mask = ratio && ratio.getValueAsDouble() > 0.0 ? (backward ? 8.0 : 4.0) : 0.0;
  return backward ? pairs * (6 * d + 4 * dv + 5 + mask) : pairs * (2 * d + 2 * dv + 5 + mask);
}

/// The head product and the loss as the chunked kernels do them: forward, the logits tile by
/// tile (2*D per logit) and the online logsumexp (5 per logit); backward, the logits twice
/// (once for the hidden states' pass, once for the weight's, so no sum needs atomics), the
/// softmax gradient and the two products.
double linearCrossEntropyFlops(Operation *op) {
  bool backward = isa<LinearCrossEntropyGradOp>(op);
  auto hidden = cast<RankedTensorType>(op->getOperand(backward ? 1 : 0).getType());
  auto weight = cast<RankedTensorType>(op->getOperand(backward ? 2 : 1).getType());
  double depth = hidden.getShape().back();
  double logits = static_cast<double>(weight.getNumElements()) / std::max(depth, 1.0) *
                  (static_cast<double>(hidden.getNumElements()) / std::max(depth, 1.0));
  return backward ? logits * (8 * depth + 10) : logits * (2 * depth + 5);
}

} // namespace

OpCost estimateOpCost(Operation *op) {
  OpCost cost;
  if (isa<ConstantOp, ReshapeOp>(op))
    return cost;
  double outputElements = 0;
  for (Value operand : op->getOperands())
    cost.bytes += bytesOf(operand);
  for (Value result : op->getResults()) {
    cost.bytes += bytesOf(result);
    outputElements += elements(result);
  }
  if (auto matmul = dyn_cast<MatMulOp>(op)) {
    // 2*M*N*K per batch: output elements times the contracted length.
    ArrayRef<int64_t> lhs = cast<RankedTensorType>(matmul.getLhs().getType()).getShape();
    int64_t contracted = matmul.getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
    cost.flops = 2.0 * elements(matmul.getResult()) * contracted;
    return cost;
  }
  if (auto matmul = dyn_cast<MatMulNf4Op>(op)) {
    // 2*M*N*K, as matmul: the dequantization is a table lookup and a product per element.
    ArrayRef<int64_t> lhs = cast<RankedTensorType>(matmul.getLhs().getType()).getShape();
    cost.flops = 2.0 * elements(matmul.getResult()) * lhs.back();
    return cost;
  }
  if (isa<ConvOp, ConvGradInputOp, ConvGradWeightOp>(op)) {
    // Each multiply-add pairs one element of the forward output with one weight element of its
    // group: 2 * forward outputs * (weight elements / output channels). conv_grad_input(grad,
    // weight) and conv_grad_weight(grad, input) read the forward output's shape off `grad`.
    Value weight = isa<ConvGradWeightOp>(op) ? op->getResult(0) : op->getOperand(1);
    double forwardOutputs =
        isa<ConvOp>(op) ? elements(op->getResult(0)) : elements(op->getOperand(0));
    int64_t outChannels = cast<RankedTensorType>(weight.getType()).getShape()[0];
    cost.flops = 2.0 * forwardOutputs * elements(weight) / std::max<int64_t>(1, outChannels);
    return cost;
  }
  if (isa<FlashAttentionOp, FlashAttentionGradOp>(op)) {
    cost.flops = attentionFlops(op);
    return cost;
  }
  if (isa<LinearCrossEntropyOp, LinearCrossEntropyGradOp>(op)) {
    cost.flops = linearCrossEntropyFlops(op);
    return cost;
  }
  if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceProdOp, MaxPoolOp, AvgPoolOp,
          MaxPoolGradOp, AvgPoolGradOp, MaxPoolWithArgmaxOp, MaxPoolGradArgmaxOp>(op)) {
    // One operation per element read.
    cost.flops = elements(op->getOperand(0));
    return cost;
  }
  if (isa<NonFiniteCheckOp>(op)) {
    // One test per element of every gradient.
    for (Value grad : op->getOperands())
      cost.flops += elements(grad);
    return cost;
  }
  if (auto topK = dyn_cast<TopKOp>(op)) {
    // A k-element heap per row: about log2(k) comparisons per element read.
    cost.flops = elements(topK.getInput()) * std::max(1.0, std::log2(double(topK.getK())));
    return cost;
  }
  if (isa<BatchMomentsOp>(op)) {
    // An add, then a subtract, a multiply and an add, per element read.
    cost.flops = 4.0 * elements(op->getOperand(0));
    return cost;
  }
  if (isa<ReduceL2Op, ReduceLogSumExpOp>(op)) {
    // A square and an add, or an exp and a rescaled add, per element read.
    cost.flops = (isa<ReduceL2Op>(op) ? 2.0 : 6.0) * elements(op->getOperand(0));
    return cost;
  }
  cost.flops = flopsPerElement(op) * outputElements;
  return cost;
}

} // namespace memc
