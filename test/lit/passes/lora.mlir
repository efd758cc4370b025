// RUN: memc-opt '--memc-lora=rank=2 alpha=8 targets=q_proj' %s | FileCheck %s
// RUN: memc-opt '--memc-lora=rank=2 alpha=8 targets=q_proj quantize-base=nf4' %s | FileCheck %s --check-prefix=NF4
// RUN: memc-opt '--memc-lora=rank=2 alpha=8 targets=q_proj quantize-base=nf4 double-quant=false' %s | FileCheck %s --check-prefix=PLAIN
// RUN: memc-opt '--memc-lora=rank=2 targets=all-linear' %s | FileCheck %s --check-prefix=ALL
// RUN: memc %fixtures/mlp.onnx | memc-opt '--memc-lora=rank=1 targets=all-linear' | FileCheck %s --check-prefix=BIAS
// RUN: not memc-opt '--memc-lora=rank=2 targets=nothing' %s 2>&1 | FileCheck %s --check-prefix=UNMATCHED
// RUN: not memc-opt '--memc-lora=rank=9 targets=q_proj' %s 2>&1 | FileCheck %s --check-prefix=RANK

// memc-lora (issue 25): PEFT's adapters beside the targeted product, y = x W^T + (alpha / r)
// x A^T B^T, with A [r, in] kaiming-uniform and B [out, r] zeros, made when the program is
// written (memc.derived); the glob matches a dot-separated suffix of the module name, as PEFT's
// target_modules do.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x16xf32>
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8x16xf32> {memc.param = "layers.0.q_proj.weight", memc.param_kind = "parameter"}
// CHECK-SAME: %[[A:[a-z0-9]+]]: tensor<2x16xf32> {memc.derived = "kaiming_uniform", memc.param = "layers.0.q_proj.lora_A.weight", memc.param_kind = "parameter"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<8x2xf32> {memc.derived = "zeros", memc.param = "layers.0.q_proj.lora_B.weight", memc.param_kind = "parameter"}
// CHECK: %[[Y:.*]] = memc.matmul %[[X]], %[[W]] {transpose_rhs}
// CHECK: %[[DOWN:.*]] = memc.matmul %[[X]], %[[A]] {transpose_rhs} : (tensor<4x16xf32>, tensor<2x16xf32>) -> tensor<4x2xf32>
// CHECK: %[[UP:.*]] = memc.matmul %[[DOWN]], %[[B]] {transpose_rhs} : (tensor<4x2xf32>, tensor<8x2xf32>) -> tensor<4x8xf32>
// CHECK: %[[SCALE:.*]] = memc.constant dense<4.000000e+00> : tensor<f32>
// CHECK: %[[SCALED:.*]] = memc.mul %[[UP]], %[[SCALE]]
// CHECK: %[[SUM:.*]] = memc.add %[[Y]], %[[SCALED]]
// CHECK: memc.relu %[[SUM]]

// The frozen base stored as NF4 (QLoRA): the q_proj weight (8 x 16 = 128 values: 64 bytes, 2
// blocks) and the untargeted up_proj, read without a transpose; the head's weight, whose product
// is the graph output, stays f32.
// NF4-LABEL: func.func @forward
// NF4-SAME: %[[HEAD:[a-z0-9]+]]: tensor<3x8xf32> {memc.param = "lm_head.weight"
// NF4-SAME: %[[A:[a-z0-9]+]]: tensor<2x16xf32> {memc.derived = "kaiming_uniform"
// NF4-SAME: %[[QW:[a-z0-9]+]]: tensor<64xui8> {memc.derived = "nf4", memc.derived_from = "layers.0.q_proj.weight", memc.param = "layers.0.q_proj.weight", memc.param_kind = "parameter"}
// NF4-SAME: %[[QA:[a-z0-9]+]]: tensor<2xui8> {memc.derived = "nf4.absmax", memc.derived_from = "layers.0.q_proj.weight", memc.param = "layers.0.q_proj.weight.absmax"
// NF4-SAME: %[[QS:[a-z0-9]+]]: tensor<1xf32> {memc.derived = "nf4.nested_absmax", {{.*}}memc.param = "layers.0.q_proj.weight.nested_absmax"
// NF4-SAME: %[[QO:[a-z0-9]+]]: tensor<f32> {memc.derived = "nf4.nested_offset", {{.*}}memc.param = "layers.0.q_proj.weight.nested_offset"
// NF4-SAME: tensor<16xui8> {memc.derived = "nf4", memc.derived_from = "layers.0.up_proj.weight"
// NF4-NOT: memc.param = "layers.0.q_proj.weight", memc.param_kind = "parameter"}, %
// NF4: memc.matmul_nf4 %{{.*}}, %[[QW]], %[[QA]], %[[QS]], %[[QO]] {transpose_rhs, weight_shape = array<i64: 8, 16>} : (tensor<4x16xf32>, tensor<64xui8>, tensor<2xui8>, tensor<1xf32>, tensor<f32>) -> tensor<4x8xf32>
// NF4: memc.matmul %{{.*}}, %[[A]] {transpose_rhs}
// NF4: memc.matmul_nf4 {{.*}} {weight_shape = array<i64: 8, 4>} : (tensor<4x8xf32>, tensor<16xui8>, tensor<1xui8>, tensor<1xf32>, tensor<f32>) -> tensor<4x4xf32>
// NF4: memc.matmul %{{.*}}, %[[HEAD]] {transpose_rhs}

// PLAIN: %{{[a-z0-9]+}}: tensor<2xf32> {memc.derived = "nf4.absmax"
// PLAIN-NOT: nested
// PLAIN: memc.matmul_nf4 {{.*}} : (tensor<4x16xf32>, tensor<64xui8>, tensor<2xf32>) -> tensor<4x8xf32>

// PEFT's all-linear: every matmul weight but the head's (whose product is the graph output).
// ALL-LABEL: func.func @forward
// ALL-NOT: lm_head.lora_A
// ALL-SAME: memc.param = "layers.0.q_proj.lora_A.weight"
// ALL-NOT: lm_head.lora_A
// ALL-SAME: memc.param = "layers.0.up_proj.lora_A.weight"
// ALL-NOT: lm_head.lora_A
// ALL: return

// nn.Linear heads export as MatMul and a bias Add: the head is the product the output is the
// biased sum of (mlp.onnx: net.0, net.2 and the head net.4).
// BIAS-LABEL: func.func @forward
// BIAS-SAME: memc.param = "net.0.lora_A.weight"
// BIAS-SAME: memc.param = "net.2.lora_A.weight"
// BIAS-NOT: net.4.lora
// BIAS: return

// UNMATCHED: error: --lora-targets 'nothing' matches no weight read by a MatMul or Gemm
// RANK: error: --lora-rank 9 exceeds min(out, in) = 8 of 'layers.0.q_proj.weight' 'tensor<8x16xf32>'

func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                   %w: tensor<8x16xf32> {memc.param = "layers.0.q_proj.weight", memc.param_kind = "parameter"},
                   %up: tensor<8x4xf32> {memc.param = "layers.0.up_proj.weight", memc.param_kind = "parameter"},
                   %head: tensor<3x8xf32> {memc.param = "lm_head.weight", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %y = memc.matmul %x, %w {transpose_rhs} : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %r = memc.relu %y : tensor<4x8xf32>
  %u = memc.matmul %r, %up : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %h = memc.matmul %r, %head {transpose_rhs} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  return %h : tensor<4x3xf32>
}
