// Weight-decay groups (issue 23). With no-decay-norms-and-biases (memc's
// --no-decay-norms-and-biases, Hugging Face Trainer's groups) the layer norm's scale ("g", found
// by the op reading it, not its name), every name with "bias", and a "*_norm" name train without
// weight decay; a no-decay glob adds its matches; the other weights keep AdamW's 0.1.
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw weight-decay=0.1 no-decay-norms-and-biases=true fuse-loss=false' %s | FileCheck %s --check-prefix=HF
// HF-LABEL: func.func @train_step
// HF-DAG: memc.adamw_update %{{[a-z0-9]+}}, {{.*}}weight_decay = 0.000000e+00{{.*}} : (tensor<16xf32>, tensor<16xf32>
// HF-DAG: memc.adamw_update {{.*}}weight_decay = 0.000000e+00{{.*}} : (tensor<10xf32>, tensor<10xf32>
// HF-DAG: memc.adamw_update {{.*}}weight_decay = 0.000000e+00{{.*}} : (tensor<16x16xf32>, tensor<16x16xf32>
// HF-DAG: memc.adamw_update {{.*}}weight_decay = 1.000000e-01{{.*}} : (tensor<16x10xf32>, tensor<16x10xf32>
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw weight-decay=0.1 no-decay=w fuse-loss=false' %s | FileCheck %s --check-prefix=GLOB
// GLOB-DAG: memc.adamw_update {{.*}}weight_decay = 0.000000e+00{{.*}} : (tensor<16x10xf32>, tensor<16x10xf32>
// GLOB-DAG: memc.adamw_update {{.*}}weight_decay = 1.000000e-01{{.*}} : (tensor<16xf32>, tensor<16xf32>
// RUN: not memc-opt '--memc-build-train-step=optimizer=adamw no-decay=nothing.* fuse-loss=false' %s 2>&1 | FileCheck %s --check-prefix=UNUSED
// UNUSED: error: --no-decay 'nothing.*' matches no trained parameter
func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                   %g: tensor<16xf32> {memc.param = "g", memc.param_kind = "parameter"},
                   %m: tensor<16x16xf32> {memc.param = "attn_norm", memc.param_kind = "parameter"},
                   %w: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"},
                   %b: tensor<10xf32> {memc.param = "head.bias", memc.param_kind = "parameter"})
    -> (tensor<4x10xf32> {memc.output = "logits"}) {
  %0 = memc.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %1 = memc.matmul %0, %m : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %2 = memc.matmul %1, %w : (tensor<4x16xf32>, tensor<16x10xf32>) -> tensor<4x10xf32>
  %3 = memc.add %2, %b : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return %3 : tensor<4x10xf32>
}
