// RUN: memc-opt --memc-fuse-loss="remark-unfused=true" --split-input-file --verify-diagnostics %s | FileCheck %s

// A tied head (the embedding read transposed in place): the product and the loss become one op.
// CHECK-LABEL: func @tied_head
// CHECK-SAME: (%[[H:.*]]: tensor<2x16x64xf32>, %[[W:.*]]: tensor<1000x64xf32>, %[[L:.*]]: tensor<2x16xi64>)
// CHECK-SAME: memc.loss_fused = 1 : i64, memc.loss_logits_bytes_avoided = 128000 : i64, memc.loss_unfused = []
// CHECK-NEXT: %[[LOSS:.*]], %{{.*}} = memc.linear_cross_entropy %[[H]], %[[W]], %[[L]] {ignore_index = -100 : i64, transpose_weight} : (tensor<2x16x64xf32>, tensor<1000x64xf32>, tensor<2x16xi64>) -> (tensor<f32>, tensor<2x16xf32>)
// CHECK-NEXT: return %[[LOSS]]
func.func @tied_head(%h: tensor<2x16x64xf32>, %w: tensor<1000x64xf32>, %labels: tensor<2x16xi64>) -> tensor<f32> {
  %logits = memc.matmul %h, %w {transpose_rhs} : (tensor<2x16x64xf32>, tensor<1000x64xf32>) -> tensor<2x16x1000xf32>
  %loss = memc.cross_entropy %logits, %labels {ignore_index = -100 : i64} : (tensor<2x16x1000xf32>, tensor<2x16xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// An untied [D, V] weight and the exporter's view(-1, V): the hidden states are reshaped to the
// labels' rows instead.
// CHECK-LABEL: func @untied_head_through_reshape
// CHECK-SAME: (%[[H:.*]]: tensor<2x16x64xf32>, %[[W:.*]]: tensor<64x1000xf32>, %[[L:.*]]: tensor<32xi64>)
// CHECK-NEXT: %[[R:.*]] = memc.reshape %[[H]] : tensor<2x16x64xf32> -> tensor<32x64xf32>
// CHECK-NEXT: %[[LOSS:.*]], %{{.*}} = memc.linear_cross_entropy %[[R]], %[[W]], %[[L]] {ignore_index = 7 : i64} : (tensor<32x64xf32>, tensor<64x1000xf32>, tensor<32xi64>) -> (tensor<f32>, tensor<32xf32>)
// CHECK-NOT: memc.matmul
// CHECK-NEXT: return %[[LOSS]]
func.func @untied_head_through_reshape(%h: tensor<2x16x64xf32>, %w: tensor<64x1000xf32>, %labels: tensor<32xi64>) -> tensor<f32> {
  %logits = memc.matmul %h, %w : (tensor<2x16x64xf32>, tensor<64x1000xf32>) -> tensor<2x16x1000xf32>
  %flat = memc.reshape %logits : tensor<2x16x1000xf32> -> tensor<32x1000xf32>
  %loss = memc.cross_entropy %flat, %labels {ignore_index = 7 : i64} : (tensor<32x1000xf32>, tensor<32xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// The precision policy's bf16 logits, widened to f32 for the loss: both tensors are avoided and
// the fused op computes from the bf16 operands in f32.
// CHECK-LABEL: func @bf16_head
// CHECK-SAME: memc.loss_logits_bytes_avoided = 192 : i64
// CHECK-NEXT: %[[LOSS:.*]], %{{.*}} = memc.linear_cross_entropy %arg0, %arg1, %arg2 {ignore_index = -100 : i64, transpose_weight} : (tensor<4x8xbf16>, tensor<8x8xbf16>, tensor<4xi64>)
// CHECK-NOT: memc.cast
func.func @bf16_head(%h: tensor<4x8xbf16>, %w: tensor<8x8xbf16>, %labels: tensor<4xi64>) -> tensor<f32> {
  %logits = memc.matmul %h, %w {transpose_rhs} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %wide = memc.cast %logits : tensor<4x8xbf16> -> tensor<4x8xf32>
  %loss = memc.cross_entropy %wide, %labels {ignore_index = -100 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Logits the function also returns stay: fusing would compute them twice.
// CHECK-LABEL: func @logits_also_an_output
// CHECK-SAME: memc.loss_fused = 0 : i64
// CHECK-SAME: memc.loss_unfused = {{\[\[}}"loss", "the logits are also an output of the function"]]
// CHECK: memc.matmul
// CHECK: memc.cross_entropy
// expected-remark @below {{loss not fused at loss: the logits are also an output of the function}}
func.func @logits_also_an_output(%h: tensor<4x8xf32>, %w: tensor<8x5xf32>, %labels: tensor<4xi64>) -> (tensor<f32>, tensor<4x5xf32>) {
  %logits = memc.matmul %h, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %loss = memc.cross_entropy %logits, %labels {ignore_index = -100 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32> loc("loss")
  return %loss, %logits : tensor<f32>, tensor<4x5xf32>
}

// -----

// Logits another op reads stay.
// CHECK-LABEL: func @logits_read_elsewhere
// CHECK-SAME: memc.loss_unfused = {{\[\[}}"cross_entropy", "the logits are also read by memc.reduce_max"]]
// CHECK: memc.cross_entropy
// expected-remark @below {{loss not fused at cross_entropy: the logits are also read by memc.reduce_max}}
func.func @logits_read_elsewhere(%h: tensor<4x8xf32>, %w: tensor<8x5xf32>, %labels: tensor<4xi64>) -> (tensor<f32>, tensor<4xf32>) {
  %logits = memc.matmul %h, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %loss = memc.cross_entropy %logits, %labels {ignore_index = -100 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  %max = memc.reduce_max %logits {axes = array<i64: 1>, keepdims = false} : (tensor<4x5xf32>) -> tensor<4xf32>
  return %loss, %max : tensor<f32>, tensor<4xf32>
}

// -----

// A bias [V] added to the product (nn.Linear(bias=True)) becomes the op's bias; the product and
// the biased logits are both avoided.
// CHECK-LABEL: func @biased_head
// CHECK-SAME: memc.loss_logits_bytes_avoided = 160 : i64
// CHECK-NEXT: %[[LOSS:.*]], %{{.*}} = memc.linear_cross_entropy %arg0, %arg1, %arg3, %arg2 {ignore_index = -100 : i64}
// CHECK-NOT: memc.add
func.func @biased_head(%h: tensor<4x8xf32>, %w: tensor<8x5xf32>, %b: tensor<5xf32>, %labels: tensor<4xi64>) -> tensor<f32> {
  %logits = memc.matmul %h, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %biased = memc.add %logits, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %loss = memc.cross_entropy %biased, %labels {ignore_index = -100 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// An add of anything but a [V] bias (here a [4, 5] tensor), or an activation after the head,
// is not a head linear_cross_entropy expresses.
// CHECK-LABEL: func @not_a_bias
// CHECK-SAME: memc.loss_unfused = {{\[\[}}"cross_entropy", "the logits come from a memc.add that is not the head product plus a [V] bias"], ["cross_entropy", "the logits come from memc.tanh, not a product by the head weight"]]
// CHECK-COUNT-2: memc.cross_entropy
// expected-remark @below {{loss not fused at cross_entropy: the logits come from a memc.add that is not the head product plus a [V] bias}}
// expected-remark @below {{loss not fused at cross_entropy: the logits come from memc.tanh, not a product by the head weight}}
func.func @not_a_bias(%h: tensor<4x8xf32>, %w: tensor<8x5xf32>, %b: tensor<4x5xf32>, %labels: tensor<4xi64>) -> (tensor<f32>, tensor<f32>) {
  %logits = memc.matmul %h, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %biased = memc.add %logits, %b : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %loss = memc.cross_entropy %biased, %labels {ignore_index = -100 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  %logits2 = memc.matmul %h, %w : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %squashed = memc.tanh %logits2 : tensor<4x5xf32>
  %loss2 = memc.cross_entropy %squashed, %labels {ignore_index = -100 : i64} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>
  return %loss, %loss2 : tensor<f32>, tensor<f32>
}
