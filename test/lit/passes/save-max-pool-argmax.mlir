// RUN: memc-opt --memc-save-max-pool-argmax --split-input-file %s | FileCheck %s

// A pool and its gradient: the forward saves the taps, the gradient reads them, not %x.
// CHECK-LABEL: func @pool_and_grad
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x8x8xf32>, %[[DY:.*]]: tensor<2x8x4x4xf32>)
// CHECK-NEXT: %[[Y:.*]], %[[T:.*]] = memc.max_pool_with_argmax %[[X]] {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x8x8xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x8x4x4xui8>)
// CHECK-NEXT: %[[DX:.*]] = memc.max_pool_grad_argmax %[[DY]], %[[T]] {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xui8>) -> tensor<2x8x8x8xf32>
// CHECK-NEXT: return %[[Y]], %[[DX]]
// CHECK-NOT: memc.max_pool_grad
func.func @pool_and_grad(%x: tensor<2x8x8x8xf32>, %dy: tensor<2x8x4x4xf32>)
    -> (tensor<2x8x4x4xf32>, tensor<2x8x8x8xf32>) {
  %y = memc.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<2x8x8x8xf32>) -> tensor<2x8x4x4xf32>
  %dx = memc.max_pool_grad %dy, %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
      pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<2x8x4x4xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %y, %dx : tensor<2x8x4x4xf32>, tensor<2x8x8x8xf32>
}

// -----

// A 16-bit gradient of a bf16 pool keeps its types; two gradients share one saved argmax.
// CHECK-LABEL: func @two_grads
// CHECK: %[[Y:.*]], %[[T:.*]] = memc.max_pool_with_argmax %{{.*}} : (tensor<1x2x4x4xbf16>) -> (tensor<1x2x2x2xbf16>, tensor<1x2x2x2xui8>)
// CHECK: memc.max_pool_grad_argmax %{{.*}}, %[[T]] {{.*}} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xui8>) -> tensor<1x2x4x4xbf16>
// CHECK: memc.max_pool_grad_argmax %{{.*}}, %[[T]] {{.*}} : (tensor<1x2x2x2xbf16>, tensor<1x2x2x2xui8>) -> tensor<1x2x4x4xbf16>
// CHECK-NOT: memc.max_pool
func.func @two_grads(%x: tensor<1x2x4x4xbf16>, %a: tensor<1x2x2x2xf32>, %b: tensor<1x2x2x2xbf16>)
    -> (tensor<1x2x2x2xbf16>, tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) {
  %y = memc.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<1x2x4x4xbf16>) -> tensor<1x2x2x2xbf16>
  %da = memc.max_pool_grad %a, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  %db = memc.max_pool_grad %b, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<1x2x2x2xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  return %y, %da, %db : tensor<1x2x2x2xbf16>, tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>
}

// -----

// Not rewritten: a 17x17 window (289 taps) does not fit a byte; a gradient with no pool of
// the same window (ceil_mode differs) has nothing to read the taps from.
// CHECK-LABEL: func @kept
// CHECK: memc.max_pool %
// CHECK: memc.max_pool %
// CHECK: memc.max_pool_grad %
// CHECK: memc.max_pool_grad %
// CHECK-NOT: argmax
func.func @kept(%x: tensor<1x1x17x17xf32>, %dy: tensor<1x1x1x1xf32>, %dz: tensor<1x1x16x16xf32>)
    -> (tensor<1x1x1x1xf32>, tensor<1x1x16x16xf32>, tensor<1x1x17x17xf32>, tensor<1x1x17x17xf32>) {
  %y = memc.max_pool %x {kernel_shape = array<i64: 17, 17>, strides = array<i64: 1, 1>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<1x1x17x17xf32>) -> tensor<1x1x1x1xf32>
  %z = memc.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<1x1x17x17xf32>) -> tensor<1x1x16x16xf32>
  %dx = memc.max_pool_grad %dy, %x {kernel_shape = array<i64: 17, 17>, strides = array<i64: 1, 1>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<1x1x1x1xf32>, tensor<1x1x17x17xf32>) -> tensor<1x1x17x17xf32>
  %dw = memc.max_pool_grad %dz, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>,
      pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true}
      : (tensor<1x1x16x16xf32>, tensor<1x1x17x17xf32>) -> tensor<1x1x17x17xf32>
  return %y, %z, %dx, %dw : tensor<1x1x1x1xf32>, tensor<1x1x16x16xf32>, tensor<1x1x17x17xf32>, tensor<1x1x17x17xf32>
}
