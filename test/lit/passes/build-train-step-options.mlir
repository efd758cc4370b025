// RUN: memc-opt '--memc-build-train-step=loss=mse freeze=frozen.*' --canonicalize %s | FileCheck %s
// RUN: not memc-opt '--memc-build-train-step=freeze=nothing.*' %s 2>&1 | FileCheck %s --check-prefix=GLOB
// RUN: not memc-opt '--memc-build-train-step=loss-input=missing' %s 2>&1 | FileCheck %s --check-prefix=OUTPUT
// RUN: memc-opt '--memc-build-train-step=trainable=unused' %s 2>&1 | FileCheck %s --check-prefix=NOPATH

// Frozen parameters get no gradient; mse labels take the prediction's type.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %{{.*}}: tensor<2x4xf32> {memc.input = "labels"}
// CHECK-SAME: -> (tensor<f32> {memc.output = "loss"}, tensor<4xf32> {memc.gradient_of = "scale"}, tensor<4xf32> {memc.gradient_of = "unused"})
// CHECK: memc.reduce_mean %{{.*}} {axes = array<i64: 0, 1>, keepdims = false}
// GLOB: error: --freeze 'nothing.*' matches no parameter or buffer name
// OUTPUT: error: --loss-input 'missing' is not an output of the model (outputs: y)
// NOPATH: warning: parameter 'unused' has no path to the loss; its gradient is zero
func.func @forward(%x: tensor<2x4xf32> {memc.input = "x"},
                   %s: tensor<4xf32> {memc.param = "scale", memc.param_kind = "parameter"},
                   %f: tensor<4xf32> {memc.param = "frozen.weight", memc.param_kind = "parameter"},
                   %u: tensor<4xf32> {memc.param = "unused", memc.param_kind = "parameter"})
    -> (tensor<2x4xf32> {memc.output = "y"}) {
  %0 = memc.mul %x, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = memc.mul %0, %f : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
