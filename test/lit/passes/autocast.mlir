// RUN: memc-opt --memc-autocast --split-input-file %s | FileCheck %s
// RUN: memc-opt --memc-autocast --canonicalize --split-input-file %s | FileCheck %s --check-prefix=FOLD

// A linear layer: the input and the weight are cast to bf16 once, the weight at the entry; the
// bias follows the bf16 matmul it is added to; relu follows its bf16 operand; the second use of
// the weight shares its cast. The result goes back to the declared f32.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32> {memc.input = "x"}, %[[W:.*]]: tensor<8x8xf32> {{.*}}, %[[B:.*]]: tensor<8xf32> {{.*}}) -> (tensor<4x8xf32>
// CHECK-NEXT: %[[BL:.*]] = memc.cast %[[B]] : tensor<8xf32> -> tensor<8xbf16>
// CHECK-NEXT: %[[WL:.*]] = memc.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-NEXT: %[[XL:.*]] = memc.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: %[[H:.*]] = memc.matmul %[[XL]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[Y:.*]] = memc.add %[[H]], %[[BL]] : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[R:.*]] = memc.relu %[[Y]] : tensor<4x8xbf16>
// CHECK-NEXT: %[[Z:.*]] = memc.matmul %[[R]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[ZF:.*]] = memc.cast %[[Z]] : tensor<4x8xbf16> -> tensor<4x8xf32>
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

// The f32 list: softmax, exp and sums read one f32 cast of the bf16 matmul result, shared by all
// three (once per value, never per use). A residual add of f32 and bf16 activations is f32.
// CHECK-LABEL: func @fp32_list
// CHECK: %[[S:.*]] = memc.matmul {{.*}} -> tensor<4x8xbf16>
// CHECK-NEXT: %[[SF:.*]] = memc.cast %[[S]] : tensor<4x8xbf16> -> tensor<4x8xf32>
// CHECK-NEXT: memc.softmax %[[SF]] {axis = 1 : i64} : tensor<4x8xf32>
// CHECK-NEXT: memc.exp %[[SF]] : tensor<4x8xf32>
// CHECK-NEXT: memc.reduce_sum %[[SF]] {{.*}} -> tensor<4xf32>
// CHECK-NEXT: memc.add %{{.*}}, %[[SF]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return
func.func @fp32_list(%x: tensor<4x8xf32> {memc.input = "x"},
                     %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %s = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %p = memc.softmax %s {axis = 1 : i64} : tensor<4x8xf32>
  %e = memc.exp %s : tensor<4x8xf32>
  %r = memc.reduce_sum %s {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
  %a = memc.add %p, %s : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %p, %e, %r, %a : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}

// -----

// No cancelling pair is built: after a round trip through an f32 op, the next matmul reads the
// bf16 value it started from (not a cast of its f32 cast), and the f32 op reads the original
// f32 input, not a cast back of its bf16 copy.
// CHECK-LABEL: func @no_round_trips
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x4xf32>
// CHECK: %[[XL:.*]] = memc.cast %[[X]] : tensor<4x4xf32> -> tensor<4x4xbf16>
// CHECK: %[[H:.*]] = memc.matmul %[[XL]], %[[XL]]
// CHECK-NEXT: %[[HF:.*]] = memc.cast %[[H]] : tensor<4x4xbf16> -> tensor<4x4xf32>
// CHECK-NEXT: memc.exp %[[HF]]
// CHECK-NEXT: memc.log %[[X]]
// CHECK-NEXT: memc.matmul %[[H]], %[[XL]]
// CHECK-NOT: memc.cast %[[HF]]
func.func @no_round_trips(%x: tensor<4x4xf32> {memc.input = "x"})
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %h = memc.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = memc.exp %h : tensor<4x4xf32>
  %l = memc.log %x : tensor<4x4xf32>
  %g = memc.matmul %h, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %e, %l, %g : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A scalar constant follows the bf16 activation it scales; canonicalize folds its cast into a
// bf16 constant. Ops on weights alone (a transpose) stay f32 and their result is cast once.
// CHECK-LABEL: func @constants_and_weights
// CHECK: %[[T:.*]] = memc.transpose %{{.*}} : (tensor<8x4xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: memc.cast %[[T]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: memc.mul {{.*}} : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
// FOLD-LABEL: func @constants_and_weights
// FOLD-DAG: memc.constant dense<1.250000e-01> : tensor<bf16>
// FOLD-NOT: memc.constant dense<1.250000e-01> : tensor<f32>
func.func @constants_and_weights(%x: tensor<4x4xf32> {memc.input = "x"},
                                 %w: tensor<8x4xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> tensor<4x8xf32> {
  %scale = memc.constant dense<0.125> : tensor<f32>
  %t = memc.transpose %w {perm = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %h = memc.matmul %x, %t : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = memc.mul %h, %scale : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Batch norm keeps the bf16 data of the convolution before it; its parameters and running
// statistics stay f32 (the kernel's statistics are f32).
// CHECK-LABEL: func @conv_batch_norm
// CHECK: %[[C:.*]] = memc.conv {{.*}} -> tensor<2x4x6x6xbf16>
// CHECK-NEXT: memc.batch_norm %[[C]], {{.*}} : (tensor<2x4x6x6xbf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xbf16>
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

// bias_gelu keeps the bf16 data of the matmul before it, and its bias stays f32 (not rounded
// to bf16 as the unfused add's bias is, @linear).
// CHECK-LABEL: func @matmul_bias_gelu
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<8xf32>
// CHECK: %[[H:.*]] = memc.matmul {{.*}} -> tensor<4x8xbf16>
// CHECK-NEXT: %[[Y:.*]] = memc.bias_gelu %[[H]], %[[B]] {approximate = "tanh"} : (tensor<4x8xbf16>, tensor<8xf32>) -> tensor<4x8xbf16>
func.func @matmul_bias_gelu(%x: tensor<4x8xf32> {memc.input = "x"},
                            %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"},
                            %b: tensor<8xf32> {memc.param = "b", memc.param_kind = "parameter"})
    -> (tensor<4x8xf32> {memc.output = "y"}) {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = memc.bias_gelu %0, %b {approximate = "tanh"} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %2 = memc.matmul %1, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Casts that cancel fold: widening to f32 and back is exact, so it folds; narrowing to bf16 and
// back loses bits, so it stays.
// FOLD-LABEL: func @cancelling_casts
// FOLD-SAME: (%[[H:.*]]: tensor<4xbf16>, %[[F:.*]]: tensor<4xf32>)
// FOLD-NEXT: %[[N:.*]] = memc.cast %[[F]] : tensor<4xf32> -> tensor<4xbf16>
// FOLD-NEXT: %[[B:.*]] = memc.cast %[[N]] : tensor<4xbf16> -> tensor<4xf32>
// FOLD-NEXT: return %[[H]], %[[B]]
func.func @cancelling_casts(%h: tensor<4xbf16>, %f: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %0 = memc.cast %h : tensor<4xbf16> -> tensor<4xf32>
  %1 = memc.cast %0 : tensor<4xf32> -> tensor<4xbf16>
  %2 = memc.cast %f : tensor<4xf32> -> tensor<4xbf16>
  %3 = memc.cast %2 : tensor<4xbf16> -> tensor<4xf32>
  return %1, %3 : tensor<4xbf16>, tensor<4xf32>
}

// -----

// Softmax and layer norm compute in f32 and store bf16 where every reader takes their result in
// bf16 (a matmul, here through a transpose): the norm reads one bf16 cast of its f32 input (the
// copy its backward saves; the f32 input itself is not saved), its scale and bias stay f32, and
// the softmax's probabilities are bf16 with no f32 copy beside them.
// CHECK-LABEL: func @stores_low
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x8xf32> {memc.input = "x"}, %[[G:[a-z0-9]+]]: tensor<8xf32> {{.*}}, %[[B:[a-z0-9]+]]: tensor<8xf32> {{.*}}, %[[W:[a-z0-9]+]]: tensor<8x8xf32>
// CHECK-DAG: %[[WL:.*]] = memc.cast %[[W]] : tensor<8x8xf32> -> tensor<8x8xbf16>
// CHECK-DAG: %[[XL:.*]] = memc.cast %[[X]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[N:.*]] = memc.layer_norm %[[XL]], %[[G]], %[[B]] {{.*}} : (tensor<4x8xbf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[H:.*]] = memc.matmul %[[N]], %[[WL]] : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT: %[[P:.*]] = memc.softmax %[[H]] {axis = 1 : i64} : tensor<4x8xbf16>
// CHECK-NEXT: %[[T:.*]] = memc.transpose %[[P]] {{.*}} -> tensor<8x4xbf16>
// CHECK-NEXT: %[[Y:.*]] = memc.matmul %[[T]], %[[H]] : (tensor<8x4xbf16>, tensor<4x8xbf16>) -> tensor<8x8xbf16>
// CHECK-NEXT: %[[YF:.*]] = memc.cast %[[Y]] : tensor<8x8xbf16> -> tensor<8x8xf32>
// CHECK-NEXT: return %[[YF]]
func.func @stores_low(%x: tensor<4x8xf32> {memc.input = "x"},
                      %g: tensor<8xf32> {memc.param = "g", memc.param_kind = "parameter"},
                      %b: tensor<8xf32> {memc.param = "b", memc.param_kind = "parameter"},
                      %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<8x8xf32> {memc.output = "y"}) {
  %n = memc.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %h = memc.matmul %n, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %p = memc.softmax %h {axis = 1 : i64} : tensor<4x8xf32>
  %t = memc.transpose %p {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %y = memc.matmul %t, %h : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// A post-norm block: the norm's output is the residual stream (a matmul and the next residual
// add read it), so the norm stays f32 as under torch.autocast and its matmul reads a bf16 cast.
// CHECK-LABEL: func @post_norm_stays_f32
// CHECK: %[[R:.*]] = memc.add {{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[N:.*]] = memc.layer_norm %[[R]], {{.*}} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[NL:.*]] = memc.cast %[[N]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: memc.matmul %[[NL]]
// CHECK: memc.add %[[N]], %{{.*}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
func.func @post_norm_stays_f32(%x: tensor<4x8xf32> {memc.input = "x"},
                               %g: tensor<8xf32> {memc.param = "g", memc.param_kind = "parameter"},
                               %b: tensor<8xf32> {memc.param = "b", memc.param_kind = "parameter"},
                               %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x8xf32> {memc.output = "y"}) {
  %h = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = memc.add %x, %h : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = memc.layer_norm %r, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %f = memc.matmul %n, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = memc.add %n, %f : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// RMS norm computes in f32 on its f32 input (the residual stream) and its bf16-reading matmul
// takes one cast of the f32 result: the backward saves the stream itself, where a bf16 copy of
// it took Llama's bf16 loss from 1.1x to 1.9x of autocast's deviation (docs/design.md).
// CHECK-LABEL: func @rms_norm_stays_f32
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4x8xf32> {memc.input = "x"}, %[[G:[a-z0-9]+]]: tensor<8xf32>
// CHECK: %[[N:.*]] = memc.rms_norm %[[X]], %[[G]] {{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[NL:.*]] = memc.cast %[[N]] : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT: memc.matmul %[[NL]], %{{.*}} : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
func.func @rms_norm_stays_f32(%x: tensor<4x8xf32> {memc.input = "x"},
                              %g: tensor<8xf32> {memc.param = "g", memc.param_kind = "parameter"},
                              %w: tensor<8x8xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x8xf32> {memc.output = "y"}) {
  %n = memc.rms_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-06 : f64}
      : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %f = memc.matmul %n, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %f : tensor<4x8xf32>
}
