// RUN: memc-opt %s --split-input-file --verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<4x16xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{shapes [4,16] [8] do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.add %a, %b : (tensor<4x16xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @wrong_result_shape(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4x8xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @contraction_mismatch(%a: tensor<4x16xf32>, %b: tensor<8x3xf32>) {
  // expected-error @+2 {{matmul contraction dimensions differ: [4,16] x [8,3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.matmul %a, %b : (tensor<4x16xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @transposed_contraction_mismatch(%a: tensor<16x4xf32>, %b: tensor<3x8xf32>) {
  // expected-error @+2 {{matmul contraction dimensions differ: [16,4]^T x [3,8]^T}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.matmul %a, %b {transpose_lhs, transpose_rhs} : (tensor<16x4xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @transposed_vector(%a: tensor<4x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+2 {{a transposed matmul operand must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.matmul %a, %b {transpose_rhs} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?x16xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %0 = memc.relu %a : tensor<?x16xf32>
  return
}

// -----

func.func @f64_not_supported(%a: tensor<4xf64>) {
  // expected-error @+1 {{must be statically shaped tensor of}}
  %0 = memc.exp %a : tensor<4xf64>
  return
}

// -----

func.func @reshape_count(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{element counts differ}}
  %0 = memc.reshape %a : tensor<4x16xf32> -> tensor<5x16xf32>
  return
}

// -----

func.func @broadcast_to_smaller(%a: tensor<4x16xf32>) {
  // expected-error @+1 {{cannot broadcast}}
  %0 = memc.broadcast_to %a : tensor<4x16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @bad_perm(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{transpose perm is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.transpose %a {perm = array<i64: 0, 0>} : (tensor<4x16xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @split_sizes(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{split sizes add up to 12, not the dimension's 16}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = memc.split %a {axis = 1 : i64, sizes = array<i64: 4, 8>} : (tensor<4x16xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>)
  return
}

// -----

func.func @slice_bounds(%a: tensor<4x16xf32>) {
  // expected-error @+2 {{slice bounds out of range in dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.slice %a {starts = array<i64: 0, 0>, limits = array<i64: 4, 17>, steps = array<i64: 1, 1>} : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @layer_norm_scale(%a: tensor<4x16xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{layer_norm scale/bias shape [8] differs from the normalized shape [16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.layer_norm %a, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x16xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<2x3x8x8xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{conv weight [8,2,3,3] does not fit input [2,3,8,8] with group 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<2x8x6x6xf32>
  return
}

// -----

func.func @gelu_mode(%a: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh"}}
  %0 = memc.gelu %a {approximate = "fast"} : tensor<4xf32>
  return
}

// -----

func.func @dropout_ratio(%a: tensor<4xf32>) {
  // expected-error @+1 {{ratio must be in [0, 1)}}
  %0 = memc.dropout %a {ratio = 1.0 : f64, seed = 0 : i64} : tensor<4xf32>
  return
}

// -----

func.func @softmax_axis(%a: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 out of range}}
  %0 = memc.softmax %a {axis = 2 : i64} : tensor<4x8xf32>
  return
}

// -----

func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error @+1 {{must be statically shaped tensor of 1-bit signless integer values}}
  %0 = memc.where %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @trilu_rank(%a: tensor<4xf32>) {
  // expected-error @+1 {{needs a tensor of rank >= 2}}
  %0 = memc.trilu %a {k = 0 : i64, upper = true} : tensor<4xf32>
  return
}

// -----

func.func @gather_padding_row(%w: tensor<4x5xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{padding_idx 4 is not a row of the 4-row table}}
  %0 = memc.gather %w, %i {axis = 0 : i64, padding_idx = 4 : i64} : (tensor<4x5xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  return
}

// -----

func.func @attention_heads_not_grouped(%q: tensor<1x6x8x4xf32>, %k: tensor<1x4x8x4xf32>) {
  // expected-error @+2 {{flash_attention kv heads (4) must be positive and divide the query heads (6)}}
  // expected-error @+1 {{failed to infer returned types}}
  %o, %lse = memc.flash_attention %q, %k, %k {causal = false, scale = 0.5 : f64}
      : (tensor<1x6x8x4xf32>, tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) -> (tensor<1x6x8x4xf32>, tensor<1x6x8xf32>)
  return
}

// -----

func.func @attention_mask_not_broadcast(%q: tensor<1x2x8x4xf32>, %m: tensor<1x2x8xf32>) {
  // expected-error @+2 {{flash_attention mask [1,2,8] must have rank 4 and broadcast to [1,2,8,8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o, %lse = memc.flash_attention %q, %q, %q, %m {causal = false, scale = 0.5 : f64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @attention_dropout_ratio(%q: tensor<1x2x8x4xf32>) {
  // expected-error @+1 {{dropout_ratio must be in [0, 1), got 1}}
  %o, %lse = memc.flash_attention %q, %q, %q {causal = false, dropout_ratio = 1.0 : f64, scale = 0.5 : f64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @attention_dropout_salt(%q: tensor<1x2x8x4xf32>, %salt: tensor<1xi64>) {
  // expected-error @+1 {{salt must be a scalar}}
  %o, %lse = memc.flash_attention %q, %q, %q salt %salt {causal = false, dropout_ratio = 0.1 : f64, scale = 0.5 : f64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1xi64>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @attention_scale(%q: tensor<1x2x8x4xf32>) {
  // expected-error @+1 {{scale must be finite and positive, got 0}}
  %o, %lse = memc.flash_attention %q, %q, %q {causal = false, scale = 0.0 : f64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8xf32>)
  return
}

// -----

func.func @attention_grad_wrong_logsumexp(%q: tensor<1x2x8x4xf32>, %lse: tensor<1x2x4xf32>) {
  // expected-error @+1 {{output and logsumexp must be the forward's, [1,2,8,4] and [1,2,8]}}
  %dq, %dk, %dv = memc.flash_attention_grad %q, %q, %q, %q, %q, %lse {causal = false, scale = 0.5 : f64}
      : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4xf32>)
      -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>)
  return
}

// -----

func.func @non_finite_check_of_nothing() -> tensor<f32> {
  // expected-error @+1 {{needs at least one gradient}}
  %found = memc.non_finite_check : () -> tensor<f32>
  return %found : tensor<f32>
}

// -----

func.func @loss_scale_window_zero(%e: tensor<f32>) {
  // expected-error @+1 {{window must be in [1, 16777216], got 0}}
  %e1, %n1, %s1 = memc.loss_scale_update %e, %e, %e, %e {window = 0 : i64, dynamic = true}
      : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @rms_norm_scale(%a: tensor<4x16xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{rms_norm scale shape [8] differs from the normalized shape [16] of input [4,16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.rms_norm %a, %g {axis = 1 : i64, epsilon = 1.0e-06 : f64} : (tensor<4x16xf32>, tensor<8xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @rms_norm_grad_axis(%dy: tensor<4x16xf32>, %a: tensor<4x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+1 {{rms_norm axis 2 out of range for input [4,16]}}
  %0, %1 = memc.rms_norm_grad %dy, %a, %g {axis = 2 : i64, epsilon = 1.0e-06 : f64} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @bias_gelu_bias_shape(%a: tensor<4x16xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{bias shape [4] is not the last dimension of input [4,16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = memc.bias_gelu %a, %b : (tensor<4x16xf32>, tensor<4xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @bias_gelu_mode(%a: tensor<4x16xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = memc.bias_gelu %a, %b {approximate = "fast"} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @bias_gelu_grad_bias_shape(%g: tensor<4x16xf32>, %a: tensor<4x16xf32>, %b: tensor<1x16xf32>) {
  // expected-error @+1 {{bias shape [1,16] is not the last dimension of input [4,16]}}
  %0 = memc.bias_gelu_grad %g, %a, %b : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1x16xf32>) -> tensor<4x16xf32>
  return
}

// -----

func.func @add_layer_norm_addends(%a: tensor<4x16xf32>, %r: tensor<1x16xf32>, %g: tensor<16xf32>) {
  // expected-error @+2 {{add_layer_norm adds two tensors of one type, not [4,16] and [1,16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = memc.add_layer_norm %a, %r, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x16xf32>, tensor<1x16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return
}

// -----

func.func @add_layer_norm_scale(%a: tensor<4x16xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{layer_norm scale/bias shape [8] differs from the normalized shape [16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = memc.add_layer_norm %a, %a, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<8xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>)
  return
}
