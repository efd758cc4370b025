// RUN: memc-opt '--memc-autocast=precision=fp16' --split-input-file %s | FileCheck %s
// RUN: memc-opt '--memc-autocast=precision=fp16' --canonicalize --split-input-file %s | FileCheck %s --check-prefix=FOLD

// --precision fp16 is the same policy table with f16 as the 16-bit type: the matmuls, their
// weight (cast once, at the entry, shared by both uses) and the bias that follows them are f16,
// relu follows its f16 operand, and the result goes back to the declared f32.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {memc.input = "x"}, %[[W:.*]]: tensor<8x8xf32> {{.*}}, %[[B:.*]]: tensor<8xf32> {{.*}}) -> (tensor<4x8xf32>
// CHECK-NEXT: %[[BL:.*]] = memc.cast %[[B]] : tensor<8xf32> -> tensor<8xf16>
// CHECK-NEXT: %[[WL:.*]] = memc.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xf16>
// CHECK-NEXT: %[[XL:.*]] = memc.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT: %[[H:.*]] = memc.matmul %[[XL]], %[[WL]] : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[Y:.*]] = memc.add %[[H]], %[[BL]] : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[R:.*]] = memc.relu %[[Y]] : tensor<4x8xf16>
// CHECK-NEXT: %[[Z:.*]] = memc.matmul %[[R]], %[[WL]] : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[ZF:.*]] = memc.cast %[[Z]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[ZF]] : tensor<4x8xf32>
// CHECK-NOT: memc.cast
func.func @linear(%x: tensor<4x8xf32> {memc.input = "x"},
                  %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"},
                  %b: tensor<8xf32> {memc.param = "b", memc.param_kind = "parameter"})
    -> (tensor<4x8xf32> {memc.output = "y"}) {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = memc.add %0, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = memc.relu %1 : tensor<4x8xf32>
  %3 = memc.matmul %2, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// The f32 list is f32 under fp16 too: softmax, exp and sums share one f32 cast of the f16
// matmul result.
// CHECK-LABEL: func @fp32_list
// CHECK: %[[S:.*]] = memc.matmul {{.*}} -> tensor<4x8xf16>
// CHECK-NEXT: %[[SF:.*]] = memc.cast %[[S]] : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK-NEXT: memc.softmax %[[SF]] {axis = 1 : i64} : tensor<4x8xf32>
// CHECK-NEXT: memc.exp %[[SF]] : tensor<4x8xf32>
// CHECK-NEXT: memc.reduce_sum %[[SF]] {{.*}} -> tensor<4xf32>
// CHECK-NEXT: return
func.func @fp32_list(%x: tensor<4x8xf32> {memc.input = "x"},
                     %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %s = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %p = memc.softmax %s {axis = 1 : i64} : tensor<4x8xf32>
  %e = memc.exp %s : tensor<4x8xf32>
  %r = memc.reduce_sum %s {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  return %p, %e, %r : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// -----

// The convolution is f16 and batch norm keeps its f16 data with f32 parameters and statistics.
// CHECK-LABEL: func @conv_batch_norm
// CHECK: %[[C:.*]] = memc.conv {{.*}} : (tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<2x4x6x6xf16>
// CHECK-NEXT: memc.batch_norm %[[C]], {{.*}} : (tensor<2x4x6x6xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf16>
func.func @conv_batch_norm(%x: tensor<2x3x8x8xf32> {memc.input = "x"},
                           %w: tensor<4x3x3x3xf32> {memc.param = "w", memc.param_kind = "parameter"},
                           %g: tensor<4xf32> {memc.param = "g", memc.param_kind = "parameter"},
                           %b: tensor<4xf32> {memc.param = "b", memc.param_kind = "parameter"},
                           %m: tensor<4xf32> {memc.param = "m", memc.param_kind = "buffer"},
                           %v: tensor<4xf32> {memc.param = "v", memc.param_kind = "buffer"})
    -> tensor<2x4x6x6xf32> {
  %c = memc.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         dilations = array<i64: 1, 1>, group = 1 : i64}
      : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6x6xf32>
  %y = memc.batch_norm %c, %g, %b, %m, %v {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64, training = true}
      : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  return %y : tensor<2x4x6x6xf32>
}

// -----

// f16 -> f32 -> f16 is exact and folds; f32 -> f16 -> f32 loses bits and stays.
// FOLD-LABEL: func @cancelling_casts
// FOLD-SAME: (%[[H:.*]]: tensor<4xf16>, %[[F:.*]]: tensor<4xf32>)
// FOLD-NEXT: %[[N:.*]] = memc.cast %[[F]] : tensor<4xf32> -> tensor<4xf16>
// FOLD-NEXT: %[[B:.*]] = memc.cast %[[N]] : tensor<4xf16> -> tensor<4xf32>
// FOLD-NEXT: return %[[H]], %[[B]]
func.func @cancelling_casts(%h: tensor<4xf16>, %f: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>) {
  %0 = memc.cast %h : tensor<4xf16> -> tensor<4xf32>
  %1 = memc.cast %0 : tensor<4xf32> -> tensor<4xf16>
  %2 = memc.cast %f : tensor<4xf32> -> tensor<4xf16>
  %3 = memc.cast %2 : tensor<4xf16> -> tensor<4xf32>
  return %1, %3 : tensor<4xf16>, tensor<4xf32>
}
