//===- FuseRmsNorm.cpp - recognize decomposed RMS norm --------------------===//
//
// Before (torch.onnx.export of Llama's RMSNorm, opsets 14-18):
//   %0 = memc.pow %x, %two                 %1 = memc.reduce_mean %0 {axes = [last], keepdims}
//   %2 = memc.add %1, %eps                 %3 = memc.sqrt %2
//   %4 = memc.div %one, %3                 %5 = memc.mul %x, %4
//   %6 = memc.mul %5, %weight
// After:
//   %6 = memc.rms_norm %x, %weight {axis = last, epsilon = eps}
//
// The inverse root may also be `reciprocal(sqrt(.))` or `pow(., -0.5)`, or a division
// `x / sqrt(.)`; the square `x * x`; products in any association and operand order
// (ProductMatching.h). The weight must have the shape of x's last dimension: other products
// (no weight, a weight broadcast over more than the last axis) stay as they are.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/ProductMatching.h"
#include "passes/ScalarConstants.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace memc {
#define GEN_PASS_DEF_FUSERMSNORM
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

/// The radicand `s` of `1 / sqrt(s)` in one of the forms exporters write it, or null.
Value inverseRootRadicand(Value value) {
  if (auto reciprocal = value.getDefiningOp<ReciprocalOp>())
    if (auto sqrt = reciprocal.getInput().getDefiningOp<SqrtOp>())
      return sqrt.getInput();
  if (auto div = value.getDefiningOp<DivOp>()) {
    std::optional<double> numerator = splatScalar(div.getLhs());
    if (numerator && *numerator == 1.0)
      if (auto sqrt = div.getRhs().getDefiningOp<SqrtOp>())
        return sqrt.getInput();
  }
  if (auto pow = value.getDefiningOp<PowOp>()) {
    std::optional<double> exponent = splatScalar(pow.getRhs());
    if (exponent && *exponent == -0.5)
      return pow.getLhs();
  }
  return nullptr;
}

/// A product split into its one inverse root and the other factors.
struct ScaledProduct {
  Value radicand;
  SmallVector<Value, 3> factors;
};

/// Splits `value`'s product; a factor `a / sqrt(s)` gives a's factors and the root of s.
std::optional<ScaledProduct> splitInverseRoot(Value value) {
  Product product = productOf(value);
  if (product.scale != 1.0)
    return std::nullopt;
  ScaledProduct split;
  for (Value factor : product.factors) {
    Value radicand = inverseRootRadicand(factor);
    SmallVector<Value, 3> numerator;
    if (auto div = factor.getDefiningOp<DivOp>(); !radicand && div) {
      if (auto sqrt = div.getRhs().getDefiningOp<SqrtOp>()) {
        radicand = sqrt.getInput();
        Product dividend = productOf(div.getLhs());
        if (dividend.scale != 1.0)
          return std::nullopt;
        numerator = dividend.factors;
      }
    }
    if (!radicand) {
      split.factors.push_back(factor);
      continue;
    }
    if (split.radicand)
      return std::nullopt; // two roots: not one norm
    split.radicand = radicand;
    split.factors.append(numerator.begin(), numerator.end());
  }
  if (!split.radicand)
    return std::nullopt;
  return split;
}

/// The x and epsilon of `mean(x^2, last axis, keepdims) + epsilon`, in either order.
std::optional<std::pair<Value, double>> meanSquarePlusEpsilon(Value radicand) {
  auto add = radicand.getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  for (auto [meanValue, epsilonValue] :
       {std::pair(add.getLhs(), add.getRhs()), std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> epsilon = splatScalar(epsilonValue);
    auto mean = meanValue.getDefiningOp<ReduceMeanOp>();
    if (!epsilon || !(*epsilon >= 0.0) || !mean || !mean.getKeepdims())
      continue;
    auto type = cast<RankedTensorType>(mean.getInput().getType());
    if (mean.getAxes() != ArrayRef<int64_t>{type.getRank() - 1})
      continue;
    Product square = productOf(mean.getInput());
    if (square.scale == 1.0 && square.factors.size() == 2 && square.factors[0] == square.factors[1])
      return std::pair(square.factors[0], *epsilon);
  }
  return std::nullopt;
}

/// Rooted at the product with the weight: `x * (1 / sqrt(mean(x^2) + eps)) * weight`.
struct FuseRmsNormPattern : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root, PatternRewriter &rewriter) const override {
    std::optional<ScaledProduct> split = splitInverseRoot(root.getResult());
    if (!split || split->factors.size() != 2)
      return failure();
    std::optional<std::pair<Value, double>> statistic = meanSquarePlusEpsilon(split->radicand);
    if (!statistic)
      return failure();
    auto [x, epsilon] = *statistic;
    auto type = cast<RankedTensorType>(x.getType());
    if (type != root.getType() || type.getRank() == 0)
      return failure();
    for (auto [input, weight] : {std::pair(split->factors[0], split->factors[1]),
                                 std::pair(split->factors[1], split->factors[0])}) {
      auto weightType = dyn_cast<RankedTensorType>(weight.getType());
      if (input != x || !weightType ||
          weightType.getShape() != type.getShape().take_back() ||
          weightType.getElementType() != type.getElementType())
        continue;
      rewriter.replaceOpWithNewOp<RmsNormOp>(root, x, weight,
                                             rewriter.getI64IntegerAttr(type.getRank() - 1),
                                             rewriter.getF64FloatAttr(epsilon));
      return success();
    }
    return failure();
  }
};

struct FuseRmsNormPass : memc::impl::FuseRmsNormBase<FuseRmsNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseRmsNormPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void memc::populateFuseRmsNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseRmsNormPattern>(patterns.getContext());
}
