//===- GradientRules.cpp - one reverse-mode rule per differentiable op ----===//
//
// Each rule builds the vector-Jacobian product of its op: operand gradients from result
// gradients, in memc ops, at the builder's insertion point. Rules use the forward op's results
// where that saves keeping its inputs (exp, tanh, sigmoid, softmax), and fused backward ops
// where a decomposition would keep more values alive (normalizations, convolution, pooling).
// Every rule is tested against PyTorch (test/gradients).
//
//===----------------------------------------------------------------------===//
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace memc;

namespace {

RankedTensorType tensorType(Value value) { return cast<RankedTensorType>(value.getType()); }

/// A scalar constant of `value`'s element type, broadcast by the op that uses it.
Value scalar(OpBuilder &b, Location loc, Value like, double number) {
  Type element = tensorType(like).getElementType();
  auto type = RankedTensorType::get({}, element);
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type, b.getFloatAttr(element, number)));
}

Value zerosLike(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  Attribute zero = isa<FloatType>(tensor.getElementType())
                       ? Attribute(b.getFloatAttr(tensor.getElementType(), 0.0))
                       : Attribute(b.getIntegerAttr(tensor.getElementType(), 0));
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(tensor, zero));
}

/// Ones of shape [rows, 1, ...] (the rank of `table`) with a zero at `row`: multiplied into a
/// gradient of `table`, it drops that row's contribution.
Value paddingRowMask(OpBuilder &b, Location loc, Value table, int64_t row) {
  RankedTensorType type = tensorType(table);
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[0] = type.getDimSize(0);
  SmallVector<Attribute> values(shape[0], b.getFloatAttr(type.getElementType(), 1.0));
  values[row] = b.getFloatAttr(type.getElementType(), 0.0);
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(type.clone(shape), values));
}

Value reshapeTo(OpBuilder &b, Location loc, Value value, ArrayRef<int64_t> shape) {
  if (tensorType(value).getShape() == shape)
    return value;
  return b.create<ReshapeOp>(loc, tensorType(value).clone(shape), value);
}

/// Sums a gradient of a broadcast result back to the shape of the operand that was broadcast.
Value unbroadcast(OpBuilder &b, Location loc, Value grad, Type operandType) {
  auto target = cast<RankedTensorType>(operandType);
  ArrayRef<int64_t> from = tensorType(grad).getShape(), to = target.getShape();
  if (from == to)
    return grad;
  size_t lead = from.size() - to.size();
  SmallVector<int64_t> axes;
  for (size_t dim = 0; dim < from.size(); ++dim)
    if (dim < lead || (to[dim - lead] == 1 && from[dim] != 1))
      axes.push_back(dim);
  Value summed = grad;
  if (!axes.empty())
    summed = b.create<ReduceSumOp>(loc, grad, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  return reshapeTo(b, loc, summed, to);
}

/// The shape a reduction's result has with keepdims, so it broadcasts against the input.
SmallVector<int64_t> keptShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> shape(input);
  for (int64_t axis : axes)
    shape[axis] = 1;
  return shape;
}

/// lhs @ rhs with the given operands read transposed (the kernel's trans flags).
Value product(OpBuilder &b, Location loc, Value lhs, bool transposeLhs, Value rhs,
              bool transposeRhs) {
  return b.create<MatMulOp>(loc, lhs, rhs, transposeLhs, transposeRhs);
}

/// Merges all leading dims of `value` into its second-to-last (rows), as a view.
Value stackRows(OpBuilder &b, Location loc, Value value) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  int64_t rows = 1;
  for (int64_t dim : shape.drop_back())
    rows *= dim;
  return reshapeTo(b, loc, value, {rows, shape.back()});
}

/// All axes but the channel axis 1, for per-channel reductions.
SmallVector<int64_t> allButChannel(int64_t rank) {
  SmallVector<int64_t> axes = {0};
  for (int64_t dim = 2; dim < rank; ++dim)
    axes.push_back(dim);
  return axes;
}

/// [C] -> [1, C, 1, ...] to broadcast per-channel values against an NC... tensor.
Value perChannel(OpBuilder &b, Location loc, Value value, int64_t rank) {
  SmallVector<int64_t> shape(rank, 1);
  shape[1] = tensorType(value).getDimSize(0);
  return reshapeTo(b, loc, value, shape);
}

LogicalResult unary(SmallVectorImpl<Value> &grads, Value grad) {
  grads.push_back(grad);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

LogicalResult NegOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<NegOp>(getLoc(), dy[0]));
}

LogicalResult ExpOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<MulOp>(getLoc(), dy[0], getResult()));
}

LogicalResult LogOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<DivOp>(getLoc(), dy[0], getInput()));
}

LogicalResult SqrtOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value twiceRoot = b.create<MulOp>(loc, getResult(), scalar(b, loc, getResult(), 2.0));
  return unary(dx, b.create<DivOp>(loc, dy[0], twiceRoot));
}

LogicalResult ReciprocalOp::buildGradients(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value square = b.create<MulOp>(loc, getResult(), getResult());
  return unary(dx, b.create<NegOp>(loc, b.create<MulOp>(loc, dy[0], square)));
}

LogicalResult ErfOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // d erf(x) = 2/sqrt(pi) * exp(-x^2)
  Location loc = getLoc();
  Value x = getInput();
  Value gaussian = b.create<ExpOp>(loc, b.create<NegOp>(loc, b.create<MulOp>(loc, x, x)));
  Value scaled = b.create<MulOp>(loc, gaussian, scalar(b, loc, x, 2.0 / std::sqrt(M_PI)));
  return unary(dx, b.create<MulOp>(loc, dy[0], scaled));
}

LogicalResult TanhOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value y = getResult();
  Value slope = b.create<SubOp>(loc, scalar(b, loc, y, 1.0), b.create<MulOp>(loc, y, y));
  return unary(dx, b.create<MulOp>(loc, dy[0], slope));
}

LogicalResult SigmoidOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value y = getResult();
  Value slope = b.create<MulOp>(loc, y, b.create<SubOp>(loc, scalar(b, loc, y, 1.0), y));
  return unary(dx, b.create<MulOp>(loc, dy[0], slope));
}

LogicalResult ReluOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value positive = b.create<GreaterOp>(loc, getInput(), scalar(b, loc, getInput(), 0.0));
  return unary(dx, b.create<WhereOp>(loc, positive, dy[0], scalar(b, loc, dy[0], 0.0)));
}

LogicalResult AbsOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // dy * sign(x), 0 at x == 0 as torch.abs.
  Location loc = getLoc();
  Value x = getInput(), grad = dy[0], zero = scalar(b, loc, x, 0.0);
  Value negative = b.create<WhereOp>(loc, b.create<LessOp>(loc, x, zero),
                                     b.create<NegOp>(loc, grad), zero);
  return unary(dx, b.create<WhereOp>(loc, b.create<GreaterOp>(loc, x, zero), grad, negative));
}

LogicalResult SinOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<MulOp>(getLoc(), dy[0], b.create<CosOp>(getLoc(), getInput())));
}

LogicalResult CosOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value sine = b.create<SinOp>(loc, getInput());
  return unary(dx, b.create<NegOp>(loc, b.create<MulOp>(loc, dy[0], sine)));
}

LogicalResult SoftplusOp::buildGradients(OpBuilder &b, ValueRange dy,
                                         SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<MulOp>(getLoc(), dy[0], b.create<SigmoidOp>(getLoc(), getInput())));
}

LogicalResult HardSwishOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  // As torch's hardswish_backward: 0 below -3, dy (x / 3 + 1/2) on [-3, 3], dy above 3.
  Location loc = getLoc();
  Value x = getInput(), grad = dy[0];
  Value slope = b.create<AddOp>(loc, b.create<MulOp>(loc, x, scalar(b, loc, x, 1.0 / 3.0)),
                                scalar(b, loc, x, 0.5));
  Value inside = b.create<WhereOp>(loc, b.create<GreaterOp>(loc, x, scalar(b, loc, x, 3.0)), grad,
                                   b.create<MulOp>(loc, grad, slope));
  return unary(dx, b.create<WhereOp>(loc, b.create<LessOp>(loc, x, scalar(b, loc, x, -3.0)),
                                     scalar(b, loc, grad, 0.0), inside));
}

LogicalResult LeakyReluOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  // As torch: the slope alpha applies at x <= 0.
  Location loc = getLoc();
  Value x = getInput(), grad = dy[0];
  Value scaled = b.create<MulOp>(loc, grad, scalar(b, loc, grad, getAlpha().convertToDouble()));
  return unary(dx, b.create<WhereOp>(loc, b.create<GreaterOp>(loc, x, scalar(b, loc, x, 0.0)),
                                     grad, scaled));
}

LogicalResult EluOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // alpha exp(x) = y + alpha where x <= 0 (torch's convention at 0), 1 above: from the result.
  Location loc = getLoc();
  Value x = getInput(), y = getResult(), grad = dy[0];
  Value slope = b.create<AddOp>(loc, y, scalar(b, loc, y, getAlpha().convertToDouble()));
  return unary(dx, b.create<WhereOp>(loc, b.create<GreaterOp>(loc, x, scalar(b, loc, x, 0.0)),
                                     grad, b.create<MulOp>(loc, grad, slope)));
}

LogicalResult HardSigmoidOp::buildGradients(OpBuilder &b, ValueRange dy,
                                            SmallVectorImpl<Value> &dx) {
  // alpha strictly inside the linear piece (0 < y < 1, as torch's hardsigmoid_backward), from
  // the result.
  Location loc = getLoc();
  Value y = getResult(), grad = dy[0], zero = scalar(b, loc, grad, 0.0);
  Value scaled = b.create<MulOp>(loc, grad, scalar(b, loc, grad, getAlpha().convertToDouble()));
  Value belowOne =
      b.create<WhereOp>(loc, b.create<LessOp>(loc, y, scalar(b, loc, y, 1.0)), scaled, zero);
  return unary(dx, b.create<WhereOp>(loc, b.create<GreaterOp>(loc, y, zero), belowOne, zero));
}

LogicalResult GeluOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<GeluGradOp>(getLoc(), dy[0], getInput(), getApproximateAttr()));
}

LogicalResult BiasGeluOp::buildGradients(OpBuilder &b, ValueRange dy,
                                         SmallVectorImpl<Value> &dx) {
  // The chain's rules composed: gelu's gradient at input + bias, then the add's (the input
  // takes it whole, the bias its sum over the broadcast dimensions, in the bias's own type).
  Location loc = getLoc();
  Value grad = b.create<BiasGeluGradOp>(loc, getInput().getType(), dy[0], getInput(), getBias(),
                                        getApproximateAttr());
  dx.push_back(grad);
  Value biasGrad = unbroadcast(b, loc, grad, tensorType(getBias()).clone(
                                                  tensorType(grad).getElementType()));
  if (biasGrad.getType() != getBias().getType())
    biasGrad = b.create<CastOp>(loc, getBias().getType(), biasGrad);
  dx.push_back(biasGrad);
  return success();
}

LogicalResult ClipOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // As torch.clamp: the gradient passes where min <= x <= max.
  Location loc = getLoc();
  Value grad = dy[0], zero = scalar(b, loc, grad, 0.0);
  if (std::optional<APFloat> max = getMax())
    grad = b.create<WhereOp>(
        loc, b.create<GreaterOp>(loc, getInput(), scalar(b, loc, grad, max->convertToDouble())),
        zero, grad);
  if (std::optional<APFloat> min = getMin())
    grad = b.create<WhereOp>(
        loc, b.create<LessOp>(loc, getInput(), scalar(b, loc, grad, min->convertToDouble())),
        zero, grad);
  return unary(dx, grad);
}

LogicalResult TriluOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<TriluOp>(getLoc(), dy[0], getKAttr(), getUpperAttr()));
}

LogicalResult CastOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  if (!isa<FloatType>(getInput().getType().getElementType()) ||
      !isa<FloatType>(getType().getElementType()))
    return unary(dx, nullptr);
  return unary(dx, b.create<CastOp>(getLoc(), getInput().getType(), dy[0]));
}

LogicalResult DropoutOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  // Dropout is linear in its input with a mask fixed by the seed: the same op again.
  dx.push_back(b.create<DropoutOp>(getLoc(), dy[0].getType(), dy[0], getSalt(), getRatioAttr(),
                                   getSeedAttr()));
  if (getSalt())
    dx.push_back(nullptr);
  return success();
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  dx.push_back(unbroadcast(b, loc, dy[0], getLhs().getType()));
  dx.push_back(unbroadcast(b, loc, dy[0], getRhs().getType()));
  return success();
}

LogicalResult SubOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  dx.push_back(unbroadcast(b, loc, dy[0], getLhs().getType()));
  dx.push_back(unbroadcast(b, loc, b.create<NegOp>(loc, dy[0]), getRhs().getType()));
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  dx.push_back(unbroadcast(b, loc, b.create<MulOp>(loc, dy[0], getRhs()), getLhs().getType()));
  dx.push_back(unbroadcast(b, loc, b.create<MulOp>(loc, dy[0], getLhs()), getRhs().getType()));
  return success();
}

LogicalResult DivOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b.
  Location loc = getLoc();
  Value perDivisor = b.create<DivOp>(loc, dy[0], getRhs());
  dx.push_back(unbroadcast(b, loc, perDivisor, getLhs().getType()));
  Value rhsGrad = b.create<NegOp>(loc, b.create<MulOp>(loc, perDivisor, getResult()));
  dx.push_back(unbroadcast(b, loc, rhsGrad, getRhs().getType()));
  return success();
}

LogicalResult PowOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // As PyTorch: d(a^p)/da = p * a^(p-1), zero where p == 0 (0 * inf would be NaN at a == 0);
  // d(a^p)/dp = a^p * log(a), zero where a == 0 and p >= 0; none when p is a constant.
  Location loc = getLoc();
  Value a = getLhs(), p = getRhs(), zero = scalar(b, loc, a, 0.0);
  Value lowered = b.create<PowOp>(loc, a, b.create<SubOp>(loc, p, scalar(b, loc, p, 1.0)));
  Value lhsGrad = b.create<MulOp>(loc, dy[0], b.create<MulOp>(loc, p, lowered));
  lhsGrad = b.create<WhereOp>(loc, b.create<EqualOp>(loc, p, zero), zero, lhsGrad);
  dx.push_back(unbroadcast(b, loc, lhsGrad, a.getType()));
  if (p.getDefiningOp<ConstantOp>()) {
    dx.push_back(nullptr);
    return success();
  }
  Value rhsGrad =
      b.create<MulOp>(loc, dy[0], b.create<MulOp>(loc, getResult(), b.create<LogOp>(loc, a)));
  Value atZeroBase = b.create<WhereOp>(loc, b.create<EqualOp>(loc, a, zero), zero, rhsGrad);
  rhsGrad = b.create<WhereOp>(loc, b.create<LessOp>(loc, p, zero), rhsGrad, atZeroBase);
  dx.push_back(unbroadcast(b, loc, rhsGrad, p.getType()));
  return success();
}

namespace {

/// The gradients of max (`keepLarger`) or min, as torch.maximum/minimum: to the selected
/// operand, split in half between equal ones.
LogicalResult selectionGradients(OpBuilder &b, Location loc, Value lhs, Value rhs, Value grad,
                                 bool keepLarger, SmallVectorImpl<Value> &dx) {
  Value zero = scalar(b, loc, grad, 0.0);
  Value shared = b.create<WhereOp>(loc, b.create<EqualOp>(loc, lhs, rhs),
                                   b.create<MulOp>(loc, grad, scalar(b, loc, grad, 0.5)), grad);
  auto loses = [&](Value mine, Value other) -> Value {
    if (keepLarger)
      return b.create<LessOp>(loc, mine, other);
    return b.create<GreaterOp>(loc, mine, other);
  };
  dx.push_back(unbroadcast(b, loc, b.create<WhereOp>(loc, loses(lhs, rhs), zero, shared),
                           lhs.getType()));
  dx.push_back(unbroadcast(b, loc, b.create<WhereOp>(loc, loses(rhs, lhs), zero, shared),
                           rhs.getType()));
  return success();
}

} // namespace

LogicalResult MaxOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return selectionGradients(b, getLoc(), getLhs(), getRhs(), dy[0], /*keepLarger=*/true, dx);
}

LogicalResult MinOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return selectionGradients(b, getLoc(), getLhs(), getRhs(), dy[0], /*keepLarger=*/false, dx);
}

LogicalResult PReluOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // As torch's prelu backward: the input's is dy where x > 0 and slope * dy elsewhere; the
  // slope's is x * dy where x <= 0, summed over what it was broadcast to.
  Location loc = getLoc();
  Value x = getLhs(), slope = getRhs(), grad = dy[0], zero = scalar(b, loc, grad, 0.0);
  Value positive = b.create<GreaterOp>(loc, x, scalar(b, loc, x, 0.0));
  Value inputGrad = b.create<WhereOp>(loc, positive, grad, b.create<MulOp>(loc, grad, slope));
  dx.push_back(unbroadcast(b, loc, inputGrad, x.getType()));
  Value slopeGrad = b.create<WhereOp>(loc, positive, zero, b.create<MulOp>(loc, grad, x));
  dx.push_back(unbroadcast(b, loc, slopeGrad, slope.getType()));
  return success();
}

LogicalResult WhereOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Value zero = scalar(b, loc, dy[0], 0.0);
  dx.push_back(nullptr);
  dx.push_back(unbroadcast(b, loc, b.create<WhereOp>(loc, getCondition(), dy[0], zero),
                           getOnTrue().getType()));
  dx.push_back(unbroadcast(b, loc, b.create<WhereOp>(loc, getCondition(), zero, dy[0]),
                           getOnFalse().getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // Y = op(A) @ op(B), op a transpose where flagged. Promote 1-D operands to matrices as
  // numpy does, so one rule covers every case: dop(A) = dY @ op(B)^T, dop(B) = op(A)^T @ dY,
  // summed over broadcast batch dims. Transposes are the products' flags, never copies.
  Location loc = getLoc();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Value a = getLhs(), bm = getRhs(), grad = dy[0];
  SmallVector<int64_t> aShape(tensorType(a).getShape()), bShape(tensorType(bm).getShape());
  SmallVector<int64_t> gradShape(tensorType(grad).getShape());
  if (aShape.size() == 1) {
    aShape.insert(aShape.begin(), 1);
    gradShape.insert(gradShape.end() - (bShape.size() == 1 ? 0 : 1), 1);
  }
  if (bShape.size() == 1) {
    bShape.push_back(1);
    gradShape.push_back(1);
  }
  Value a2 = reshapeTo(b, loc, a, aShape), b2 = reshapeTo(b, loc, bm, bShape);
  Value g2 = reshapeTo(b, loc, grad, gradShape);
  Value da = ta ? product(b, loc, b2, tb, g2, true) : product(b, loc, g2, false, b2, !tb);
  // A batch times one weight matrix (x @ W, a linear layer): the weight's gradient is one
  // product over the stacked rows, as PyTorch computes it, not a per-batch partial gradient
  // summed afterwards.
  Value aRows = a2, gRows = g2;
  if (bShape.size() == 2 && aShape.size() > 2 && !ta) {
    aRows = stackRows(b, loc, a2);
    gRows = stackRows(b, loc, g2);
  }
  Value db =
      tb ? product(b, loc, gRows, true, aRows, ta) : product(b, loc, aRows, !ta, gRows, false);
  da = unbroadcast(b, loc, da, tensorType(a2));
  db = unbroadcast(b, loc, db, tensorType(b2));
  dx.push_back(reshapeTo(b, loc, da, tensorType(a).getShape()));
  dx.push_back(reshapeTo(b, loc, db, tensorType(bm).getShape()));
  return success();
}

LogicalResult MatMulNf4Op::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  // Y = X @ op(W): dX = dY @ op(W)^T, the same packed weight read with the other transpose. The
  // weight is frozen and its storage is not a float: no gradient for it or its absmax.
  auto grad = b.create<MatMulNf4Op>(getLoc(), getLhs().getType(), dy[0], getWeight(),
                                    getAbsmax(), getWeightShape(), !getTransposeRhs());
  dx.push_back(grad.getResult());
  dx.append(getNumOperands() - 1, nullptr);
  return success();
}

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<SoftmaxGradOp>(getLoc(), dy[0], getResult(), getAxisAttr()));
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<LogSoftmaxGradOp>(getLoc(), dy[0], getResult(), getAxisAttr()));
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  Type scaleType = getScale().getType();
  auto grads = b.create<LayerNormGradOp>(getLoc(), TypeRange{getInput().getType(), scaleType, scaleType},
                                         dy[0], getInput(), getScale(), getAxisAttr(),
                                         getEpsilonAttr());
  dx.push_back(grads.getInputGrad());
  dx.push_back(grads.getScaleGrad());
  if (getBias())
    dx.push_back(grads.getBiasGrad());
  return success();
}

LogicalResult AddLayerNormOp::buildGradients(OpBuilder &b, ValueRange dy,
                                             SmallVectorImpl<Value> &dx) {
  // The chain's rules composed: the norm's input gradient (layer_norm_grad at the sum) joins the
  // sum's own readers' gradient, and the add passes the total to both operands.
  Location loc = getLoc();
  Value total = dy[0], scaleGrad, biasGrad;
  if (dy[1]) {
    Type scaleType = getScale().getType();
    auto grads = b.create<LayerNormGradOp>(loc, TypeRange{getSum().getType(), scaleType, scaleType},
                                           dy[1], getSum(), getScale(), getAxisAttr(),
                                           getEpsilonAttr());
    total = total ? b.create<AddOp>(loc, total, grads.getInputGrad()).getResult()
                  : grads.getInputGrad();
    scaleGrad = grads.getScaleGrad();
    biasGrad = grads.getBiasGrad();
  }
  dx.append({total, total, scaleGrad});
  if (getBias())
    dx.push_back(biasGrad);
  return success();
}

LogicalResult RmsNormOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  auto grads = b.create<RmsNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), getScale().getType()}, dy[0], getInput(),
      getScale(), getAxisAttr(), getEpsilonAttr());
  dx.push_back(grads.getInputGrad());
  dx.push_back(grads.getScaleGrad());
  return success();
}

LogicalResult FlashAttentionOp::buildGradients(OpBuilder &b, ValueRange dy,
                                               SmallVectorImpl<Value> &dx) {
  // The logsumexp is the backward's saved statistic, not a model output; a gradient through it
  // would need another term the backward op does not compute.
  if (!dy[0] || dy[1])
    return emitOpError("gradients flow through the output only, not the logsumexp");
  auto grads = b.create<FlashAttentionGradOp>(
      getLoc(), TypeRange{getQuery().getType(), getKey().getType(), getValue().getType()}, dy[0],
      getQuery(), getKey(), getValue(), getOutput(), getLogsumexp(), getMask(), getSalt(),
      getCausalAttr(), getScaleAttr(), getDropoutRatioAttr(), getSeedAttr());
  dx.push_back(grads.getQueryGrad());
  dx.push_back(grads.getKeyGrad());
  dx.push_back(grads.getValueGrad());
  if (getMask())
    dx.push_back(Value()); // masks are constants or computed from the inputs, never trained
  if (getSalt())
    dx.push_back(Value());
  return success();
}

LogicalResult BatchNormOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  Type scaleType = getScale().getType();
  if (getTraining()) {
    auto grads = b.create<BatchNormGradOp>(loc, TypeRange{getInput().getType(), scaleType, scaleType},
                                           dy[0], getInput(), getScale(), getEpsilonAttr());
    dx.append({grads.getInputGrad(), grads.getScaleGrad(), grads.getBiasGrad(), nullptr, nullptr});
    return success();
  }
  // Eval mode is an affine map per channel: y = (x - mean) * scale / sqrt(var + eps) + bias.
  int64_t rank = getInput().getType().getRank();
  Value inverseStd = b.create<ReciprocalOp>(
      loc, b.create<SqrtOp>(loc, b.create<AddOp>(loc, getVar(),
                                                 scalar(b, loc, getVar(), getEpsilon().convertToDouble()))));
  Value factor = perChannel(b, loc, b.create<MulOp>(loc, getScale(), inverseStd), rank);
  dx.push_back(b.create<MulOp>(loc, dy[0], factor));
  Value normalized = b.create<MulOp>(
      loc, b.create<SubOp>(loc, getInput(), perChannel(b, loc, getMean(), rank)),
      perChannel(b, loc, inverseStd, rank));
  auto axes = b.getDenseI64ArrayAttr(allButChannel(rank));
  dx.push_back(b.create<ReduceSumOp>(loc, b.create<MulOp>(loc, dy[0], normalized), axes,
                                     b.getBoolAttr(false)));
  dx.push_back(b.create<ReduceSumOp>(loc, dy[0], axes, b.getBoolAttr(false)));
  dx.append({nullptr, nullptr});
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

namespace {
/// The result gradient broadcast back over the reduced axes.
Value spreadOverAxes(OpBuilder &b, Location loc, Value grad, Value input,
                     ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = tensorType(input).getShape();
  Value kept = reshapeTo(b, loc, grad, keptShape(shape, axes));
  if (tensorType(kept).getShape() == shape)
    return kept;
  return b.create<BroadcastToOp>(loc, tensorType(input).clone(tensorType(grad).getElementType()),
                                 kept);
}
} // namespace

LogicalResult ReduceSumOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  return unary(dx, spreadOverAxes(b, getLoc(), dy[0], getInput(), getAxes()));
}

LogicalResult ReduceMeanOp::buildGradients(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  int64_t count = 1;
  for (int64_t axis : getAxes())
    count *= getInput().getType().getDimSize(axis);
  Value spread = spreadOverAxes(b, loc, dy[0], getInput(), getAxes());
  return unary(dx, b.create<MulOp>(loc, spread, scalar(b, loc, spread, 1.0 / count)));
}

LogicalResult ReduceMaxOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  // As torch.amax: the gradient is shared evenly among the elements equal to the maximum.
  Location loc = getLoc();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  Value maximum = reshapeTo(b, loc, getResult(), keptShape(shape, getAxes()));
  Value isMax = b.create<CastOp>(loc, getInput().getType(),
                                 b.create<EqualOp>(loc, getInput(), maximum));
  Value ties = b.create<ReduceSumOp>(loc, isMax, getAxesAttr(), b.getBoolAttr(true));
  Value share = b.create<DivOp>(loc, reshapeTo(b, loc, dy[0], keptShape(shape, getAxes())), ties);
  return unary(dx, b.create<MulOp>(loc, isMax, share));
}

LogicalResult ReduceProdOp::buildGradients(OpBuilder &b, ValueRange dy,
                                           SmallVectorImpl<Value> &dx) {
  // As torch.prod: the product of the other elements, y / x where x != 0. Where x == 0 that is
  // the product of the nonzero elements if x is the only zero of its slice, else 0.
  Location loc = getLoc();
  Value x = getInput();
  SmallVector<int64_t> kept = keptShape(getInput().getType().getShape(), getAxes());
  Value zero = scalar(b, loc, x, 0.0), one = scalar(b, loc, x, 1.0);
  Value isZero = b.create<EqualOp>(loc, x, zero);
  Value nonzero = b.create<WhereOp>(loc, isZero, one, x);
  BoolAttr keepDims = b.getBoolAttr(true);
  Value zeros = b.create<ReduceSumOp>(loc, b.create<CastOp>(loc, x.getType(), isZero),
                                      getAxesAttr(), keepDims);
  Value othersAtZero = b.create<WhereOp>(
      loc, b.create<EqualOp>(loc, zeros, one),
      b.create<ReduceProdOp>(loc, nonzero, getAxesAttr(), keepDims), zero);
  Value y = reshapeTo(b, loc, getResult(), kept);
  Value others = b.create<WhereOp>(loc, isZero, othersAtZero, b.create<DivOp>(loc, y, nonzero));
  return unary(dx, b.create<MulOp>(loc, reshapeTo(b, loc, dy[0], kept), others));
}

LogicalResult ReduceL2Op::buildGradients(OpBuilder &b, ValueRange dy,
                                         SmallVectorImpl<Value> &dx) {
  // x * dy / y, and 0 where the norm is 0 (torch.norm's convention).
  Location loc = getLoc();
  SmallVector<int64_t> kept = keptShape(getInput().getType().getShape(), getAxes());
  Value y = reshapeTo(b, loc, getResult(), kept), zero = scalar(b, loc, y, 0.0);
  Value perNorm = b.create<WhereOp>(loc, b.create<EqualOp>(loc, y, zero), zero,
                                    b.create<DivOp>(loc, reshapeTo(b, loc, dy[0], kept), y));
  return unary(dx, b.create<MulOp>(loc, getInput(), perNorm));
}

LogicalResult ReduceLogSumExpOp::buildGradients(OpBuilder &b, ValueRange dy,
                                                SmallVectorImpl<Value> &dx) {
  // dy * softmax(x) = dy * exp(x - y), from the result.
  Location loc = getLoc();
  SmallVector<int64_t> kept = keptShape(getInput().getType().getShape(), getAxes());
  Value weights =
      b.create<ExpOp>(loc, b.create<SubOp>(loc, getInput(), reshapeTo(b, loc, getResult(), kept)));
  return unary(dx, b.create<MulOp>(loc, reshapeTo(b, loc, dy[0], kept), weights));
}

//===----------------------------------------------------------------------===//
// Scans
//===----------------------------------------------------------------------===//

LogicalResult CumSumOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  // Element j feeds the sums at and after it (before it, reversed): the cumulative sum of dy
  // in the other direction, exclusive when the forward one is.
  return unary(dx, b.create<CumSumOp>(getLoc(), dy[0], getAxisAttr(), getExclusiveAttr(),
                                      b.getBoolAttr(!getReverse())));
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

LogicalResult TopKOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  if (!dy[0] || !isa<FloatType>(getInput().getType().getElementType())) {
    dx.push_back(nullptr);
    return success();
  }
  // Each selected value's gradient goes back to its element: over the input flattened to one
  // axis, element (o, j, i) of [outer, k, inner] sits at o * n * inner + index * inner + i, and
  // gather_grad scatters the flattened gradient there (top_k's indices along a row are distinct).
  Location loc = getLoc();
  ArrayRef<int64_t> shape = getInput().getType().getShape();
  int64_t axis = getAxis(), n = shape[axis], k = getK(), outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
    inner *= shape[d];
  SmallVector<int64_t> rowStarts;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < inner; ++i)
        rowStarts.push_back(o * n * inner + i);
  auto flatIndexType = RankedTensorType::get({outer * k * inner}, b.getI64Type());
  Value starts = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(flatIndexType, ArrayRef<int64_t>(rowStarts)));
  Value stride = b.create<ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()), inner));
  Value scaled = b.create<MulOp>(loc, reshapeTo(b, loc, getIndices(), {outer * k * inner}), stride);
  Value flatIndices = b.create<AddOp>(loc, scaled, starts);
  Value flatGrad = reshapeTo(b, loc, dy[0], {outer * k * inner});
  Value scattered =
      b.create<GatherGradOp>(loc, getInput().getType().clone(ArrayRef<int64_t>{outer * n * inner}),
                             flatGrad, flatIndices, b.getI64IntegerAttr(0));
  return unary(dx, reshapeTo(b, loc, scattered, shape));
}

//===----------------------------------------------------------------------===//
// Layout and indexing
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::buildGradients(OpBuilder &b, ValueRange dy,
                                          SmallVectorImpl<Value> &dx) {
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  return unary(dx, b.create<TransposeOp>(getLoc(), dy[0], b.getDenseI64ArrayAttr(inverse)));
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  return unary(dx, reshapeTo(b, getLoc(), dy[0], getInput().getType().getShape()));
}

LogicalResult BroadcastToOp::buildGradients(OpBuilder &b, ValueRange dy,
                                            SmallVectorImpl<Value> &dx) {
  return unary(dx, unbroadcast(b, getLoc(), dy[0], getInput().getType()));
}

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ValueRange dy,
                                       SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  int64_t axis = getAxis(), offset = 0;
  ArrayRef<int64_t> shape = getType().getShape();
  for (Value input : getInputs()) {
    SmallVector<int64_t> starts(shape.size(), 0), limits(shape), steps(shape.size(), 1);
    int64_t size = tensorType(input).getDimSize(axis);
    starts[axis] = offset;
    limits[axis] = offset + size;
    offset += size;
    dx.push_back(b.create<SliceOp>(loc, dy[0], b.getDenseI64ArrayAttr(starts),
                                   b.getDenseI64ArrayAttr(limits), b.getDenseI64ArrayAttr(steps)));
  }
  return success();
}

LogicalResult SplitOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  SmallVector<Value> pieces;
  for (auto [grad, result] : llvm::zip(dy, getResults()))
    pieces.push_back(grad ? grad : zerosLike(b, loc, result.getType()));
  return unary(dx, b.create<ConcatOp>(loc, pieces, getAxisAttr()));
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<SliceGradOp>(getLoc(), getInput().getType(), dy[0], getStartsAttr(),
                                         getLimitsAttr(), getStepsAttr()));
}

LogicalResult GatherOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  if (!isa<FloatType>(getData().getType().getElementType())) {
    dx.append({nullptr, nullptr});
    return success();
  }
  Value grad = b.create<GatherGradOp>(getLoc(), getData().getType(), dy[0], getIndices(),
                                      getAxisAttr());
  if (std::optional<int64_t> paddingRow = getPaddingIdx())
    grad = b.create<MulOp>(getLoc(), grad, paddingRowMask(b, getLoc(), getData(), *paddingRow));
  dx.push_back(grad);
  dx.push_back(nullptr);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::buildGradients(OpBuilder &b, ValueRange dy, SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  dx.push_back(b.create<ConvGradInputOp>(loc, getInput().getType(), dy[0], getWeight(),
                                         getStridesAttr(), getPadsAttr(), getDilationsAttr(),
                                         getGroupAttr()));
  dx.push_back(b.create<ConvGradWeightOp>(loc, getWeight().getType(), dy[0], getInput(),
                                          getStridesAttr(), getPadsAttr(), getDilationsAttr(),
                                          getGroupAttr()));
  if (getBias()) {
    int64_t rank = getType().getRank();
    dx.push_back(b.create<ReduceSumOp>(loc, dy[0], b.getDenseI64ArrayAttr(allButChannel(rank)),
                                       b.getBoolAttr(false)));
  }
  return success();
}

/// conv_grad_input(g, w) is the transpose of conv(., w): its input gradient is the convolution
/// of the result gradient, its weight gradient conv_grad_weight with the roles of the forward
/// output (g) and input (the result gradient) as in the convolution it transposes.
LogicalResult ConvGradInputOp::buildGradients(OpBuilder &b, ValueRange dy,
                                              SmallVectorImpl<Value> &dx) {
  Location loc = getLoc();
  dx.push_back(b.create<ConvOp>(loc, dy[0], getWeight(), Value(), getStridesAttr(), getPadsAttr(),
                                getDilationsAttr(), getGroupAttr()));
  dx.push_back(b.create<ConvGradWeightOp>(loc, getWeight().getType(), getGrad(), dy[0],
                                          getStridesAttr(), getPadsAttr(), getDilationsAttr(),
                                          getGroupAttr()));
  return success();
}

LogicalResult MaxPoolOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<MaxPoolGradOp>(getLoc(), getInput().getType(), dy[0], getInput(),
                                           getKernelShapeAttr(), getStridesAttr(), getPadsAttr(),
                                           getDilationsAttr(), getCeilModeAttr()));
}

LogicalResult AvgPoolOp::buildGradients(OpBuilder &b, ValueRange dy,
                                        SmallVectorImpl<Value> &dx) {
  return unary(dx, b.create<AvgPoolGradOp>(getLoc(), getInput().getType(), dy[0],
                                           getKernelShapeAttr(), getStridesAttr(), getPadsAttr(),
                                           getDilationsAttr(), getCeilModeAttr(),
                                           getCountIncludePadAttr()));
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::buildGradients(OpBuilder &b, ValueRange dy,
                                             SmallVectorImpl<Value> &dx) {
  dx.push_back(b.create<CrossEntropyGradOp>(getLoc(), getLogits().getType(), dy[0], getLogits(),
                                            getLabels(), getIgnoreIndexAttr()));
  dx.push_back(nullptr);
  return success();
}

LogicalResult LinearCrossEntropyOp::buildGradients(OpBuilder &b, ValueRange dy,
                                                   SmallVectorImpl<Value> &dx) {
  // As flash_attention's: the logsumexp is the backward's saved statistic, not a model output.
  if (!dy[0] || dy[1])
    return emitOpError("gradients flow through the loss only, not the logsumexp");
  SmallVector<Type> types = {getHidden().getType(), getWeight().getType()};
  if (getBias())
    types.push_back(getBias().getType());
  auto grads = b.create<LinearCrossEntropyGradOp>(
      getLoc(), types, dy[0], getHidden(), getWeight(), getLabels(), getLogsumexp(), getBias(),
      getIgnoreIndexAttr(), getTransposeWeightAttr());
  dx.append({grads.getHiddenGrad(), grads.getWeightGrad(), nullptr});
  if (getBias())
    dx.push_back(grads.getBiasGrad());
  return success();
}
