// RUN: memc-opt --canonicalize --split-input-file %s | FileCheck %s

// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x32xf32>)
// CHECK-NEXT: %[[R:.*]] = memc.reshape %[[X]] : tensor<2x16x32xf32> -> tensor<32x32xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<2x16x32xf32>) -> tensor<32x32xf32> {
  %0 = memc.reshape %x : tensor<2x16x32xf32> -> tensor<1024xf32>
  %1 = memc.reshape %0 : tensor<1024xf32> -> tensor<32x32xf32>
  return %1 : tensor<32x32xf32>
}

// -----

// Identity layout ops fold away.
// CHECK-LABEL: func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = memc.transpose %x {perm = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = memc.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %2 = memc.broadcast_to %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %3 = memc.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0, %1, %2, %3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A real transpose stays.
// CHECK-LABEL: func @real_transpose
// CHECK: memc.transpose
func.func @real_transpose(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %0 = memc.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// A slice that takes every element is the identity; a reversing one is not.
// CHECK-LABEL: func @full_slice
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = memc.slice %[[X]] {{.*}}steps = array<i64: 1, -1>
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @full_slice(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = memc.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, steps = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = memc.slice %x {starts = array<i64: 0, 7>, limits = array<i64: 4, -1>, steps = array<i64: 1, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Transposes compose; composing to the identity removes both.
// CHECK-LABEL: func @transpose_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.*]] = memc.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @transpose_chain(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %0 = memc.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = memc.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  %2 = memc.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %3 = memc.transpose %2 {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}

// -----

// A transpose of the last two dims feeding a matmul becomes its flag (a Gemm's transB weight,
// attention's K^T), so the transposed copy is never allocated; two swaps cancel.
// CHECK-LABEL: func @matmul_transpose_flags
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x32xf32>, %[[W:.*]]: tensor<96x32xf32>, %[[K:.*]]: tensor<2x4x8x32xf32>, %[[Q:.*]]: tensor<2x4x8x32xf32>, %[[A:.*]]: tensor<96x16xf32>)
// CHECK-NOT: memc.transpose
// CHECK: %[[Y:.*]] = memc.matmul %[[X]], %[[W]] {transpose_rhs} : (tensor<2x16x32xf32>, tensor<96x32xf32>) -> tensor<2x16x96xf32>
// CHECK: %[[S:.*]] = memc.matmul %[[Q]], %[[K]] {transpose_rhs} : (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x8xf32>
// CHECK: %[[D:.*]] = memc.matmul %[[A]], %[[X]] : (tensor<96x16xf32>, tensor<2x16x32xf32>) -> tensor<2x96x32xf32>
// CHECK: return %[[Y]], %[[S]], %[[D]]
func.func @matmul_transpose_flags(%x: tensor<2x16x32xf32>, %w: tensor<96x32xf32>,
                                  %k: tensor<2x4x8x32xf32>, %q: tensor<2x4x8x32xf32>,
                                  %a: tensor<96x16xf32>)
    -> (tensor<2x16x96xf32>, tensor<2x4x8x8xf32>, tensor<2x96x32xf32>) {
  %wt = memc.transpose %w {perm = array<i64: 1, 0>} : (tensor<96x32xf32>) -> tensor<32x96xf32>
  %y = memc.matmul %x, %wt : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
  %kt = memc.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x8x32xf32>) -> tensor<2x4x32x8xf32>
  %s = memc.matmul %q, %kt : (tensor<2x4x8x32xf32>, tensor<2x4x32x8xf32>) -> tensor<2x4x8x8xf32>
  %xt = memc.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x16x32xf32>) -> tensor<2x32x16xf32>
  %d = memc.matmul %a, %xt {transpose_rhs} : (tensor<96x16xf32>, tensor<2x32x16xf32>) -> tensor<2x96x32xf32>
  return %y, %s, %d : tensor<2x16x96xf32>, tensor<2x4x8x8xf32>, tensor<2x96x32xf32>
}

// -----

// A transpose that moves a batch dim is no trans flag: it stays.
// CHECK-LABEL: func @matmul_batch_transpose_stays
// CHECK: %[[T:.*]] = memc.transpose
// CHECK: memc.matmul %[[T]], %{{.*}} : (tensor<4x2x8xf32>, tensor<8x3xf32>)
func.func @matmul_batch_transpose_stays(%x: tensor<2x4x8xf32>, %w: tensor<8x3xf32>)
    -> tensor<4x2x3xf32> {
  %t = memc.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x4x8xf32>) -> tensor<4x2x8xf32>
  %y = memc.matmul %t, %w : (tensor<4x2x8xf32>, tensor<8x3xf32>) -> tensor<4x2x3xf32>
  return %y : tensor<4x2x3xf32>
}

// -----

// The loss reads 16-bit logits as they are (its kernel widens each row exactly, as the cast
// did), so the step saves them in 16 bits; the gradient comes out in bf16, rounded once, and
// the round trip bf16 -> f32 -> bf16 before the logits' producer folds away. A cast that
// narrows is no exact widening and stays.
// CHECK-LABEL: func @cross_entropy_reads_16bit_logits
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x8xbf16>, %[[L:[a-z0-9]+]]: tensor<4xi64>, %[[D:[a-z0-9]+]]: tensor<f32>, %[[Y:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[LOSS:.*]] = memc.cross_entropy %[[X]], %[[L]] {ignore_index = -100 : i64} : (tensor<4x8xbf16>, tensor<4xi64>) -> tensor<f32>
// CHECK-NEXT: %[[G:.*]] = memc.cross_entropy_grad %[[D]], %[[X]], %[[L]] {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x8xbf16>, tensor<4xi64>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[YL:.*]] = memc.cast %[[Y]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: %[[N:.*]] = memc.cross_entropy %[[YL]], %[[L]]
// CHECK-NEXT: return %[[LOSS]], %[[G]], %[[N]]
func.func @cross_entropy_reads_16bit_logits(%x: tensor<4x8xbf16>, %labels: tensor<4xi64>,
                                            %dloss: tensor<f32>, %y: tensor<4x8xf32>)
    -> (tensor<f32>, tensor<4x8xbf16>, tensor<f32>) {
  %wide = memc.cast %x : tensor<4x8xbf16> -> tensor<4x8xf32>
  %loss = memc.cross_entropy %wide, %labels {ignore_index = -100 : i64}
      : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
  %g = memc.cross_entropy_grad %dloss, %wide, %labels {ignore_index = -100 : i64}
      : (tensor<f32>, tensor<4x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
  %gl = memc.cast %g : tensor<4x8xf32> -> tensor<4x8xbf16>
  %yl = memc.cast %y : tensor<4x8xf32> -> tensor<4x8xbf16>
  %n = memc.cross_entropy %yl, %labels {ignore_index = -100 : i64}
      : (tensor<4x8xbf16>, tensor<4xi64>) -> tensor<f32>
  return %loss, %gl, %n : tensor<f32>, tensor<4x8xbf16>, tensor<f32>
}
