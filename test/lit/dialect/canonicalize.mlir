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
