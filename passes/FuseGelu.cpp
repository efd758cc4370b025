//===- FuseGelu.cpp - recognize decomposed GELU ---------------------------===//
//
// Before:
//   %0 = memc.div %x, %sqrt2        %1 = memc.erf %0        %2 = memc.add %1, %one
//   %3 = memc.mul %x, %2            %4 = memc.mul %3, %half
// After:
//   %4 = memc.gelu %x {approximate = "none"}
//
// The matcher flattens products into (scalar scale, non-constant factors) so that every
// association and operand order torch.onnx.export produces is the same product.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/ProductMatching.h"
#include "passes/ScalarConstants.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace memc {
#define GEN_PASS_DEF_FUSEGELU
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

bool near(double actual, double expected) {
  return std::abs(actual - expected) <= 1e-6 * std::abs(expected);
}

/// Matches `1 + op(arg)` in either order and returns op's operation.
template <typename OpT>
OpT matchOnePlus(Value value) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return nullptr;
  for (auto [one, other] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
    std::optional<double> scalar = splatScalar(one);
    if (scalar && *scalar == 1.0)
      if (auto op = other.template getDefiningOp<OpT>())
        return op;
  }
  return nullptr;
}

/// True if `value` is `x / sqrt(2)`.
bool isErfArgument(Value value, Value x) {
  Product product = productOf(value);
  return product.factors.size() == 1 && product.factors[0] == x &&
         near(product.scale, 1.0 / std::sqrt(2.0));
}

/// True if `value` is `sqrt(2/pi) * (x + 0.044715 * x^3)`.
bool isTanhArgument(Value value, Value x) {
  Product outer = productOf(value);
  if (outer.factors.size() != 1 || !near(outer.scale, std::sqrt(2.0 / M_PI)))
    return false;
  auto add = outer.factors[0].getDefiningOp<AddOp>();
  if (!add)
    return false;
  for (auto [linear, cubic] : {std::pair(add.getLhs(), add.getRhs()),
                               std::pair(add.getRhs(), add.getLhs())}) {
    Product cube = productOf(cubic);
    if (linear == x && near(cube.scale, 0.044715) && cube.factors.size() == 3 &&
        llvm::all_of(cube.factors, [&](Value f) { return f == x; }))
      return true;
  }
  return false;
}

/// Rooted at the outermost multiplication of a GELU: `0.5 * x * (1 + erf|tanh(...))`.
struct FuseGeluPattern : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp root, PatternRewriter &rewriter) const override {
    Product product = productOf(root.getResult());
    if (product.factors.size() != 2 || !near(product.scale, 0.5))
      return failure();
    for (auto [x, gate] : {std::pair(product.factors[0], product.factors[1]),
                           std::pair(product.factors[1], product.factors[0])}) {
      if (x.getType() != root.getType())
        continue;
      StringRef approximate;
      if (auto erf = matchOnePlus<ErfOp>(gate); erf && isErfArgument(erf.getInput(), x))
        approximate = "none";
      else if (auto tanh = matchOnePlus<TanhOp>(gate); tanh && isTanhArgument(tanh.getInput(), x))
        approximate = "tanh";
      else
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(root, x, rewriter.getStringAttr(approximate));
      return success();
    }
    return failure();
  }
};

struct FuseGeluPass : memc::impl::FuseGeluBase<FuseGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseGeluPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void memc::populateFuseGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseGeluPattern>(patterns.getContext());
}
