//===- FuseBiasGelu.cpp - a linear layer's bias add into its GELU ---------===//
//
// Before (an MLP's first linear layer and its activation, as torch.onnx.export writes them):
//   %h = memc.matmul %x, %w        %s = memc.add %h, %b        %y = memc.gelu %s
// After:
//   %h = memc.matmul %x, %w        %y = memc.bias_gelu %h, %b
//
// The sum is never stored: the forward reads h and b and writes y, and the backward saves h (the
// matmul's output) where it saved the sum. An add whose sum has other readers stays.
//
//===----------------------------------------------------------------------===//
#include "passes/BiasAddMatching.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace memc {
#define GEN_PASS_DEF_FUSEBIASGELU
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

struct FuseBiasGeluPattern : OpRewritePattern<GeluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GeluOp gelu, PatternRewriter &rewriter) const override {
    std::optional<BiasAdd> biasAdd = matchBiasAdd(gelu.getInput());
    if (!biasAdd || !biasAdd->add->hasOneUse())
      return failure();
    rewriter.replaceOpWithNewOp<BiasGeluOp>(gelu, biasAdd->data, biasAdd->bias,
                                            gelu.getApproximateAttr());
    rewriter.eraseOp(biasAdd->add);
    return success();
  }
};

struct FuseBiasGeluPass : memc::impl::FuseBiasGeluBase<FuseBiasGeluPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseBiasGeluPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void memc::populateFuseBiasGeluPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseBiasGeluPattern>(patterns.getContext());
}
