// RUN: memc-opt --memc-build-train-step --canonicalize --split-input-file %s | FileCheck %s

// Dropout in a training step mixes a per-step salt (input memc.salt) into its mask, and the
// backward pass draws the same mask: the same op with the same seed and salt.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[SALT:[a-z0-9]+]]: tensor<i64> {memc.input = "memc.salt"}
// CHECK: memc.dropout %{{.*}} salt %[[SALT]] {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4x8xf32>, tensor<i64>
// CHECK: memc.dropout %{{.*}} salt %[[SALT]] {ratio = 1.000000e-01 : f64, seed = 7 : i64} : tensor<4x8xf32>, tensor<i64>
func.func @forward(%x: tensor<4x8xf32> {memc.input = "x"},
                   %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"},
                   %v: tensor<8x3xf32> {memc.param = "v", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = memc.dropout %0 {ratio = 0.1 : f64, seed = 7 : i64} : tensor<4x8xf32>
  %2 = memc.matmul %1, %v : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %2 : tensor<4x3xf32>
}

// -----

// A fused attention's dropout takes the same salt, and its backward draws the mask again with it.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[SALT:[a-z0-9]+]]: tensor<i64> {memc.input = "memc.salt"}
// CHECK: memc.flash_attention %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} salt %[[SALT]] {causal = true, dropout_ratio = 1.000000e-01 : f64, scale = 5.000000e-01 : f64, seed = 4 : i64}
// CHECK: memc.flash_attention_grad {{.*}} salt %[[SALT]] {causal = true, dropout_ratio = 1.000000e-01 : f64, scale = 5.000000e-01 : f64, seed = 4 : i64}
func.func @forward(%q: tensor<1x2x8x4xf32> {memc.param = "q", memc.param_kind = "parameter"})
    -> (tensor<1x2x8x4xf32> {memc.output = "y"}) {
  %o, %lse = memc.flash_attention %q, %q, %q
      {causal = true, dropout_ratio = 0.1 : f64, scale = 0.5 : f64, seed = 4 : i64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return %o : tensor<1x2x8x4xf32>
}
