//===- FuseAddLayerNorm.cpp - a residual add into its layer norm ----------===//
//
// Before (a transformer block's residual and the norm after it):
//   %h = memc.add %x, %r            %y = memc.layer_norm %h, %g, %b
// After:
//   %h, %y = memc.add_layer_norm %x, %r, %g, %b
//
// The fused op takes the add's place, so every other reader of the sum (the next residual in a
// pre-norm block) still comes after it; the norm's scale and bias must be defined before it.
// Such a shared sum stays unfused with fuse-shared-sums=false (remat would recompute the norm
// from the kept sum; the fused op needs both addends).
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace memc {
#define GEN_PASS_DEF_FUSEADDLAYERNORM
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

/// True if `value` is available where `op` is: a block argument of its block or a value
/// defined before it there.
bool availableAt(Value value, Operation *op) {
  if (!value)
    return true;
  if (auto argument = dyn_cast<BlockArgument>(value))
    return argument.getOwner() == op->getBlock();
  Operation *definition = value.getDefiningOp();
  return definition->getBlock() == op->getBlock() && definition->isBeforeInBlock(op);
}

struct FuseAddLayerNormPattern : OpRewritePattern<LayerNormOp> {
  FuseAddLayerNormPattern(MLIRContext *context, bool fuseSharedSums)
      : OpRewritePattern(context), fuseSharedSums(fuseSharedSums) {}

  LogicalResult matchAndRewrite(LayerNormOp norm, PatternRewriter &rewriter) const override {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add || (!fuseSharedSums && !add->hasOneUse()) || add.getLhs().getType() != add.getType() ||
        add.getRhs().getType() != add.getType() || !availableAt(norm.getScale(), add) ||
        !availableAt(norm.getBias(), add))
      return failure();
    rewriter.setInsertionPoint(add);
    auto fused = rewriter.create<AddLayerNormOp>(norm.getLoc(), add.getLhs(), add.getRhs(),
                                                 norm.getScale(), norm.getBias(),
                                                 norm.getAxisAttr(), norm.getEpsilonAttr());
    rewriter.replaceOp(norm, fused.getOutput());
    rewriter.replaceOp(add, fused.getSum());
    return success();
  }

  bool fuseSharedSums;
};

struct FuseAddLayerNormPass : memc::impl::FuseAddLayerNormBase<FuseAddLayerNormPass> {
  using FuseAddLayerNormBase::FuseAddLayerNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAddLayerNormPatterns(patterns, fuseSharedSums);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void memc::populateFuseAddLayerNormPatterns(RewritePatternSet &patterns, bool fuseSharedSums) {
  patterns.add<FuseAddLayerNormPattern>(patterns.getContext(), fuseSharedSums);
}
