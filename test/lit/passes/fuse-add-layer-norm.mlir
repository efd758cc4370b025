// RUN: memc-opt --memc-fuse-add-layer-norm --split-input-file %s | FileCheck %s
// RUN: memc-opt --memc-fuse-add-layer-norm='fuse-shared-sums=false' --split-input-file %s | FileCheck %s --check-prefix=UNSHARED

// Post-norm (BERT): layer_norm(x + r), the sum read by the norm alone.
// CHECK-LABEL: func @post_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[R:.*]]: tensor<2x4x8xf32>, %[[G:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[S:.*]], %[[Y:.*]] = memc.add_layer_norm %[[X]], %[[R]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64}
// CHECK-SAME: (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK-NEXT: return %[[Y]]
// UNSHARED-LABEL: func @post_norm
// UNSHARED-NEXT: memc.add_layer_norm
func.func @post_norm(%x: tensor<2x4x8xf32>, %r: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32> {
  %0 = memc.add %x, %r : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = memc.layer_norm %0, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %1 : tensor<2x4x8xf32>
}

// -----

// Pre-norm (GPT-2): the sum is the next residual too; its reader takes the fused op's sum. The
// add's operands in either order, a norm without bias.
// CHECK-LABEL: func @pre_norm
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[R:.*]]: tensor<4x8xf32>, %[[G:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[S:.*]], %[[Y:.*]] = memc.add_layer_norm %[[R]], %[[X]], %[[G]] {axis = 1 : i64
// CHECK-NEXT: %[[N:.*]] = memc.add %[[S]], %[[Y]]
// CHECK-NEXT: return %[[N]]
// With fuse-shared-sums=false (where remat may run) the shared sum stays an add.
// UNSHARED-LABEL: func @pre_norm
// UNSHARED-NEXT: memc.add
// UNSHARED-NEXT: memc.layer_norm
// UNSHARED-NOT: memc.add_layer_norm
func.func @pre_norm(%x: tensor<4x8xf32>, %r: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = memc.add %r, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = memc.layer_norm %0, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = memc.add %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Not fused: a broadcast add (BERT's position embeddings), and a cast between the add and the
// norm (autocast moved the norm to 16 bits).
// CHECK-LABEL: func @not_fused
// CHECK-NOT: memc.add_layer_norm
// CHECK-COUNT-2: memc.layer_norm
// CHECK-NOT: memc.add_layer_norm
func.func @not_fused(%x: tensor<2x4x8xf32>, %p: tensor<1x4x8xf32>, %r: tensor<2x4x8xf32>, %g: tensor<8xf32>, %gl: tensor<8xbf16>)
    -> (tensor<2x4x8xf32>, tensor<2x4x8xbf16>) {
  %0 = memc.add %x, %p : (tensor<2x4x8xf32>, tensor<1x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = memc.layer_norm %0, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %2 = memc.add %x, %r : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %3 = memc.cast %2 : tensor<2x4x8xf32> -> tensor<2x4x8xbf16>
  %4 = memc.layer_norm %3, %gl {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4x8xbf16>, tensor<8xbf16>) -> tensor<2x4x8xbf16>
  return %1, %4 : tensor<2x4x8xf32>, tensor<2x4x8xbf16>
}
