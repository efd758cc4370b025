// RUN: memc-opt --memc-fuse-gelu --split-input-file %s | FileCheck %s

// The exact GELU as torch.onnx.export writes it: x * (erf(x / sqrt2) + 1) * 0.5.
// CHECK-LABEL: func @erf_form
// CHECK-SAME: (%[[X:.*]]: tensor<4x32xf32>)
// CHECK-NEXT: %[[G:.*]] = memc.gelu %[[X]] : tensor<4x32xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_form(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %sqrt2 = memc.constant dense<1.41421354> : tensor<f32>
  %one = memc.constant dense<1.0> : tensor<f32>
  %half = memc.constant dense<0.5> : tensor<f32>
  %0 = memc.div %x, %sqrt2 : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %1 = memc.erf %0 : tensor<4x32xf32>
  %2 = memc.add %1, %one : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  %3 = memc.mul %x, %2 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
  %4 = memc.mul %3, %half : (tensor<4x32xf32>, tensor<f32>) -> tensor<4x32xf32>
  return %4 : tensor<4x32xf32>
}

// -----

// The tanh approximation, as nanoGPT writes it: 0.5 * x * (1 + tanh(c * (x + 0.044715 x^3))),
// with x^3 as a power and the factors in another order.
// CHECK-LABEL: func @tanh_form
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[G:.*]] = memc.gelu %[[X]] {approximate = "tanh"} : tensor<2x8xf32>
// CHECK-NEXT: return %[[G]]
func.func @tanh_form(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = memc.constant dense<0.5> : tensor<f32>
  %one = memc.constant dense<1.0> : tensor<f32>
  %three = memc.constant dense<3.0> : tensor<f32>
  %kappa = memc.constant dense<0.044715> : tensor<f32>
  %c = memc.constant dense<0.797884583> : tensor<f32>
  %cube = memc.pow %x, %three : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %0 = memc.mul %kappa, %cube : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = memc.add %x, %0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = memc.mul %c, %1 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = memc.tanh %2 : tensor<2x8xf32>
  %4 = memc.add %one, %3 : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %5 = memc.mul %half, %x : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %6 = memc.mul %5, %4 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %6 : tensor<2x8xf32>
}

// -----

// A different constant is a different function: nothing changes.
// CHECK-LABEL: func @wrong_scale
// CHECK-NOT: memc.gelu
// CHECK: memc.erf
func.func @wrong_scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = memc.constant dense<1.41421354> : tensor<f32>
  %one = memc.constant dense<1.0> : tensor<f32>
  %scale = memc.constant dense<0.6> : tensor<f32>
  %0 = memc.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = memc.erf %0 : tensor<4xf32>
  %2 = memc.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = memc.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = memc.mul %3, %scale : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// erf of a different value than the one multiplied: not a GELU.
// CHECK-LABEL: func @different_operands
// CHECK-NOT: memc.gelu
func.func @different_operands(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = memc.constant dense<1.41421354> : tensor<f32>
  %one = memc.constant dense<1.0> : tensor<f32>
  %half = memc.constant dense<0.5> : tensor<f32>
  %0 = memc.div %y, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = memc.erf %0 : tensor<4xf32>
  %2 = memc.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = memc.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = memc.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}
