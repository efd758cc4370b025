// RUN: memc-opt %s | FileCheck %s
// RUN: memc-opt %s | memc-opt | FileCheck %s
// RUN: memc-opt --mlir-print-op-generic %s | memc-opt | FileCheck %s

// CHECK-LABEL: func @elementwise
func.func @elementwise(%x: tensor<4x16xf32>, %b: tensor<16xf32>, %m: tensor<4x16xi1>)
    -> tensor<4x16xf32> {
  // CHECK: memc.add %{{.*}}, %{{.*}} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %0 = memc.add %x, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.sub
  %1 = memc.sub %0, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.mul
  %2 = memc.mul %1, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.div
  %3 = memc.div %2, %x : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.pow
  %4 = memc.pow %3, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.neg
  %5 = memc.neg %4 : tensor<4x16xf32>
  // CHECK: memc.exp
  %6 = memc.exp %5 : tensor<4x16xf32>
  // CHECK: memc.log
  %7 = memc.log %6 : tensor<4x16xf32>
  // CHECK: memc.sqrt
  %8 = memc.sqrt %7 : tensor<4x16xf32>
  // CHECK: memc.reciprocal
  %9 = memc.reciprocal %8 : tensor<4x16xf32>
  // CHECK: memc.erf
  %10 = memc.erf %9 : tensor<4x16xf32>
  // CHECK: memc.tanh
  %11 = memc.tanh %10 : tensor<4x16xf32>
  // CHECK: memc.sigmoid
  %12 = memc.sigmoid %11 : tensor<4x16xf32>
  // CHECK: memc.relu
  %13 = memc.relu %12 : tensor<4x16xf32>
  // CHECK: memc.gelu %{{.*}} {approximate = "tanh"} : tensor<4x16xf32>
  %14 = memc.gelu %13 {approximate = "tanh"} : tensor<4x16xf32>
  // CHECK: memc.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %15 = memc.clip %14 {min = 0.0 : f64, max = 6.0 : f64} : tensor<4x16xf32>
  // CHECK: memc.dropout
  %16 = memc.dropout %15 {ratio = 0.1 : f64, seed = 7 : i64} : tensor<4x16xf32>
  // CHECK: memc.not
  %n = memc.not %m : tensor<4x16xi1>
  // CHECK: memc.where %{{.*}} : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %17 = memc.where %n, %16, %b : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.equal %{{.*}} -> tensor<4x16xi1>
  %e = memc.equal %17, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xi1>
  // CHECK: memc.less
  %l = memc.less %17, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xi1>
  // CHECK: memc.greater
  %g = memc.greater %17, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xi1>
  // CHECK: memc.cast %{{.*}} : tensor<4x16xi1> -> tensor<4x16xf32>
  %c = memc.cast %g : tensor<4x16xi1> -> tensor<4x16xf32>
  // CHECK: memc.trilu %{{.*}} {k = 1 : i64, upper = false}
  %t = memc.trilu %c {k = 1 : i64, upper = false} : tensor<4x16xf32>
  return %t : tensor<4x16xf32>
}

// CHECK-LABEL: func @activations_and_selection
func.func @activations_and_selection(%x: tensor<4x16xf32>, %b: tensor<16xf32>, %s: tensor<4x1xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xi1>, tensor<4x16xi1>) {
  // CHECK: memc.abs
  %0 = memc.abs %x : tensor<4x16xf32>
  // CHECK: memc.sin
  %1 = memc.sin %0 : tensor<4x16xf32>
  // CHECK: memc.cos
  %2 = memc.cos %1 : tensor<4x16xf32>
  // CHECK: memc.softplus
  %3 = memc.softplus %2 : tensor<4x16xf32>
  // CHECK: memc.hard_swish
  %4 = memc.hard_swish %3 : tensor<4x16xf32>
  // CHECK: memc.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f64} : tensor<4x16xf32>
  %5 = memc.leaky_relu %4 {alpha = 0.1 : f64} : tensor<4x16xf32>
  // CHECK: memc.elu %{{.*}} {alpha = 1.500000e+00 : f64}
  %6 = memc.elu %5 {alpha = 1.5 : f64} : tensor<4x16xf32>
  // CHECK: memc.hard_sigmoid %{{.*}} {alpha = 2.000000e-01 : f64, beta = 5.000000e-01 : f64}
  %7 = memc.hard_sigmoid %6 {alpha = 0.2 : f64, beta = 0.5 : f64} : tensor<4x16xf32>
  // CHECK: memc.max %{{.*}} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %8 = memc.max %7, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.min
  %9 = memc.min %8, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: memc.prelu %{{.*}} : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  %10 = memc.prelu %9, %s : (tensor<4x16xf32>, tensor<4x1xf32>) -> tensor<4x16xf32>
  // CHECK: memc.greater_equal
  %ge = memc.greater_equal %10, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xi1>
  // CHECK: memc.less_equal
  %le = memc.less_equal %10, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xi1>
  // CHECK: memc.cumsum %{{.*}} {axis = 1 : i64, exclusive = true, reverse = false} : tensor<4x16xf32>
  %11 = memc.cumsum %10 {axis = 1 : i64, exclusive = true, reverse = false} : tensor<4x16xf32>
  return %11, %ge, %le : tensor<4x16xf32>, tensor<4x16xi1>, tensor<4x16xi1>
}

// CHECK-LABEL: func @mixed_precision_types
func.func @mixed_precision_types(%a: tensor<2x8xbf16>, %b: tensor<8x4xbf16>, %h: tensor<3xf16>,
                                 %i: tensor<3xi32>) -> tensor<2x4xbf16> {
  // CHECK: memc.matmul %{{.*}} : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xbf16>
  %0 = memc.matmul %a, %b : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xbf16>
  // CHECK: memc.exp %{{.*}} : tensor<3xf16>
  %1 = memc.exp %h : tensor<3xf16>
  // CHECK: memc.add %{{.*}} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %2 = memc.add %i, %i : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<2x4xbf16>
}

// CHECK-LABEL: func @linear_algebra
func.func @linear_algebra(%x: tensor<2x16x32xf32>, %w: tensor<32x96xf32>, %g: tensor<32xf32>,
                          %v: tensor<5xf32>, %m: tensor<3x5x7xf32>)
    -> (tensor<2x16x96xf32>, tensor<3x7xf32>) {
  // CHECK: memc.matmul %{{.*}} : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
  %0 = memc.matmul %x, %w : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
  // A 1-D lhs is promoted to a row and the promoted dimension dropped.
  // CHECK: memc.matmul %{{.*}} : (tensor<5xf32>, tensor<3x5x7xf32>) -> tensor<3x7xf32>
  %1 = memc.matmul %v, %m : (tensor<5xf32>, tensor<3x5x7xf32>) -> tensor<3x7xf32>
  // CHECK: memc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64}
  %2 = memc.layer_norm %x, %g, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  // CHECK: memc.layer_norm %{{.*}}, %{{.*}} {axis = 2 : i64
  %3 = memc.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
  // CHECK: memc.softmax %{{.*}} {axis = 2 : i64}
  %4 = memc.softmax %3 {axis = 2 : i64} : tensor<2x16x32xf32>
  // CHECK: memc.log_softmax
  %5 = memc.log_softmax %4 {axis = 1 : i64} : tensor<2x16x32xf32>
  return %0, %1 : tensor<2x16x96xf32>, tensor<3x7xf32>
}

// CHECK-LABEL: func @reductions_and_layout
func.func @reductions_and_layout(%x: tensor<2x16x32xf32>, %i: tensor<2x16xi64>,
                                 %e: tensor<64x32xf32>) -> tensor<2x16x32xf32> {
  // CHECK: memc.reduce_mean %{{.*}} {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf32>) -> tensor<2x16x1xf32>
  %0 = memc.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x16x32xf32>) -> tensor<2x16x1xf32>
  // CHECK: memc.reduce_sum %{{.*}} -> tensor<32xf32>
  %1 = memc.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x16x32xf32>) -> tensor<32xf32>
  // CHECK: memc.reduce_max
  %2 = memc.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x16x32xf32>) -> tensor<2x32xf32>
  // CHECK: memc.transpose %{{.*}} {perm = array<i64: 0, 2, 1>} : (tensor<2x16x32xf32>) -> tensor<2x32x16xf32>
  %3 = memc.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x16x32xf32>) -> tensor<2x32x16xf32>
  // CHECK: memc.reshape %{{.*}} : tensor<2x16x32xf32> -> tensor<32x32xf32>
  %4 = memc.reshape %x : tensor<2x16x32xf32> -> tensor<32x32xf32>
  // CHECK: memc.broadcast_to %{{.*}} : tensor<2x16x1xf32> -> tensor<2x16x32xf32>
  %5 = memc.broadcast_to %0 : tensor<2x16x1xf32> -> tensor<2x16x32xf32>
  // CHECK: memc.concat %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x16x32xf32>, tensor<2x16x1xf32>) -> tensor<2x16x33xf32>
  %6 = memc.concat %x, %0 {axis = 2 : i64} : (tensor<2x16x32xf32>, tensor<2x16x1xf32>) -> tensor<2x16x33xf32>
  // CHECK: memc.split %{{.*}} -> (tensor<2x16x8xf32>, tensor<2x16x24xf32>)
  %7:2 = memc.split %x {axis = 2 : i64, sizes = array<i64: 8, 24>} : (tensor<2x16x32xf32>) -> (tensor<2x16x8xf32>, tensor<2x16x24xf32>)
  // CHECK: memc.slice %{{.*}} -> tensor<2x4x32xf32>
  %8 = memc.slice %x {starts = array<i64: 0, 15, 0>, limits = array<i64: 2, -1, 32>, steps = array<i64: 1, -4, 1>} : (tensor<2x16x32xf32>) -> tensor<2x4x32xf32>
  // CHECK: memc.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16x32xf32>
  %9 = memc.gather %e, %i {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16x32xf32>
  // CHECK: memc.constant dense<5.000000e-01> : tensor<2x16x32xf32>
  %10 = memc.constant dense<0.5> : tensor<2x16x32xf32>
  return %9 : tensor<2x16x32xf32>
}

// CHECK-LABEL: func @convolution
func.func @convolution(%x: tensor<2x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>,
                       %dw: tensor<8x1x3x3xf32>) -> tensor<2x8x4x4xf32> {
  // CHECK: memc.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  %0 = memc.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64}
      : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  // Depthwise: 8 groups of one channel each, no bias.
  // CHECK: memc.conv %{{.*}}, %{{.*}} {{{.*}}group = 8 : i64{{.*}}} : (tensor<2x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x8x8xf32>
  %1 = memc.conv %0, %dw {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64}
      : (tensor<2x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x8x8xf32>
  // CHECK: memc.batch_norm
  %2 = memc.batch_norm %1, %b, %b, %b, %b {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64, training = true}
      : (tensor<2x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
  // CHECK: memc.max_pool %{{.*}} -> tensor<2x8x4x4xf32>
  %3 = memc.max_pool %2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false}
      : (tensor<2x8x8x8xf32>) -> tensor<2x8x4x4xf32>
  // ceil_mode rounds up: (8 - 3) / 2 + 1 = 3.5 -> 4 windows.
  // CHECK: memc.avg_pool %{{.*}} -> tensor<2x8x4x4xf32>
  %4 = memc.avg_pool %2 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = false}
      : (tensor<2x8x8x8xf32>) -> tensor<2x8x4x4xf32>
  return %4 : tensor<2x8x4x4xf32>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x6x70x16xf32>, %k: tensor<2x2x70x16xf32>,
    %v: tensor<2x2x70x8xf32>, %mask: tensor<2x1x1x70xf32>, %do: tensor<2x6x70x8xf32>)
    -> (tensor<2x6x70x8xf32>, tensor<2x6x70x16xf32>, tensor<2x2x70x16xf32>, tensor<2x2x70x8xf32>) {
  // CHECK: memc.flash_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = true, scale = 2.500000e-01 : f64}
  // CHECK-SAME: -> (tensor<2x6x70x8xf32>, tensor<2x6x70xf32>)
  %o, %lse = memc.flash_attention %q, %k, %v, %mask {causal = true, scale = 0.25 : f64}
      : (tensor<2x6x70x16xf32>, tensor<2x2x70x16xf32>, tensor<2x2x70x8xf32>, tensor<2x1x1x70xf32>)
      -> (tensor<2x6x70x8xf32>, tensor<2x6x70xf32>)
  // CHECK: memc.flash_attention_grad
  // CHECK-SAME: -> (tensor<2x6x70x16xf32>, tensor<2x2x70x16xf32>, tensor<2x2x70x8xf32>)
  %dq, %dk, %dv = memc.flash_attention_grad %do, %q, %k, %v, %o, %lse, %mask
      {causal = true, scale = 0.25 : f64}
      : (tensor<2x6x70x8xf32>, tensor<2x6x70x16xf32>, tensor<2x2x70x16xf32>,
         tensor<2x2x70x8xf32>, tensor<2x6x70x8xf32>, tensor<2x6x70xf32>, tensor<2x1x1x70xf32>)
      -> (tensor<2x6x70x16xf32>, tensor<2x2x70x16xf32>, tensor<2x2x70x8xf32>)
  return %o, %dq, %dk, %dv
      : tensor<2x6x70x8xf32>, tensor<2x6x70x16xf32>, tensor<2x2x70x16xf32>, tensor<2x2x70x8xf32>
}

// Dropout on the probabilities: the salt follows the optional mask, with or without it.
// CHECK-LABEL: func @attention_dropout
func.func @attention_dropout(%q: tensor<1x2x9x8xf32>, %mask: tensor<1x1x1x9xf32>,
    %salt: tensor<i64>, %do: tensor<1x2x9x8xf32>) -> (tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>) {
  // CHECK: memc.flash_attention %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} salt %{{.*}} {causal = false, dropout_ratio = 1.000000e-01 : f64, scale = 5.000000e-01 : f64, seed = 3 : i64}
  %o, %lse = memc.flash_attention %q, %q, %q salt %salt
      {causal = false, dropout_ratio = 0.1 : f64, scale = 0.5 : f64, seed = 3 : i64}
      : (tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>, tensor<i64>)
      -> (tensor<1x2x9x8xf32>, tensor<1x2x9xf32>)
  // CHECK: memc.flash_attention_grad %{{.*}}, %{{[^,]*}} salt %{{.*}} {causal = false, dropout_ratio = 1.000000e-01 : f64, scale = 5.000000e-01 : f64, seed = 3 : i64}
  // CHECK-SAME: tensor<1x1x1x9xf32>, tensor<i64>)
  %dq, %dk, %dv = memc.flash_attention_grad %do, %q, %q, %q, %o, %lse, %mask salt %salt
      {causal = false, dropout_ratio = 0.1 : f64, scale = 0.5 : f64, seed = 3 : i64}
      : (tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>,
         tensor<1x2x9x8xf32>, tensor<1x2x9xf32>, tensor<1x1x1x9xf32>, tensor<i64>)
      -> (tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>)
  return %o, %dq : tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
}

// CHECK-LABEL: func @loss_scaling
func.func @loss_scaling(%g0: tensor<8x4xf16>, %g1: tensor<4xf32>, %e: tensor<f32>, %n: tensor<f32>,
                        %s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK: memc.non_finite_check %{{.*}}, %{{.*}} : (tensor<8x4xf16>, tensor<4xf32>) -> tensor<f32>
  %found = memc.non_finite_check %g0, %g1 : (tensor<8x4xf16>, tensor<4xf32>) -> tensor<f32>
  // CHECK: memc.loss_scale_update {{.*}} {dynamic = true, window = 2000 : i64}
  %e1, %n1, %s1 = memc.loss_scale_update %e, %n, %s, %found {window = 2000 : i64, dynamic = true}
      : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
  return %e1, %n1, %s1 : tensor<f32>, tensor<f32>, tensor<f32>
}
