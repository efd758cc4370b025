// RUN: memc-opt '--memc-build-train-step=loss=mse optimizer=sgd' --canonicalize --split-input-file %s | FileCheck %s

// A training-mode batch norm updates its running statistics as PyTorch does: running =
// momentum * running + (1 - momentum) * batch, ONNX's momentum 0.9 being PyTorch's 0.1, with the
// unbiased variance (16 values per channel: 16/15). The batch's moments come from one
// batch_moments right after the batch norm, so its input is not kept to the end for them.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3x2x2xf32> {memc.input = "x"}
// CHECK-SAME: %[[M:[a-z0-9]+]]: tensor<3xf32> {memc.param = "m", memc.param_kind = "buffer"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<3xf32> {memc.param = "v", memc.param_kind = "buffer"}
// CHECK-SAME: tensor<3xf32> {memc.updates = "m"}, tensor<3xf32> {memc.updates = "v"})
// CHECK-DAG: %[[BATCH:.*]] = memc.constant dense<1.000000e-01> : tensor<f32>
// CHECK-DAG: %[[KEEP:.*]] = memc.constant dense<0.899999976> : tensor<f32>
// CHECK-DAG: %[[BESSEL:.*]] = memc.constant dense<1.06666672> : tensor<f32>
// CHECK: memc.batch_norm %[[X]]
// CHECK-NEXT: %[[MEAN:.*]], %[[VAR:.*]] = memc.batch_moments %[[X]] : (tensor<4x3x2x2xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK: memc.batch_norm_grad
// CHECK-NOT: memc.reduce_mean
// CHECK: %[[UNBIASED:.*]] = memc.mul %[[VAR]], %[[BESSEL]]
// CHECK: %[[MKEEP:.*]] = memc.mul %[[M]], %[[KEEP]]
// CHECK: %[[MNEW:.*]] = memc.mul %[[MEAN]], %[[BATCH]]
// CHECK: %[[MOUT:.*]] = memc.add %[[MNEW]], %[[MKEEP]]
// CHECK: %[[VKEEP:.*]] = memc.mul %[[V]], %[[KEEP]]
// CHECK: %[[VNEW:.*]] = memc.mul %[[UNBIASED]], %[[BATCH]]
// CHECK: %[[VOUT:.*]] = memc.add %[[VNEW]], %[[VKEEP]]
// CHECK: return {{.*}}, %[[MOUT]], %[[VOUT]] :
func.func @forward(%x: tensor<4x3x2x2xf32> {memc.input = "x"},
                   %g: tensor<3xf32> {memc.param = "g", memc.param_kind = "parameter"},
                   %b: tensor<3xf32> {memc.param = "b", memc.param_kind = "parameter"},
                   %m: tensor<3xf32> {memc.param = "m", memc.param_kind = "buffer"},
                   %v: tensor<3xf32> {memc.param = "v", memc.param_kind = "buffer"})
    -> (tensor<4x3x2x2xf32> {memc.output = "y"}) {
  %y = memc.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64, training = true}
      : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x2x2xf32>
  return %y : tensor<4x3x2x2xf32>
}

// -----

// bf16 data with f32 statistics (autocast's batch norm): the moments read the data as it is,
// no f32 copy of it, and come out f32.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: memc.cast {{.*}} -> tensor<4x3x2x2xf32>
// CHECK: memc.batch_moments %{{.*}} : (tensor<4x3x2x2xbf16>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NOT: memc.cast {{.*}} -> tensor<4x3x2x2xf32>
// CHECK: return
func.func @forward(%x: tensor<4x3x2x2xbf16> {memc.input = "x"},
                   %g: tensor<3xf32> {memc.param = "g", memc.param_kind = "parameter"},
                   %b: tensor<3xf32> {memc.param = "b", memc.param_kind = "parameter"},
                   %m: tensor<3xf32> {memc.param = "m", memc.param_kind = "buffer"},
                   %v: tensor<3xf32> {memc.param = "v", memc.param_kind = "buffer"})
    -> (tensor<4x3x2x2xbf16> {memc.output = "y"}) {
  %y = memc.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64, training = true}
      : (tensor<4x3x2x2xbf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x2x2xbf16>
  return %y : tensor<4x3x2x2xbf16>
}
