//===- CostModelTest.cpp - FLOPs of the ops remat prices by their formula -===//
//
// Attention's cost is what FlashAttention counts, not what the elementwise default would give
// (a few FLOPs per output element): remat compares it with the bytes it would keep, so a wrong
// count would make it recompute attention as if it were free, or never. The fused LM head and
// loss likewise: its only result of size is the logsumexp.
//
//===----------------------------------------------------------------------===//
#include "dialects/memc/CostModel.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace memc;

namespace {

constexpr const char *kAttention = R"mlir(
func.func @f(%q: tensor<2x4x128x32xf32>, %k: tensor<2x2x128x32xf32>, %v: tensor<2x2x128x16xf32>,
             %do: tensor<2x4x128x16xf32>) {
  %o, %lse = memc.flash_attention %q, %k, %v {causal = false, scale = 0.125 : f64}
      : (tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x16xf32>)
      -> (tensor<2x4x128x16xf32>, tensor<2x4x128xf32>)
  %co, %clse = memc.flash_attention %q, %k, %v {causal = true, scale = 0.125 : f64}
      : (tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x16xf32>)
      -> (tensor<2x4x128x16xf32>, tensor<2x4x128xf32>)
  %dq, %dk, %dv = memc.flash_attention_grad %do, %q, %k, %v, %o, %lse
      {causal = false, scale = 0.125 : f64}
      : (tensor<2x4x128x16xf32>, tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>,
         tensor<2x2x128x16xf32>, tensor<2x4x128x16xf32>, tensor<2x4x128xf32>)
      -> (tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x16xf32>)
  %xo, %xlse = memc.flash_attention %q, %k, %v
      {causal = false, dropout_ratio = 0.1 : f64, scale = 0.125 : f64, seed = 1 : i64}
      : (tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x16xf32>)
      -> (tensor<2x4x128x16xf32>, tensor<2x4x128xf32>)
  %xdq, %xdk, %xdv = memc.flash_attention_grad %do, %q, %k, %v, %xo, %xlse
      {causal = false, dropout_ratio = 0.1 : f64, scale = 0.125 : f64, seed = 1 : i64}
      : (tensor<2x4x128x16xf32>, tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>,
         tensor<2x2x128x16xf32>, tensor<2x4x128x16xf32>, tensor<2x4x128xf32>)
      -> (tensor<2x4x128x32xf32>, tensor<2x2x128x32xf32>, tensor<2x2x128x16xf32>)
  return
}
)mlir";

TEST(CostModel, AttentionCountsItsProductsPerQueryKeyPair) {
  mlir::MLIRContext context;
  context.loadDialect<MemcDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kAttention, &context);
  ASSERT_TRUE(module);
  std::vector<mlir::Operation *> ops;
  module->walk([&](mlir::Operation *op) {
    if (mlir::isa<FlashAttentionOp, FlashAttentionGradOp>(op))
      ops.push_back(op);
  });
  ASSERT_EQ(ops.size(), 5u);
  const double pairs = 2.0 * 4 * 128 * 128, d = 32, dv = 16;
  OpCost full = estimateOpCost(ops[0]), causal = estimateOpCost(ops[1]),
         backward = estimateOpCost(ops[2]);
  // Scores (2 D per pair), probabilities @ v (2 Dv) and the softmax (5).
  EXPECT_DOUBLE_EQ(full.flops, pairs * (2 * d + 2 * dv + 5));
  // Causal: query i sees i + 1 of the 128 keys, 129/256 of the pairs.
  EXPECT_DOUBLE_EQ(causal.flops, full.flops * 129.0 / 256.0);
  // Five products: scores again, dV, dP, dQ, dK.
  EXPECT_DOUBLE_EQ(backward.flops, pairs * (6 * d + 4 * dv + 5));
  // Bytes: q, k, v read, output and logsumexp written; never a [T, T] tensor.
  double qkv = (2 * 4 * 128 * 32 + 2 * 2 * 128 * 32 + 2 * 2 * 128 * 16) * 4.0;
  EXPECT_DOUBLE_EQ(full.bytes, qkv + (2 * 4 * 128 * 16 + 2 * 4 * 128) * 4.0);
  // Dropout draws its mask per pair as memc.dropout per element (4), the backward in both passes.
  EXPECT_DOUBLE_EQ(estimateOpCost(ops[3]).flops, full.flops + pairs * 4);
  EXPECT_DOUBLE_EQ(estimateOpCost(ops[4]).flops, backward.flops + pairs * 8);
}

constexpr const char *kLinearCrossEntropy = R"mlir(
func.func @f(%h: tensor<2x64x32xf32>, %w: tensor<1000x32xf32>, %labels: tensor<2x64xi64>,
             %dloss: tensor<f32>) {
  %loss, %lse = memc.linear_cross_entropy %h, %w, %labels {ignore_index = -100 : i64, transpose_weight}
      : (tensor<2x64x32xf32>, tensor<1000x32xf32>, tensor<2x64xi64>) -> (tensor<f32>, tensor<2x64xf32>)
  %dh, %dw = memc.linear_cross_entropy_grad %dloss, %h, %w, %labels, %lse
      {ignore_index = -100 : i64, transpose_weight}
      : (tensor<f32>, tensor<2x64x32xf32>, tensor<1000x32xf32>, tensor<2x64xi64>, tensor<2x64xf32>)
      -> (tensor<2x64x32xf32>, tensor<1000x32xf32>)
  return
}
)mlir";

TEST(CostModel, LinearCrossEntropyCountsItsProductsPerLogit) {
  mlir::MLIRContext context;
  context.loadDialect<MemcDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kLinearCrossEntropy, &context);
  ASSERT_TRUE(module);
  std::vector<mlir::Operation *> ops;
  module->walk([&](mlir::Operation *op) {
    if (mlir::isa<LinearCrossEntropyOp, LinearCrossEntropyGradOp>(op))
      ops.push_back(op);
  });
  ASSERT_EQ(ops.size(), 2u);
  const double logits = 2.0 * 64 * 1000, d = 32;
  // The product (2 D per logit) and the online logsumexp (5); backward, the product twice (one
  // per pass), dH and dW (2 D each) and the softmax gradient (10).
  EXPECT_DOUBLE_EQ(estimateOpCost(ops[0]).flops, logits * (2 * d + 5));
  EXPECT_DOUBLE_EQ(estimateOpCost(ops[1]).flops, logits * (8 * d + 10));
  // Bytes: hidden, weight and labels read, the loss and logsumexp written; no logits.
  double read = (2 * 64 * 32 + 1000 * 32) * 4.0 + 2 * 64 * 8.0;
  EXPECT_DOUBLE_EQ(estimateOpCost(ops[0]).bytes, read + 4.0 + 2 * 64 * 4.0);
}

} // namespace
