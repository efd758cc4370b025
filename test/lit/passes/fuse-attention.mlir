// RUN: memc-opt --memc-fuse-attention="remark-unfused=true" --split-input-file --verify-diagnostics %s | FileCheck %s

// GPT-2 as torch.onnx.export writes it: k^T from the [B,T,H,D] heads in one transpose, the scores
// scaled by Mul, masked_fill through Equal/Where with -inf. The where becomes the additive mask,
// k's transpose the heads transpose.
// CHECK-LABEL: func @gpt2_style
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x16x4x8xf32>, %[[V:.*]]: tensor<2x4x16x8xf32>, %[[BIAS:.*]]: tensor<1x1x16x16xf32>)
// CHECK-SAME: attributes {memc.attention_fused = 1 : i64, memc.attention_unfused = []}
// CHECK: %[[HIDE:.*]] = memc.equal %[[BIAS]]
// CHECK: %[[KH:.*]] = memc.transpose %[[K]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: %[[MASK:.*]] = memc.where %[[HIDE]], %{{.*}}, %{{.*}} : (tensor<1x1x16x16xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x16x16xf32>
// CHECK: %[[O:.*]], %{{.*}} = memc.flash_attention %[[Q]], %[[KH]], %[[V]], %[[MASK]] {causal = false, scale = 0.35355338454246521 : f64}
// CHECK-NOT: memc.softmax
// CHECK: return %[[O]]
func.func @gpt2_style(%q: tensor<2x4x16x8xf32>, %k: tensor<2x16x4x8xf32>, %v: tensor<2x4x16x8xf32>,
                      %bias: tensor<1x1x16x16xf32>) -> tensor<2x4x16x8xf32> {
  %ninf = memc.constant dense<0xFF800000> : tensor<f32>
  %zero = memc.constant dense<0.0> : tensor<f32>
  %scale = memc.constant dense<0.353553385> : tensor<f32>
  %kt = memc.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x16x4x8xf32>) -> tensor<2x4x8x16xf32>
  %s = memc.matmul %q, %kt : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %s1 = memc.mul %s, %scale : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %c = memc.equal %bias, %zero : (tensor<1x1x16x16xf32>, tensor<f32>) -> tensor<1x1x16x16xi1>
  %s2 = memc.where %c, %ninf, %s1 : (tensor<1x1x16x16xi1>, tensor<f32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = memc.softmax %s2 {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %o = memc.matmul %p, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Llama: the scores divided by sqrt(d), an additive [T,T] mask; k^T = transpose(k, [0,1,3,2])
// is absorbed entirely.
// CHECK-LABEL: func @llama_style
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>, %[[V:.*]]: tensor<2x4x16x8xf32>, %[[M:.*]]: tensor<16x16xf32>)
// CHECK: %[[M4:.*]] = memc.reshape %[[M]] : tensor<16x16xf32> -> tensor<1x1x16x16xf32>
// CHECK: memc.flash_attention %[[Q]], %[[K]], %[[V]], %[[M4]] {causal = false, scale = 0.35355339{{[0-9]*}} : f64}
// CHECK-NOT: memc.softmax
func.func @llama_style(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>,
                       %mask: tensor<16x16xf32>) -> tensor<2x4x16x8xf32> {
  %sqrtd = memc.constant dense<2.82842708> : tensor<f32>
  %kt = memc.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x16x8xf32>) -> tensor<2x4x8x16xf32>
  %s = memc.matmul %q, %kt : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %s1 = memc.div %s, %sqrtd : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %s2 = memc.add %s1, %mask : (tensor<2x4x16x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = memc.softmax %s2 {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %o = memc.matmul %p, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// nn.MultiheadAttention: [B*H, T, D], q scaled before the product, k^T a transpose of the heads.
// CHECK-LABEL: func @multihead_rank3
// CHECK: %[[K:.*]] = memc.transpose %{{.*}} {perm = array<i64: 1, 0, 2>} : (tensor<16x8x8xf32>) -> tensor<8x16x8xf32>
// CHECK: %[[K4:.*]] = memc.reshape %[[K]] : tensor<8x16x8xf32> -> tensor<1x8x16x8xf32>
// CHECK: %[[O:.*]], %{{.*}} = memc.flash_attention %{{.*}}, %[[K4]], %{{.*}} {causal = false, scale = 0.35355339{{[0-9]*}} : f64}
// CHECK: %[[O3:.*]] = memc.reshape %[[O]] : tensor<1x8x16x8xf32> -> tensor<8x16x8xf32>
// CHECK: return %[[O3]]
func.func @multihead_rank3(%q: tensor<8x16x8xf32>, %k: tensor<16x8x8xf32>, %v: tensor<8x16x8xf32>)
    -> tensor<8x16x8xf32> {
  %sqrtd = memc.constant dense<2.82842708> : tensor<f32>
  %qs = memc.div %q, %sqrtd : (tensor<8x16x8xf32>, tensor<f32>) -> tensor<8x16x8xf32>
  %kt = memc.transpose %k {perm = array<i64: 1, 2, 0>} : (tensor<16x8x8xf32>) -> tensor<8x8x16xf32>
  %s = memc.matmul %qs, %kt : (tensor<8x16x8xf32>, tensor<8x8x16xf32>) -> tensor<8x16x16xf32>
  %p = memc.softmax %s {axis = 2 : i64} : tensor<8x16x16xf32>
  %o = memc.matmul %p, %v : (tensor<8x16x16xf32>, tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}

// -----

// The probabilities are returned too (attention weights as an output): they must exist, so the
// attention stays as it is.
// CHECK-LABEL: func @probabilities_used
// CHECK-SAME: attributes {memc.attention_fused = 0 : i64, memc.attention_unfused = {{\[\[}}"{{.*}}", "the probabilities are used by more than the product with v"]]}
// CHECK: memc.softmax
// CHECK-NOT: memc.flash_attention
// expected-remark @+1 {{attention not fused at}}
func.func @probabilities_used(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>)
    -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = memc.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = memc.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = memc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// The mask added before the scaling is scaled too: not an additive mask of the op.
// CHECK-LABEL: func @scaled_mask
// CHECK: memc.softmax
// expected-remark @+1 {{the mask is scaled with the scores}}
func.func @scaled_mask(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>,
                       %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %scale = memc.constant dense<0.5> : tensor<f32>
  %s = memc.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %s1 = memc.add %s, %mask : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
  %s2 = memc.mul %s1, %scale : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = memc.softmax %s2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = memc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A masked_fill with a value that does not hide the key (0): where(c, 0, s) is no additive mask.
// CHECK-LABEL: func @fill_not_hiding
// CHECK: memc.softmax
// expected-remark @+1 {{a masked_fill with a value that does not hide the key}}
func.func @fill_not_hiding(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>,
                           %c: tensor<4x4xi1>) -> tensor<1x2x4x8xf32> {
  %zero = memc.constant dense<0.0> : tensor<f32>
  %s = memc.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %s1 = memc.where %c, %zero, %s : (tensor<4x4xi1>, tensor<f32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = memc.softmax %s1 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = memc.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Grouped-query attention as Llama-3 exports repeat_kv: [B,2,T,D] unsqueezed, expanded to
// [B,2,3,T,D] and reshaped to 6 heads. The op reads the 2 kv heads itself; the repeats go.
// CHECK-LABEL: func @gqa_repeat_kv
// CHECK-SAME: (%[[Q:.*]]: tensor<1x6x16x8xf32>, %[[K:.*]]: tensor<1x2x16x8xf32>, %[[V:.*]]: tensor<1x2x16x8xf32>)
// CHECK-NOT: memc.broadcast_to
// CHECK: memc.flash_attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 0.35355339{{[0-9]*}} : f64} : (tensor<1x6x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>)
// CHECK-NOT: memc.broadcast_to
func.func @gqa_repeat_kv(%q: tensor<1x6x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>)
    -> tensor<1x6x16x8xf32> {
  %sqrtd = memc.constant dense<2.82842708> : tensor<f32>
  %k5 = memc.reshape %k : tensor<1x2x16x8xf32> -> tensor<1x2x1x16x8xf32>
  %ke = memc.broadcast_to %k5 : tensor<1x2x1x16x8xf32> -> tensor<1x2x3x16x8xf32>
  %kr = memc.reshape %ke : tensor<1x2x3x16x8xf32> -> tensor<1x6x16x8xf32>
  %v5 = memc.reshape %v : tensor<1x2x16x8xf32> -> tensor<1x2x1x16x8xf32>
  %ve = memc.broadcast_to %v5 : tensor<1x2x1x16x8xf32> -> tensor<1x2x3x16x8xf32>
  %vr = memc.reshape %ve : tensor<1x2x3x16x8xf32> -> tensor<1x6x16x8xf32>
  %kt = memc.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x6x16x8xf32>) -> tensor<1x6x8x16xf32>
  %s = memc.matmul %q, %kt : (tensor<1x6x16x8xf32>, tensor<1x6x8x16xf32>) -> tensor<1x6x16x16xf32>
  %s1 = memc.div %s, %sqrtd : (tensor<1x6x16x16xf32>, tensor<f32>) -> tensor<1x6x16x16xf32>
  %p = memc.softmax %s1 {axis = 3 : i64} : tensor<1x6x16x16xf32>
  %o = memc.matmul %p, %vr : (tensor<1x6x16x16xf32>, tensor<1x6x16x8xf32>) -> tensor<1x6x16x8xf32>
  return %o : tensor<1x6x16x8xf32>
}

// -----

// Llama's causal mask, trilu(-inf, k = 1) over [T, T]: the op's causal attribute, no mask.
// CHECK-LABEL: func @llama_causal_trilu
// CHECK-NOT: memc.trilu
// CHECK: memc.flash_attention %{{.*}}, %{{.*}}, %{{.*}} {causal = true, scale = 0.35355339{{[0-9]*}} : f64} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
func.func @llama_causal_trilu(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>)
    -> tensor<2x4x16x8xf32> {
  %sqrtd = memc.constant dense<2.82842708> : tensor<f32>
  %ninf = memc.constant dense<0xFF800000> : tensor<16x16xf32>
  %mask = memc.trilu %ninf {k = 1 : i64, upper = true} : tensor<16x16xf32>
  %kt = memc.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x16x8xf32>) -> tensor<2x4x8x16xf32>
  %s = memc.matmul %q, %kt : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %s1 = memc.div %s, %sqrtd : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
  %s2 = memc.add %s1, %mask : (tensor<2x4x16x16xf32>, tensor<16x16xf32>) -> tensor<2x4x16x16xf32>
  %p = memc.softmax %s2 {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %o = memc.matmul %p, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// A Trilu mask that is not the causal cut (k = 2 lets each query see one key ahead) stays a mask.
// CHECK-LABEL: func @trilu_not_causal
// CHECK: memc.trilu
// CHECK: memc.flash_attention {{.*}} {causal = false
func.func @trilu_not_causal(%q: tensor<1x1x4x8xf32>, %kt: tensor<1x1x8x4xf32>, %v: tensor<1x1x4x8xf32>)
    -> tensor<1x1x4x8xf32> {
  %ninf = memc.constant dense<0xFF800000> : tensor<4x4xf32>
  %mask = memc.trilu %ninf {k = 2 : i64, upper = true} : tensor<4x4xf32>
  %s = memc.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %s1 = memc.add %s, %mask : (tensor<1x1x4x4xf32>, tensor<4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = memc.softmax %s1 {axis = 3 : i64} : tensor<1x1x4x4xf32>
  %o = memc.matmul %p, %v : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return %o : tensor<1x1x4x8xf32>
}

// -----

// nn.TransformerEncoderLayer with src_key_padding_mask, as torch 1.13 exports it: the padding
// mask from the inputs becomes [B*H, 1, T] and joins the scores through baddbmm (both sides
// times beta = alpha = 1). The mask stays [B*H, 1, T]: O(T) per head, never [T, T].
// CHECK-LABEL: func @key_padding_rank3
// CHECK: %[[M:.*]] = memc.mul %{{.*}}, %{{.*}} : (tensor<8x1x16xf32>, tensor<f32>) -> tensor<8x1x16xf32>
// CHECK: %[[M4:.*]] = memc.reshape %[[M]] : tensor<8x1x16xf32> -> tensor<1x8x1x16xf32>
// CHECK: memc.flash_attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M4]] {causal = false, scale = 0.35355339{{[0-9]*}} : f64}
// CHECK-NOT: memc.softmax
func.func @key_padding_rank3(%q: tensor<8x16x8xf32>, %kt: tensor<8x8x16xf32>, %v: tensor<8x16x8xf32>,
                             %pad: tensor<2x16xi1>) -> tensor<8x16x8xf32> {
  %one = memc.constant dense<1.0> : tensor<f32>
  %ninf = memc.constant dense<0xFF800000> : tensor<f32>
  %zeros = memc.constant dense<0.0> : tensor<8x1x16xf32>
  %sqrtd = memc.constant dense<2.82842708> : tensor<f32>
  %p4 = memc.reshape %pad : tensor<2x16xi1> -> tensor<2x1x1x16xi1>
  %pe = memc.broadcast_to %p4 : tensor<2x1x1x16xi1> -> tensor<2x4x1x16xi1>
  %p3 = memc.reshape %pe : tensor<2x4x1x16xi1> -> tensor<8x1x16xi1>
  %mask = memc.where %p3, %ninf, %zeros : (tensor<8x1x16xi1>, tensor<f32>, tensor<8x1x16xf32>) -> tensor<8x1x16xf32>
  %qs = memc.div %q, %sqrtd : (tensor<8x16x8xf32>, tensor<f32>) -> tensor<8x16x8xf32>
  %s = memc.matmul %qs, %kt : (tensor<8x16x8xf32>, tensor<8x8x16xf32>) -> tensor<8x16x16xf32>
  %s1 = memc.mul %s, %one : (tensor<8x16x16xf32>, tensor<f32>) -> tensor<8x16x16xf32>
  %m1 = memc.mul %mask, %one : (tensor<8x1x16xf32>, tensor<f32>) -> tensor<8x1x16xf32>
  %s2 = memc.add %s1, %m1 : (tensor<8x16x16xf32>, tensor<8x1x16xf32>) -> tensor<8x16x16xf32>
  %p = memc.softmax %s2 {axis = 2 : i64} : tensor<8x16x16xf32>
  %o = memc.matmul %p, %v : (tensor<8x16x16xf32>, tensor<8x16x8xf32>) -> tensor<8x16x8xf32>
  return %o : tensor<8x16x8xf32>
}

// -----

// After canonicalization k^T is the scores product's transpose_rhs flag: k is read as it is.
// A product that reads v or the probabilities transposed is not an attention the op expresses.
// CHECK-LABEL: func @key_read_transposed
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>, %[[V:.*]]: tensor<2x4x16x8xf32>)
// CHECK: %[[O:.*]], %{{.*}} = memc.flash_attention %[[Q]], %[[K]], %[[V]] {causal = false, scale = 1.000000e+00 : f64}
// CHECK-NOT: memc.softmax
// CHECK: return %[[O]]
func.func @key_read_transposed(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                               %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %s = memc.matmul %q, %k {transpose_rhs} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  %p = memc.softmax %s {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %o = memc.matmul %p, %v : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func @value_read_transposed
// CHECK-SAME: memc.attention_fused = 0
// CHECK-SAME: "q, the probabilities or v are read transposed by their product"
// CHECK: memc.softmax
// expected-remark @+1 {{attention not fused at}}
func.func @value_read_transposed(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                                 %vt: tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf32> {
  %s = memc.matmul %q, %k {transpose_rhs} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  %p = memc.softmax %s {axis = 3 : i64} : tensor<2x4x16x16xf32>
  %o = memc.matmul %p, %vt {transpose_rhs} : (tensor<2x4x16x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Dropout on the probabilities becomes the op's (its ratio, seed and salt): the mask is drawn
// by the same flat index in the same [B, H, Tq, Tk] probabilities.
// CHECK-LABEL: func @dropout_probabilities
// CHECK-SAME: memc.attention_fused = 1 : i64
// CHECK-NOT: memc.dropout
// CHECK: memc.flash_attention %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}} salt %arg3 {causal = false, dropout_ratio = 1.000000e-01 : f64, scale = 1.000000e+00 : f64, seed = 7 : i64}
// CHECK-NOT: memc.dropout
func.func @dropout_probabilities(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>,
                                 %v: tensor<1x2x4x8xf32>, %salt: tensor<i64>) -> tensor<1x2x4x8xf32> {
  %s = memc.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = memc.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %d = memc.dropout %p salt %salt {ratio = 0.1 : f64, seed = 7 : i64} : tensor<1x2x4x4xf32>, tensor<i64>
  %o = memc.matmul %d, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The dropped probabilities are returned too: they must exist, so the attention stays.
// CHECK-LABEL: func @dropped_probabilities_used
// CHECK-SAME: memc.attention_unfused = {{\[\[}}"{{.*}}", "the probabilities are used by more than the product with v"]]
// CHECK: memc.dropout
// CHECK-NOT: memc.flash_attention
// expected-remark @+1 {{attention not fused at}}
func.func @dropped_probabilities_used(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>,
                                      %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = memc.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = memc.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %d = memc.dropout %p {ratio = 0.1 : f64, seed = 7 : i64} : tensor<1x2x4x4xf32>
  %o = memc.matmul %d, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %d : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// kv heads repeated whole along the head axis (Tile: head h reads kv head h % 2) would need q's
// heads reordered, which would move the dropout's mask: the repeats stay and the heads keep
// their order.
// CHECK-LABEL: func @dropout_interleaved_repeats
// CHECK-SAME: memc.attention_fused = 1 : i64
// CHECK-NOT: memc.transpose
// CHECK: memc.broadcast_to
// CHECK: memc.flash_attention {{.*}}dropout_ratio = 2.000000e-01 : f64{{.*}} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>)
func.func @dropout_interleaved_repeats(%q: tensor<1x4x4x8xf32>, %k: tensor<1x1x2x4x8xf32>,
                                       %v: tensor<1x1x2x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %kb = memc.broadcast_to %k : tensor<1x1x2x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %kr = memc.reshape %kb : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %vb = memc.broadcast_to %v : tensor<1x1x2x4x8xf32> -> tensor<1x2x2x4x8xf32>
  %vr = memc.reshape %vb : tensor<1x2x2x4x8xf32> -> tensor<1x4x4x8xf32>
  %s = memc.matmul %q, %kr {transpose_rhs} : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x4xf32>
  %p = memc.softmax %s {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %d = memc.dropout %p {ratio = 0.2 : f64, seed = 1 : i64} : tensor<1x4x4x4xf32>
  %o = memc.matmul %d, %vr : (tensor<1x4x4x4xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %o : tensor<1x4x4x8xf32>
}

// -----

// A classifier's softmax over a linear layer's logits feeds no product: no attention, fused or
// not (the report used to count it as an unfused attention).
// CHECK-LABEL: func @classifier_softmax
// CHECK-SAME: attributes {memc.attention_fused = 0 : i64, memc.attention_unfused = []}
// CHECK: memc.softmax
func.func @classifier_softmax(%x: tensor<4x16xf32>, %w: tensor<16x10xf32>) -> tensor<4x10xf32> {
  %logits = memc.matmul %x, %w : (tensor<4x16xf32>, tensor<16x10xf32>) -> tensor<4x10xf32>
  %p = memc.softmax %logits {axis = 1 : i64} : tensor<4x10xf32>
  return %p : tensor<4x10xf32>
}
