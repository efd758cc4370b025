// RUN: memc-opt --memc-fuse-bias-gelu --split-input-file %s | FileCheck %s

// nn.Linear on a 3-D input then GELU: MatMul, Add(product, bias), the fused gelu.
// CHECK-LABEL: func @matmul_add
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK-NEXT: %[[H:.*]] = memc.matmul %[[X]], %[[W]] {transpose_rhs}
// CHECK-NEXT: %[[Y:.*]] = memc.bias_gelu %[[H]], %[[B]] {approximate = "tanh"} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @matmul_add(%x: tensor<2x4x8xf32>, %w: tensor<16x8xf32>, %b: tensor<16xf32>) -> tensor<2x4x16xf32> {
  %0 = memc.matmul %x, %w {transpose_rhs} : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  %1 = memc.add %0, %b : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %2 = memc.gelu %1 {approximate = "tanh"} : tensor<2x4x16xf32>
  return %2 : tensor<2x4x16xf32>
}

// -----

// Gemm with its bias (C) imports as the same matmul and add; here the bias is the add's lhs.
// CHECK-LABEL: func @gemm_bias_first
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x6xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK-NEXT: %[[H:.*]] = memc.matmul %[[X]], %[[W]]
// CHECK-NEXT: %[[Y:.*]] = memc.bias_gelu %[[H]], %[[B]] : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
func.func @gemm_bias_first(%x: tensor<4x8xf32>, %w: tensor<8x6xf32>, %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %1 = memc.add %b, %0 : (tensor<6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %2 = memc.gelu %1 : tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// Not fused: the sum has another reader (the add stays, so fusing would compute it twice).
// CHECK-LABEL: func @sum_read_twice
// CHECK: memc.add
// CHECK: memc.gelu
// CHECK-NOT: memc.bias_gelu
func.func @sum_read_twice(%h: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = memc.add %h, %b : (tensor<4x6xf32>, tensor<6xf32>) -> tensor<4x6xf32>
  %1 = memc.gelu %0 : tensor<4x6xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// Not fused: a residual (two full tensors), a bias broadcast over more than the last axis, and
// a 1-D add (no rows to broadcast over).
// CHECK-LABEL: func @no_bias
// CHECK-NOT: memc.bias_gelu
// CHECK-COUNT-3: memc.gelu
// CHECK-NOT: memc.bias_gelu
func.func @no_bias(%h: tensor<4x6xf32>, %r: tensor<4x6xf32>, %c: tensor<4x1xf32>, %v: tensor<6xf32>)
    -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<6xf32>) {
  %0 = memc.add %h, %r : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %1 = memc.gelu %0 : tensor<4x6xf32>
  %2 = memc.add %h, %c : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  %3 = memc.gelu %2 : tensor<4x6xf32>
  %4 = memc.add %v, %v : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %5 = memc.gelu %4 : tensor<6xf32>
  return %1, %3, %5 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<6xf32>
}
