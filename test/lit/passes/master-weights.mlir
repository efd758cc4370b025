// RUN: memc-opt --memc-master-weights --split-input-file %s | FileCheck %s
// RUN: memc-opt '--memc-master-weights=freeze=w' --split-input-file %s | FileCheck %s --check-prefix=FROZEN

// A bf16 model's parameters become f32 master weights, each cast back to bf16 once at the entry
// for all its readers; the graph input and the buffer keep their types.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16> {memc.input = "x"}, %[[W:.*]]: tensor<8x8xf32> {{.*}}, %[[B:.*]]: tensor<8xf32> {{.*}}, %[[S:.*]]: tensor<8xbf16> {{.*}}"buffer"}) -> (tensor<4x8xbf16>
// CHECK-DAG: %[[WL:.*]] = memc.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-DAG: %[[BL:.*]] = memc.cast %[[B]] : tensor<8xf32> -> tensor<8xbf16>
// CHECK: %[[H:.*]] = memc.matmul %[[X]], %[[WL]]
// CHECK: %[[Y:.*]] = memc.add %[[H]], %[[BL]]
// CHECK: %[[Z:.*]] = memc.matmul %[[Y]], %[[WL]]
// CHECK: memc.add %[[Z]], %[[S]]
// CHECK-NOT: memc.cast
// A frozen parameter never changes: it keeps its bf16 storage (a frozen base), read directly.
// FROZEN-LABEL: func @linear
// FROZEN-SAME: (%[[X:.*]]: tensor<4x8xbf16> {memc.input = "x"}, %[[W:.*]]: tensor<8x8xbf16> {{.*}}, %[[B:.*]]: tensor<8xf32> {{.*}}, %{{.*}}: tensor<8xbf16> {{.*}}"buffer"})
// FROZEN: %[[BL:.*]] = memc.cast %[[B]] : tensor<8xf32> -> tensor<8xbf16>
// FROZEN: memc.matmul %[[X]], %[[W]]
func.func @linear(%x: tensor<4x8xbf16> {memc.input = "x"},
                  %w: tensor<8x8xbf16> {memc.param = "w", memc.param_kind = "parameter"},
                  %b: tensor<8xbf16> {memc.param = "b", memc.param_kind = "parameter"},
                  %s: tensor<8xbf16> {memc.param = "s", memc.param_kind = "buffer"})
    -> (tensor<4x8xbf16> {memc.output = "y"}) {
  %h = memc.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %y = memc.add %h, %b : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  %z = memc.matmul %y, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %r = memc.add %z, %s : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  return %r : tensor<4x8xbf16>
}

// -----

// f16 parameters too; f32 parameters are already master weights and stay as they are.
// CHECK-LABEL: func @mixed
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf16> {{.*}}, %[[W:.*]]: tensor<4x4xf32> {{.*}}, %[[V:.*]]: tensor<4x4xf32> {{.*}})
// CHECK-NEXT: %[[WL:.*]] = memc.cast %[[W]] : tensor<4x4xf32> -> tensor<4x4xf16>
// CHECK-NEXT: %[[H:.*]] = memc.matmul %[[X]], %[[WL]]
// CHECK-NEXT: %[[HF:.*]] = memc.cast %[[H]] : tensor<2x4xf16> -> tensor<2x4xf32>
// CHECK-NEXT: memc.matmul %[[HF]], %[[V]]
func.func @mixed(%x: tensor<2x4xf16> {memc.input = "x"},
                 %w: tensor<4x4xf16> {memc.param = "w", memc.param_kind = "parameter"},
                 %v: tensor<4x4xf32> {memc.param = "v", memc.param_kind = "parameter"})
    -> (tensor<2x4xf32> {memc.output = "y"}) {
  %h = memc.matmul %x, %w : (tensor<2x4xf16>, tensor<4x4xf16>) -> tensor<2x4xf16>
  %hf = memc.cast %h : tensor<2x4xf16> -> tensor<2x4xf32>
  %y = memc.matmul %hf, %v : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
