// RUN: memc-opt --memc-build-train-step=fuse-loss=false --canonicalize --split-input-file %s | FileCheck %s
// fuse-loss=false: these cases pin the unfused head's rules (matmul, cross_entropy_grad);
// fuse-loss.mlir and fuse-loss-fixtures.test pin the fused one.

// Linear layer + cross_entropy: the bias gradient sums over the batch; the step returns the loss
// and one gradient per parameter, named.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x16xf32> {memc.input = "x"}
// CHECK-SAME: %[[Y:[a-z0-9]+]]: tensor<4xi64> {memc.input = "labels"}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<10xf32> {memc.param = "b", memc.param_kind = "parameter"}
// CHECK-SAME: -> (tensor<f32> {memc.output = "loss"}, tensor<16x10xf32> {memc.gradient_of = "w"}, tensor<10xf32> {memc.gradient_of = "b"})
// CHECK: %[[MM:.*]] = memc.matmul %[[X]], %[[W]]
// CHECK: %[[LOGITS:.*]] = memc.add %[[MM]], %[[B]]
// CHECK: %[[LOSS:.*]] = memc.cross_entropy %[[LOGITS]], %[[Y]] {ignore_index = -100 : i64}
// CHECK: %[[DLOGITS:.*]] = memc.cross_entropy_grad %{{.*}}, %[[LOGITS]], %[[Y]]
// CHECK: %[[DB:.*]] = memc.reduce_sum %[[DLOGITS]] {axes = array<i64: 0>, keepdims = true} : (tensor<4x10xf32>) -> tensor<1x10xf32>
// CHECK: %[[DB1:.*]] = memc.reshape %[[DB]] : tensor<1x10xf32> -> tensor<10xf32>
// CHECK-NOT: memc.transpose
// CHECK: %[[DW:.*]] = memc.matmul %[[X]], %[[DLOGITS]] {transpose_lhs} : (tensor<4x16xf32>, tensor<4x10xf32>) -> tensor<16x10xf32>
// CHECK: return %[[LOSS]], %[[DW]], %[[DB1]]
func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                   %w: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"},
                   %b: tensor<10xf32> {memc.param = "b", memc.param_kind = "parameter"})
    -> (tensor<4x10xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x16xf32>, tensor<16x10xf32>) -> tensor<4x10xf32>
  %1 = memc.add %0, %b : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return %1 : tensor<4x10xf32>
}

// -----

// Batched linear layers (x @ W^T, the weight as nn.Linear stores it): each weight's gradient is
// one product of the stacked rows, transposes are flags, and nothing sums over the batch.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<2x3x16xf32> {memc.input = "x"}
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<8x16xf32> {memc.param = "w1"
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<8x10xf32> {memc.param = "w2"
// CHECK: %[[H:.*]] = memc.matmul %[[X]], %[[W1]] {transpose_rhs} : (tensor<2x3x16xf32>, tensor<8x16xf32>) -> tensor<2x3x8xf32>
// CHECK: %[[G:.*]] = memc.cross_entropy_grad
// CHECK-NOT: memc.transpose
// CHECK-NOT: memc.reduce_sum
// CHECK: %[[DH:.*]] = memc.matmul %[[G]], %[[W2]] {transpose_rhs} : (tensor<2x3x10xf32>, tensor<8x10xf32>) -> tensor<2x3x8xf32>
// CHECK: %[[HROWS:.*]] = memc.reshape %[[H]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK: %[[GROWS:.*]] = memc.reshape %[[G]] : tensor<2x3x10xf32> -> tensor<6x10xf32>
// CHECK: %[[DW2:.*]] = memc.matmul %[[HROWS]], %[[GROWS]] {transpose_lhs} : (tensor<6x8xf32>, tensor<6x10xf32>) -> tensor<8x10xf32>
// CHECK: %[[XROWS:.*]] = memc.reshape %[[X]] : tensor<2x3x16xf32> -> tensor<6x16xf32>
// CHECK: %[[DHROWS:.*]] = memc.reshape %[[DH]] : tensor<2x3x8xf32> -> tensor<6x8xf32>
// CHECK: %[[DW1:.*]] = memc.matmul %[[DHROWS]], %[[XROWS]] {transpose_lhs} : (tensor<6x8xf32>, tensor<6x16xf32>) -> tensor<8x16xf32>
// CHECK: return %{{.*}}, %[[DW1]], %[[DW2]]
func.func @forward(%x: tensor<2x3x16xf32> {memc.input = "x"},
                   %w1: tensor<8x16xf32> {memc.param = "w1", memc.param_kind = "parameter"},
                   %w2: tensor<8x10xf32> {memc.param = "w2", memc.param_kind = "parameter"})
    -> (tensor<2x3x10xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w1 {transpose_rhs} : (tensor<2x3x16xf32>, tensor<8x16xf32>) -> tensor<2x3x8xf32>
  %1 = memc.matmul %0, %w2 : (tensor<2x3x8xf32>, tensor<8x10xf32>) -> tensor<2x3x10xf32>
  return %1 : tensor<2x3x10xf32>
}

// -----

// Attention's scores (q @ k^T, both batched): the gradients are batched products with flags.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8xf32> {memc.param = "q"
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<2x4x8xf32> {memc.param = "k"
// CHECK: %[[G:.*]] = memc.cross_entropy_grad
// CHECK-NOT: memc.transpose
// CHECK-NOT: memc.reduce_sum
// CHECK: %[[DQ:.*]] = memc.matmul %[[G]], %[[K]] : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[DK:.*]] = memc.matmul %[[G]], %[[Q]] {transpose_lhs} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: return %{{.*}}, %[[DQ]], %[[DK]]
func.func @forward(%q: tensor<2x4x8xf32> {memc.param = "q", memc.param_kind = "parameter"},
                   %k: tensor<2x4x8xf32> {memc.param = "k", memc.param_kind = "parameter"})
    -> (tensor<2x4x4xf32> {memc.output = "scores"}) {
  %0 = memc.matmul %q, %k {transpose_rhs} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

// Tied weights: one parameter used twice gets the sum of both uses' gradients.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<f32> {memc.output = "loss"}, tensor<8x8xf32> {memc.gradient_of = "tied"})
// CHECK: %[[G1:.*]] = memc.matmul
// CHECK: %[[SUM:.*]] = memc.add %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// CHECK: return %{{.*}}, %[[SUM]]
func.func @forward(%x: tensor<2x8xf32> {memc.input = "x"},
                   %w: tensor<8x8xf32> {memc.param = "tied", memc.param_kind = "parameter"})
    -> (tensor<2x8xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %1 = memc.matmul %0, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// Buffers never train. cross_entropy labels drop the class axis.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %{{.*}}: tensor<2xi64> {memc.input = "labels"}
// CHECK-SAME: -> (tensor<f32> {memc.output = "loss"}, tensor<4xf32> {memc.gradient_of = "scale"})
func.func @forward(%x: tensor<2x4xf32> {memc.input = "x"},
                   %s: tensor<4xf32> {memc.param = "scale", memc.param_kind = "parameter"},
                   %m: tensor<4xf32> {memc.param = "mask", memc.param_kind = "buffer"})
    -> (tensor<2x4xf32> {memc.output = "y"}) {
  %0 = memc.mul %x, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = memc.mul %0, %m : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// -----

// An embedding lookup with a padding row (nn.Embedding(padding_idx=1)): the lookup's gradient
// is masked to zero in that row; the tied head's gradient still reaches it.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[MASK:.*]] = memc.constant dense<{{\[}}[1.000000e+00], [0.000000e+00], [1.000000e+00], [1.000000e+00]]> : tensor<4x1xf32>
// CHECK: %[[HEAD:.*]] = memc.transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
// CHECK: %[[LOOKUP:.*]] = memc.gather_grad
// CHECK: %[[MASKED:.*]] = memc.mul %[[LOOKUP]], %[[MASK]] : (tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
// CHECK: %[[SUM:.*]] = memc.add %[[HEAD]], %[[MASKED]]
// CHECK: return %{{.*}}, %[[SUM]]
func.func @forward(%ids: tensor<2x3xi64> {memc.input = "ids"},
                   %wte: tensor<4x5xf32> {memc.param = "wte", memc.param_kind = "parameter"})
    -> (tensor<2x3x4xf32> {memc.output = "logits"}) {
  %0 = memc.gather %wte, %ids {axis = 0 : i64, padding_idx = 1 : i64} : (tensor<4x5xf32>, tensor<2x3xi64>) -> tensor<2x3x5xf32>
  %1 = memc.transpose %wte {perm = array<i64: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
  %2 = memc.matmul %0, %1 : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  return %2 : tensor<2x3x4xf32>
}
