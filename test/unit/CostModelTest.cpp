//===- CostModelTest.cpp - FLOPs of the ops remat prices by their formula -===//
//
// Attention's cost is what FlashAttention counts, not what the elementwise default would give
// (a few FLOPs per output element): remat compares it with the bytes it would keep, so a wrong
// count would make it recompute attention as if it were free, or never.
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
  ASSERT_EQ(ops.size(), 3u);
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
}

} // namespace
