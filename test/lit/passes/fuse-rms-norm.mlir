// RUN: memc-opt --memc-fuse-rms-norm --split-input-file %s | FileCheck %s

// Llama's RMSNorm as torch.onnx.export writes it (opsets 14-18): pow, reduce_mean, add(eps),
// sqrt, div(1, .), mul by the inverse root, mul by the weight.
// CHECK-LABEL: func @llama_form
// CHECK-SAME: (%[[X:.*]]: tensor<2x16x32xf32>, %[[W:.*]]: tensor<32xf32>)
// CHECK-NEXT: %[[Y:.*]] = memc.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997{{[0-9]*}}E-7 : f64}
// CHECK-SAME: (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
// CHECK-NEXT: return %[[Y]]
func.func @llama_form(%x: tensor<2x16x32xf32>, %w: tensor<32xf32>) -> tensor<2x16x32xf32> {
  %two = memc.constant dense<2.0> : tensor<f32>
  %eps = memc.constant dense<1.0e-06> : tensor<f32>
  %one = memc.constant dense<1.0> : tensor<f32>
  %0 = memc.pow %x, %two : (tensor<2x16x32xf32>, tensor<f32>) -> tensor<2x16x32xf32>
  %1 = memc.reduce_mean %0 {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf32>) -> tensor<2x16x1xf32>
  %2 = memc.add %1, %eps : (tensor<2x16x1xf32>, tensor<f32>) -> tensor<2x16x1xf32>
  %3 = memc.sqrt %2 : tensor<2x16x1xf32>
  %4 = memc.div %one, %3 : (tensor<f32>, tensor<2x16x1xf32>) -> tensor<2x16x1xf32>
  %5 = memc.mul %x, %4 : (tensor<2x16x32xf32>, tensor<2x16x1xf32>) -> tensor<2x16x32xf32>
  %6 = memc.mul %5, %w : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  return %6 : tensor<2x16x32xf32>
}

// -----

// Reciprocal(Sqrt), the square as x * x, eps first and the weight on the left.
// CHECK-LABEL: func @reciprocal_form
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]] = memc.rms_norm %[[X]], %[[W]] {axis = 1 : i64, epsilon = 9.99999974{{[0-9]*}}E-6 : f64}
// CHECK-NEXT: return %[[Y]]
func.func @reciprocal_form(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  %eps = memc.constant dense<1.0e-05> : tensor<f32>
  %0 = memc.mul %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = memc.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = memc.add %eps, %1 : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %3 = memc.sqrt %2 : tensor<4x1xf32>
  %4 = memc.reciprocal %3 : tensor<4x1xf32>
  %5 = memc.mul %4, %x : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = memc.mul %w, %5 : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %6 : tensor<4x8xf32>
}

// -----

// x / sqrt(.) (the division form) and pow(., -0.5), the weight multiplied first.
// CHECK-LABEL: func @division_forms
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[A:.*]] = memc.rms_norm %[[X]], %[[W]] {axis = 1 : i64
// CHECK-NEXT: %[[B:.*]] = memc.rms_norm %[[X]], %[[W]] {axis = 1 : i64
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @division_forms(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = memc.constant dense<2.0> : tensor<f32>
  %eps = memc.constant dense<1.0e-05> : tensor<f32>
  %half = memc.constant dense<-0.5> : tensor<f32>
  %0 = memc.pow %x, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = memc.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %2 = memc.add %1, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %3 = memc.sqrt %2 : tensor<4x1xf32>
  %4 = memc.div %x, %3 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %5 = memc.mul %4, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %6 = memc.pow %2, %half : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %7 = memc.mul %w, %x : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = memc.mul %7, %6 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  return %5, %8 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Not an RMS norm: the mean over a leading axis, a weight broadcast over every axis, another
// value's square, and no weight stay as they are.
// CHECK-LABEL: func @not_rms_norm
// CHECK-NOT: memc.rms_norm
func.func @not_rms_norm(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<8xf32>, %v: tensor<4x8xf32>)
    -> (tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = memc.constant dense<2.0> : tensor<f32>
  %eps = memc.constant dense<1.0e-05> : tensor<f32>
  %one = memc.constant dense<1.0> : tensor<f32>
  %0 = memc.pow %x, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %1 = memc.reduce_mean %0 {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %2 = memc.add %1, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %3 = memc.sqrt %2 : tensor<1x8xf32>
  %4 = memc.div %one, %3 : (tensor<f32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %5 = memc.mul %x, %4 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %t = memc.transpose %5 {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %10 = memc.reduce_mean %0 {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %11 = memc.add %10, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %12 = memc.sqrt %11 : tensor<4x1xf32>
  %13 = memc.div %one, %12 : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %14 = memc.mul %x, %13 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %15 = memc.mul %14, %v : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %16 = memc.mul %y, %13 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %17 = memc.mul %16, %w : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %t, %15, %17, %14 : tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
