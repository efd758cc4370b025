//===- MemcOps.cpp - memc op type inference, verifiers and folders --------===//
#include "dialects/memc/MemcDialect.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/ShapeInference.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace memc;

namespace {

LogicalResult inferenceError(std::optional<Location> location, const Twine &message) {
  if (location)
    return emitError(*location, message);
  return failure();
}

ArrayRef<int64_t> shapeOf(Value value) { return cast<ShapedType>(value.getType()).getShape(); }

Type elementOf(Value value) { return cast<ShapedType>(value.getType()).getElementType(); }

LogicalResult inferBroadcast(std::optional<Location> location, ValueRange operands,
                             Type elementType, SmallVectorImpl<Type> &inferred) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value operand : operands)
    shapes.push_back(shapeOf(operand));
  Shape result;
  std::string error;
  if (failed(broadcastShapes(shapes, result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementType));
  return success();
}

bool isAxisInRange(int64_t axis, int64_t rank) { return axis >= 0 && axis < rank; }

} // namespace

#define GET_OP_CLASSES
LogicalResult BiasGeluOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                           Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  std::string error;
  if (failed(lastAxisBiasShape(shapeOf(adaptor.getInput()), shapeOf(adaptor.getBias()), error)))
    return inferenceError(location, error);
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

#include "dialects/memc/MemcOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Constants and elementwise ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult memc::verifyGeluApproximate(Operation *op, StringRef approximate) {
  if (approximate != "none" && approximate != "tanh")
    return op->emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << approximate << "\"";
  return success();
}

LogicalResult GeluOp::verify() { return verifyGeluApproximate(*this, getApproximate()); }

// bias_gelu's shapes are its type inference's.
LogicalResult BiasGeluOp::verify() { return verifyGeluApproximate(*this, getApproximate()); }

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("needs a tensor of rank >= 2");
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto to = dyn_cast<FloatType>(getType().getElementType());
  // A widening cast and its way back cancel: cast(cast(x : bf16 -> f32) : f32 -> bf16) is x.
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    auto from = dyn_cast<FloatType>(inner.getInput().getType().getElementType());
    auto middle = dyn_cast<FloatType>(inner.getType().getElementType());
    if (to && from && middle && inner.getInput().getType() == getType() &&
        holdsEveryValueOf(middle, from))
      return inner.getInput();
  }
  // Float splats (the scalars a 16-bit op meets) are converted here, rounding to nearest even.
  auto splat = dyn_cast_if_present<SplatElementsAttr>(adaptor.getInput());
  if (to && splat && isa<FloatType>(splat.getElementType())) {
    APFloat value = splat.getSplatValue<APFloat>();
    bool losesInfo;
    value.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    return DenseElementsAttr::get(getType(), value);
  }
  return nullptr;
}

LogicalResult memc::verifyDropout(Operation *op, StringRef ratioName, double ratio, Value salt) {
  if (ratio < 0.0 || ratio >= 1.0)
    return op->emitOpError(ratioName) << " must be in [0, 1), got " << ratio;
  if (salt && cast<RankedTensorType>(salt.getType()).getRank() != 0)
    return op->emitOpError("salt must be a scalar");
  return success();
}

LogicalResult DropoutOp::verify() {
  return verifyDropout(getOperation(), "ratio", getRatio().convertToDouble(), getSalt());
}

//===----------------------------------------------------------------------===//
// Broadcasting ops
//===----------------------------------------------------------------------===//

#define MEMC_INFER_ARITH(OP)                                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> location,        \
                                     Adaptor adaptor, SmallVectorImpl<Type> &inferred) {     \
    return inferBroadcast(location, adaptor.getOperands(), elementOf(adaptor.getLhs()),  \
                          inferred);                                                          \
  }
MEMC_INFER_ARITH(AddOp)
MEMC_INFER_ARITH(SubOp)
MEMC_INFER_ARITH(MulOp)
MEMC_INFER_ARITH(DivOp)
MEMC_INFER_ARITH(PowOp)
MEMC_INFER_ARITH(MaxOp)
MEMC_INFER_ARITH(MinOp)
MEMC_INFER_ARITH(PReluOp)
#undef MEMC_INFER_ARITH

#define MEMC_INFER_COMPARE(OP)                                                                \
  LogicalResult OP::inferReturnTypes(MLIRContext *context, std::optional<Location> location, \
                                     Adaptor adaptor, SmallVectorImpl<Type> &inferred) {     \
    return inferBroadcast(location, adaptor.getOperands(), IntegerType::get(context, 1),     \
                          inferred);                                                          \
  }
MEMC_INFER_COMPARE(EqualOp)
MEMC_INFER_COMPARE(LessOp)
MEMC_INFER_COMPARE(GreaterOp)
MEMC_INFER_COMPARE(GreaterEqualOp)
MEMC_INFER_COMPARE(LessEqualOp)
#undef MEMC_INFER_COMPARE

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(location, adaptor.getOperands(), elementOf(adaptor.getOnTrue()),
                        inferred);
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Shape result;
  std::string error;
  kernels::MatMulTransposes transposes{adaptor.getTransposeLhs(), adaptor.getTransposeRhs()};
  if (failed(matmulShape(shapeOf(adaptor.getLhs()), shapeOf(adaptor.getRhs()), result, error,
                         transposes)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getLhs())));
  return success();
}

LogicalResult MatMulNf4Op::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  SmallVector<ArrayRef<int64_t>> absmax;
  for (Value operand : adaptor.getAbsmax())
    absmax.push_back(shapeOf(operand));
  Shape result;
  std::string error;
  if (failed(matmulNf4Shape(shapeOf(adaptor.getLhs()), adaptor.getWeightShape(),
                            adaptor.getTransposeRhs(), shapeOf(adaptor.getWeight()), absmax,
                            result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getLhs())));
  return success();
}

LogicalResult MatMulNf4Op::verify() {
  // Shapes are inference's; the absmax's types say which of its two forms it is.
  ValueRange absmax = getAbsmax();
  auto elementIs = [](Value value, auto type) { return isa<decltype(type)>(elementOf(value)); };
  if (absmax.size() == 1 && !elementIs(absmax[0], Float32Type()))
    return emitOpError("a plain absmax must be f32");
  if (absmax.size() == 3 && (!isa<IntegerType>(elementOf(absmax[0])) ||
                             !elementIs(absmax[1], Float32Type()) ||
                             !elementIs(absmax[2], Float32Type())))
    return emitOpError("a double-quantized absmax must be u8 codes, f32 scales and an f32 offset");
  return success();
}

namespace {

/// Whether `value` is a transpose that swaps only its last two dims (rank >= 2).
TransposeOp lastTwoTranspose(Value value) {
  auto transpose = value.getDefiningOp<TransposeOp>();
  if (!transpose)
    return nullptr;
  ArrayRef<int64_t> perm = transpose.getPerm();
  int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return nullptr;
  for (int64_t dim = 0; dim < rank - 2; ++dim)
    if (perm[dim] != dim)
      return nullptr;
  return transpose;
}

/// matmul(transpose(x), y) -> matmul(x, y) {transpose_lhs}, and likewise for rhs (a flag
/// already set is cleared: two swaps cancel). The kernel reads the operand transposed in
/// place, so the transposed copy (a Gemm's transB weight, attention's K^T) is never allocated.
struct FoldTransposeIntoMatMul : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    TransposeOp lhs = lastTwoTranspose(op.getLhs()), rhs = lastTwoTranspose(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (lhs) {
        op.getLhsMutable().assign(lhs.getInput());
        op.setTransposeLhs(!op.getTransposeLhs());
      }
      if (rhs) {
        op.getRhsMutable().assign(rhs.getInput());
        op.setTransposeRhs(!op.getTransposeRhs());
      }
    });
    return success();
  }
};

} // namespace

void MatMulOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<FoldTransposeIntoMatMul>(context);
}

LogicalResult SoftmaxOp::verify() {
  if (!isAxisInRange(getAxis(), getType().getRank()))
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

LogicalResult LogSoftmaxOp::verify() {
  if (!isAxisInRange(getAxis(), getType().getRank()))
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

LogicalResult CumSumOp::verify() {
  if (!isAxisInRange(getAxis(), getType().getRank()))
    return emitOpError("axis ") << getAxis() << " out of range";
  return success();
}

/// layer_norm's rule: `axis` names a dimension of `input`, the scale and bias (if any) have the
/// shape of dimensions axis..rank-1.
LogicalResult checkLayerNormOperands(std::optional<Location> location, Value input, Value scale,
                                     Value bias, int64_t axis) {
  ArrayRef<int64_t> shape = shapeOf(input);
  if (!isAxisInRange(axis, shape.size()))
    return inferenceError(location, "layer_norm axis out of range");
  ArrayRef<int64_t> normalized = shape.drop_front(axis);
  for (Value param : {scale, bias}) {
    if (param && shapeOf(param) != normalized)
      return inferenceError(location, "layer_norm scale/bias shape " +
                                          formatShape(shapeOf(param)) +
                                          " differs from the normalized shape " +
                                          formatShape(normalized));
  }
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  if (failed(checkLayerNormOperands(location, adaptor.getInput(), adaptor.getScale(),
                                    adaptor.getBias(), adaptor.getAxis())))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult AddLayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                               Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Type type = adaptor.getLhs().getType();
  if (adaptor.getRhs().getType() != type)
    return inferenceError(location, "add_layer_norm adds two tensors of one type, not " +
                                        formatShape(shapeOf(adaptor.getLhs())) + " and " +
                                        formatShape(shapeOf(adaptor.getRhs())) +
                                        " (or two element types)");
  if (failed(checkLayerNormOperands(location, adaptor.getLhs(), adaptor.getScale(),
                                    adaptor.getBias(), adaptor.getAxis())))
    return failure();
  inferred.append({type, type});
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                          Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  std::string error;
  if (failed(rmsNormShape(shapeOf(adaptor.getInput()), adaptor.getAxis(),
                          shapeOf(adaptor.getScale()), error)))
    return inferenceError(location, error);
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  if (input.size() < 2)
    return inferenceError(location, "batch_norm input must have rank >= 2");
  for (Value param : {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(), adaptor.getVar()})
    if (shapeOf(param) != ArrayRef<int64_t>{input[1]})
      return inferenceError(location, "batch_norm per-channel operand has shape " +
                                          formatShape(shapeOf(param)) + ", expected [" +
                                          std::to_string(input[1]) + "]");
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult memc::verifyAttentionOperands(Operation *op, Value query, Value key, Value value,
                                            double scale, double dropoutRatio, Value salt) {
  if (elementOf(key) != elementOf(query) || elementOf(value) != elementOf(query))
    return op->emitOpError("query, key and value must have one element type");
  if (!std::isfinite(scale) || scale <= 0)
    return op->emitOpError("scale must be finite and positive, got ") << scale;
  return verifyDropout(op, "dropout_ratio", dropoutRatio, salt);
}

LogicalResult FlashAttentionOp::inferReturnTypes(MLIRContext *context,
                                                 std::optional<Location> location, Adaptor adaptor,
                                                 SmallVectorImpl<Type> &inferred) {
  std::optional<ArrayRef<int64_t>> mask;
  if (adaptor.getMask())
    mask = shapeOf(adaptor.getMask());
  Shape output, logsumexp;
  std::string error;
  if (failed(attentionShapes(shapeOf(adaptor.getQuery()), shapeOf(adaptor.getKey()),
                             shapeOf(adaptor.getValue()), mask, output, logsumexp, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(output, elementOf(adaptor.getQuery())));
  inferred.push_back(RankedTensorType::get(logsumexp, Float32Type::get(context)));
  return success();
}

LogicalResult FlashAttentionOp::verify() {
  return verifyAttentionOperands(getOperation(), getQuery(), getKey(), getValue(),
                                 getScale().convertToDouble(),
                                 getDropoutRatio().convertToDouble(), getSalt());
}

LogicalResult LinearCrossEntropyOp::inferReturnTypes(MLIRContext *context,
                                                     std::optional<Location> location,
                                                     Adaptor adaptor,
                                                     SmallVectorImpl<Type> &inferred) {
  Shape logsumexp;
  int64_t classes;
  std::string error;
  std::optional<ArrayRef<int64_t>> bias;
  if (adaptor.getBias())
    bias = shapeOf(adaptor.getBias());
  if (failed(linearCrossEntropyShape(shapeOf(adaptor.getHidden()), shapeOf(adaptor.getWeight()),
                                     adaptor.getTransposeWeight(), bias,
                                     shapeOf(adaptor.getLabels()), logsumexp, classes, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get({}, Float32Type::get(context)));
  inferred.push_back(RankedTensorType::get(logsumexp, Float32Type::get(context)));
  return success();
}


//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

#define MEMC_INFER_REDUCE(OP)                                                                      \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> location,              \
                                     Adaptor adaptor, SmallVectorImpl<Type> &inferred) {           \
    Shape result;                                                                                  \
    std::string error;                                                                             \
    if (failed(reduceShape(shapeOf(adaptor.getInput()), adaptor.getAxes(), adaptor.getKeepdims(),  \
                           result, error)))                                                        \
      return inferenceError(location, error);                                                      \
    inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getInput())));          \
    return success();                                                                              \
  }
MEMC_INFER_REDUCE(ReduceSumOp)
MEMC_INFER_REDUCE(ReduceMeanOp)
MEMC_INFER_REDUCE(ReduceMaxOp)
MEMC_INFER_REDUCE(ReduceProdOp)
MEMC_INFER_REDUCE(ReduceL2Op)
MEMC_INFER_REDUCE(ReduceLogSumExpOp)
#undef MEMC_INFER_REDUCE

//===----------------------------------------------------------------------===//
// Layout and indexing
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                            Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Shape result;
  std::string error;
  if (failed(transposeShape(shapeOf(adaptor.getInput()), adaptor.getPerm(), result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getInput())));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  // transpose(transpose(x, inner), outer) is one transpose of x: result dim i is x's
  // inner[outer[i]].
  if (auto producer = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> inner = producer.getPerm();
    SmallVector<int64_t> composed;
    for (int64_t dim : getPerm())
      composed.push_back(inner[dim]);
    getInputMutable().assign(producer.getInput());
    setPerm(composed);
    return getResult();
  }
  for (auto [index, dim] : llvm::enumerate(getPerm()))
    if (static_cast<int64_t>(index) != dim)
      return nullptr;
  return getInput();
}

LogicalResult ReshapeOp::verify() {
  if (getInput().getType().getNumElements() != getType().getNumElements())
    return emitOpError("cannot reshape ")
           << getInput().getType() << " to " << getType() << ": element counts differ";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) is one reshape of x: only the final shape matters.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return nullptr;
}

LogicalResult BroadcastToOp::verify() {
  Shape broadcast;
  std::string error;
  ArrayRef<int64_t> target = getType().getShape();
  if (failed(broadcastShapes({getInput().getType().getShape(), target}, broadcast, error)) ||
      ArrayRef<int64_t>(broadcast) != target)
    return emitOpError("cannot broadcast ") << getInput().getType() << " to " << getType();
  return success();
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return nullptr;
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ValueRange inputs = adaptor.getInputs();
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value input : inputs)
    shapes.push_back(shapeOf(input));
  Shape result;
  std::string error;
  if (failed(concatShape(shapes, adaptor.getAxis(), result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(inputs.front())));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  SmallVector<Shape> pieces;
  std::string error;
  if (failed(splitShapes(shapeOf(adaptor.getInput()), adaptor.getAxis(), adaptor.getSizes(), pieces,
                         error)))
    return inferenceError(location, error);
  for (const Shape &piece : pieces)
    inferred.push_back(RankedTensorType::get(piece, elementOf(adaptor.getInput())));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                        Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  // Starts index an element (or -1 for an empty reversed slice); limits are one past it.
  Shape result;
  std::string error;
  if (failed(sliceShape(shapeOf(adaptor.getInput()), adaptor.getStarts(), adaptor.getLimits(),
                        adaptor.getSteps(), result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getInput())));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  if (getInput().getType() != getType())
    return nullptr;
  // Same shape and forward steps: the slice takes every element, in order.
  for (int64_t step : getSteps())
    if (step != 1)
      return nullptr;
  return getInput();
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Shape result;
  std::string error;
  if (failed(
          topKShape(shapeOf(adaptor.getInput()), adaptor.getAxis(), adaptor.getK(), result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getInput())));
  inferred.push_back(RankedTensorType::get(result, IntegerType::get(context, 64)));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                         Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  Shape result;
  std::string error;
  if (failed(gatherShape(shapeOf(adaptor.getData()), shapeOf(adaptor.getIndices()),
                         adaptor.getAxis(), result, error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getData())));
  return success();
}

LogicalResult GatherOp::verify() {
  std::optional<int64_t> row = getPaddingIdx();
  if (!row)
    return success();
  if (getAxis() != 0)
    return emitOpError("padding_idx needs axis 0, got ") << getAxis();
  int64_t rows = getData().getType().getDimSize(0);
  if (*row < 0 || *row >= rows)
    return emitOpError("padding_idx ") << *row << " is not a row of the " << rows << "-row table";
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> location,
                                       Adaptor adaptor, SmallVectorImpl<Type> &inferred) {
  ArrayRef<int64_t> input = shapeOf(adaptor.getInput());
  ArrayRef<int64_t> weight = shapeOf(adaptor.getWeight());
  int64_t group = adaptor.getGroup();
  if (weight.size() != input.size() || group <= 0 || input.size() < 3 ||
      input[1] != weight[1] * group || weight[0] % group != 0)
    return inferenceError(location, "conv weight " + formatShape(weight) +
                                        " does not fit input " + formatShape(input) +
                                        " with group " + std::to_string(group));
  if (Value bias = adaptor.getBias(); bias && shapeOf(bias) != ArrayRef<int64_t>{weight[0]})
    return inferenceError(location, "conv bias must have shape [" + std::to_string(weight[0]) +
                                        "]");
  Shape result;
  std::string error;
  if (failed(windowShape(input, weight[0], weight.drop_front(2), adaptor.getStrides(),
                         adaptor.getPads(), adaptor.getDilations(), /*ceilMode=*/false, result,
                         error)))
    return inferenceError(location, error);
  inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getInput())));
  return success();
}

#define MEMC_INFER_POOL(OP)                                                                   \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> location,        \
                                     Adaptor adaptor, SmallVectorImpl<Type> &inferred) {     \
    ArrayRef<int64_t> input = shapeOf(adaptor.getInput());                                   \
    Shape result;                                                                             \
    std::string error;                                                                        \
    if (failed(windowShape(input, input.size() > 1 ? input[1] : 0, adaptor.getKernelShape(), \
                           adaptor.getStrides(), adaptor.getPads(), adaptor.getDilations(),  \
                           adaptor.getCeilMode(), result, error)))                            \
      return inferenceError(location, error);                                                 \
    inferred.push_back(RankedTensorType::get(result, elementOf(adaptor.getInput())));    \
    return success();                                                                         \
  }
MEMC_INFER_POOL(MaxPoolOp)
MEMC_INFER_POOL(AvgPoolOp)
#undef MEMC_INFER_POOL
