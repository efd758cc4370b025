//===- MemcTrainingOps.cpp - verifiers of the backward and loss ops -------===//
//
// Backward ops state their result type (the forward operand's); each verifier checks it
// against the forward shape rule, so a wrong gradient shape fails where it is built.
//
//===----------------------------------------------------------------------===//
#include "dialects/memc/MemcDialect.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/ShapeInference.h"
#include "kernels/Collectives.h"
#include "kernels/DynamicQuantization.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace memc;

LogicalResult GatherGradOp::verify() {
  Shape gathered;
  std::string error;
  if (failed(gatherShape(getType().getShape(), getIndices().getType().getShape(), getAxis(),
                         gathered, error)))
    return emitOpError(error);
  if (ArrayRef<int64_t>(gathered) != getGrad().getType().getShape())
    return emitOpError("grad shape ") << formatShape(getGrad().getType().getShape())
                                      << " is not what gathering from the result gives, "
                                      << formatShape(gathered);
  return success();
}

LogicalResult BatchMomentsOp::verify() {
  RankedTensorType input = getInput().getType();
  if (input.getRank() < 2)
    return emitOpError("input must have a channel axis (rank >= 2), got rank ") << input.getRank();
  for (Value statistic : {getMean(), getVariance()})
    if (cast<RankedTensorType>(statistic.getType()).getShape() !=
        ArrayRef<int64_t>{input.getDimSize(1)})
      return emitOpError("mean and variance must be [")
             << input.getDimSize(1) << "] (the channels)";
  return success();
}

LogicalResult SliceGradOp::verify() {
  Shape sliced;
  std::string error;
  if (failed(sliceShape(getType().getShape(), getStarts(), getLimits(), getSteps(), sliced, error)))
    return emitOpError(error);
  if (ArrayRef<int64_t>(sliced) != getGrad().getType().getShape())
    return emitOpError("grad shape does not match the slice of the result shape");
  return success();
}

namespace {
/// The forward convolution's output shape for `input` and `weight` shapes.
LogicalResult convOutput(Operation *op, ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                         ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                         ArrayRef<int64_t> dilations, int64_t group, ArrayRef<int64_t> grad) {
  Shape output;
  std::string error;
  if (weight.size() != input.size() || input.size() < 3 || group <= 0 ||
      input[1] != weight[1] * group ||
      failed(windowShape(input, weight[0], weight.drop_front(2), strides, pads, dilations,
                         /*ceilMode=*/false, output, error)))
    return op->emitOpError("input ") << formatShape(input) << " and weight "
                                     << formatShape(weight) << " do not form a convolution "
                                     << error;
  if (ArrayRef<int64_t>(output) != grad)
    return op->emitOpError("grad shape ") << formatShape(grad) << " differs from the forward "
                                          << "output shape " << formatShape(output);
  return success();
}
} // namespace

LogicalResult ConvGradInputOp::verify() {
  return convOutput(*this, getType().getShape(), getWeight().getType().getShape(), getStrides(),
                    getPads(), getDilations(), getGroup(), getGrad().getType().getShape());
}

LogicalResult ConvGradWeightOp::verify() {
  return convOutput(*this, getInput().getType().getShape(), getType().getShape(), getStrides(),
                    getPads(), getDilations(), getGroup(), getGrad().getType().getShape());
}

LogicalResult FlashAttentionGradOp::verify() {
  if (failed(verifyAttentionOperands(getOperation(), getQuery(), getKey(), getValue(),
                                     getScale().convertToDouble(),
                                     getDropoutRatio().convertToDouble(), getSalt())))
    return failure();
  std::optional<ArrayRef<int64_t>> mask;
  if (getMask())
    mask = getMask().getType().getShape();
  Shape output, logsumexp;
  std::string error;
  if (failed(attentionShapes(getQuery().getType().getShape(), getKey().getType().getShape(),
                             getValue().getType().getShape(), mask, output, logsumexp, error)))
    return emitOpError(error);
  if (ArrayRef<int64_t>(output) != getOutput().getType().getShape() ||
      ArrayRef<int64_t>(logsumexp) != getLogsumexp().getType().getShape())
    return emitOpError("output and logsumexp must be the forward's, ")
           << formatShape(output) << " and " << formatShape(logsumexp);
  return success();
}

LogicalResult CrossEntropyOp::verify() {
  ArrayRef<int64_t> logits = getLogits().getType().getShape();
  if (logits.empty() || getLogits().getType().getShape().drop_back() !=
                            getLabels().getType().getShape())
    return emitOpError("labels must have the logits' shape without the class axis: logits ")
           << formatShape(logits) << ", labels " << formatShape(getLabels().getType().getShape());
  if (getLoss().getType().getRank() != 0)
    return emitOpError("loss must be a scalar");
  return success();
}

namespace {

/// The 16-bit logits a cast widens exactly to f32, or null. The loss kernels widen 16-bit rows
/// themselves, in the same f32 arithmetic, so reading the narrow logits gives the same loss and
/// gradient while the step saves the logits for the backward in 16 bits, not the f32 copy
/// (under --precision bf16 that copy was the largest activation of a language model: B x T x
/// vocabulary floats).
Value exactlyWidenedSource(Value logits) {
  auto cast = logits.getDefiningOp<CastOp>();
  if (!cast)
    return nullptr;
  auto from = dyn_cast<FloatType>(cast.getInput().getType().getElementType());
  auto to = dyn_cast<FloatType>(cast.getType().getElementType());
  return from && to && from != to && holdsEveryValueOf(to, from) ? cast.getInput() : nullptr;
}

/// cross_entropy(cast(x : bf16 -> f32)) -> cross_entropy(x).
struct CrossEntropyOfWidenedLogits : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CrossEntropyOp op, PatternRewriter &rewriter) const override {
    Value narrow = exactlyWidenedSource(op.getLogits());
    if (!narrow)
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getLogitsMutable().assign(narrow); });
    return success();
  }
};

/// cross_entropy_grad(g, cast(x : bf16 -> f32)) -> cast(cross_entropy_grad(g, x) : bf16 -> f32):
/// the kernel rounds the f32 gradient into bf16 once, which the cast's own gradient (the cast
/// back to bf16) did before, and that round trip then folds away.
struct CrossEntropyGradOfWidenedLogits : OpRewritePattern<CrossEntropyGradOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CrossEntropyGradOp op, PatternRewriter &rewriter) const override {
    Value narrow = exactlyWidenedSource(op.getLogits());
    if (!narrow)
      return failure();
    Value grad = rewriter.create<CrossEntropyGradOp>(op.getLoc(), narrow.getType(), op.getGrad(),
                                                     narrow, op.getLabels(),
                                                     op.getIgnoreIndexAttr());
    rewriter.replaceOpWithNewOp<CastOp>(op, op.getType(), grad);
    return success();
  }
};

} // namespace

void CrossEntropyOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                 MLIRContext *context) {
  patterns.add<CrossEntropyOfWidenedLogits>(context);
}

void CrossEntropyGradOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                     MLIRContext *context) {
  patterns.add<CrossEntropyGradOfWidenedLogits>(context);
}

LogicalResult NonFiniteCheckOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  if (getFoundInf().getType().getRank() != 0)
    return emitOpError("result must be a scalar");
  return success();
}

LogicalResult LossScaleUpdateOp::verify() {
  if (getExponent().getType().getRank() != 0)
    return emitOpError("operands must be scalars");
  if (getWindow() < 1 || getWindow() > kernels::kMaxLossScaleWindow)
    return emitOpError("window must be in [1, ")
           << kernels::kMaxLossScaleWindow << "], got " << getWindow();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (getWorldSize() < 2 || getWorldSize() > kernels::kMaxWorldSize)
    return emitOpError("world_size must be in [2, ")
           << kernels::kMaxWorldSize << "], got " << getWorldSize();
  if (getGate() && cast<RankedTensorType>(getGate().getType()).getRank() != 0)
    return emitOpError("gate must be a scalar");
  return success();
}

namespace {

/// The checks every ZeRO op shares: a world size in range, and `shard` being the flat shard of
/// `whole` (kernels::shardElements).
LogicalResult verifyShardOf(Operation *op, int64_t worldSize, RankedTensorType whole,
                            RankedTensorType shard) {
  if (worldSize < 2 || worldSize > kernels::kMaxWorldSize)
    return op->emitOpError("world_size must be in [2, ")
           << kernels::kMaxWorldSize << "], got " << worldSize;
  int64_t expected = kernels::shardElements(whole.getNumElements(), worldSize);
  if (shard.getRank() != 1 || shard.getDimSize(0) != expected)
    return op->emitOpError("the shard of ")
           << whole << " over " << worldSize << " ranks is tensor<" << expected << "x"
           << whole.getElementType() << ">, got " << shard;
  return success();
}

} // namespace

LogicalResult ShardOp::verify() {
  return verifyShardOf(*this, getWorldSize(), cast<RankedTensorType>(getInput().getType()),
                       cast<RankedTensorType>(getResult().getType()));
}

LogicalResult ReduceScatterOp::verify() {
  return verifyShardOf(*this, getWorldSize(), cast<RankedTensorType>(getInput().getType()),
                       cast<RankedTensorType>(getResult().getType()));
}

LogicalResult AllGatherOp::verify() {
  if (getGate() && cast<RankedTensorType>(getGate().getType()).getRank() != 0)
    return emitOpError("gate must be a scalar");
  Type from = cast<RankedTensorType>(getInput().getType()).getElementType();
  Type to = cast<RankedTensorType>(getResult().getType()).getElementType();
  if (from != to && !(from.isF32() && (to.isBF16() || to.isF16())))
    return emitOpError("gathers ") << from << " shards into " << to
                                   << ": the result is the shards' type, or bf16/f16 of f32";
  return verifyShardOf(*this, getWorldSize(), cast<RankedTensorType>(getResult().getType()),
                       cast<RankedTensorType>(getInput().getType()));
}

LogicalResult AdamW8bitUpdateOp::verify() {
  auto param = cast<RankedTensorType>(getParam().getType());
  auto moment = cast<RankedTensorType>(getFirstMoment().getType());
  auto absmax = cast<RankedTensorType>(getFirstAbsmax().getType());
  if (moment.getShape() != param.getShape())
    return emitOpError("the moments must have the parameter's shape, ")
           << param << ", got " << moment;
  int64_t blocks =
      (param.getNumElements() + kernels::kQuantizationBlock - 1) / kernels::kQuantizationBlock;
  if (absmax.getRank() != 1 || absmax.getDimSize(0) != blocks)
    return emitOpError("the absmax must be one per block of ")
           << kernels::kQuantizationBlock << ": tensor<" << blocks << "xf32>, got " << absmax;
  return success();
}

LogicalResult RefreshCopyOp::verify() {
  if (getRefresh().getType().getRank() != 0)
    return emitOpError("refresh must be a scalar");
  auto source = cast<RankedTensorType>(getSource().getType());
  auto copy = cast<RankedTensorType>(getCopy().getType());
  if (source.getShape() != copy.getShape())
    return emitOpError("source and copy shapes differ: ")
           << formatShape(source.getShape()) << " and " << formatShape(copy.getShape());
  return success();
}

LogicalResult RmsNormGradOp::verify() {
  std::string error;
  if (failed(rmsNormShape(getInput().getType().getShape(), getAxis(),
                          getScale().getType().getShape(), error)))
    return emitOpError(error);
  return success();
}

LogicalResult BiasGeluGradOp::verify() {
  std::string error;
  if (failed(lastAxisBiasShape(getInput().getType().getShape(),
                               getBias().getType().getShape(), error)))
    return emitOpError(error);
  return verifyGeluApproximate(*this, getApproximate());
}

LogicalResult LinearCrossEntropyGradOp::verify() {
  Shape logsumexp;
  int64_t classes;
  std::string error;
  std::optional<ArrayRef<int64_t>> bias;
  if (getBias())
    bias = getBias().getType().getShape();
  if (failed(linearCrossEntropyShape(getHidden().getType().getShape(),
                                     getWeight().getType().getShape(), getTransposeWeight(), bias,
                                     getLabels().getType().getShape(), logsumexp, classes, error)))
    return emitOpError(error);
  if (bool(getBias()) != bool(getBiasGrad()) ||
      (getBias() && getBias().getType() != getBiasGrad().getType()))
    return emitOpError("bias_grad must be there, of the bias's type, exactly when the bias is");
  if (ArrayRef<int64_t>(logsumexp) != getLogsumexp().getType().getShape())
    return emitOpError("logsumexp must have the labels' shape ") << formatShape(logsumexp);
  if (getGrad().getType().getRank() != 0)
    return emitOpError("grad must be a scalar");
  return success();
}
