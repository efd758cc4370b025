// RUN: memc-opt '--memc-build-train-step=optimizer=adamw weight-decay=0.01 clip-grad-norm=1.0' --canonicalize %s | FileCheck %s --check-prefix=ADAMW
// RUN: memc-opt '--memc-build-train-step=optimizer=sgd momentum=0.9 nesterov=true' --canonicalize %s | FileCheck %s --check-prefix=SGD
// RUN: memc-opt '--memc-build-train-step=optimizer=sgd' --canonicalize %s | FileCheck %s --check-prefix=PLAIN
// Unset hyperparameters are the optimizer's defaults, as memc's flags leave them (torch.optim's:
// AdamW's weight decay 0.01, SGD's 0); one given is that value.
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw' %s | FileCheck %s --check-prefix=DEFAULTS
// RUN: memc-opt '--memc-build-train-step=optimizer=adamw weight-decay=0 beta2=0.95' %s | FileCheck %s --check-prefix=GIVEN
// DEFAULTS: memc.adamw_update {{.*}} {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// GIVEN: memc.adamw_update {{.*}} {beta1 = 9.000000e-01 : f64, beta2 = 0.94999999999999996 : f64, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64}

// AdamW: two f32 moments per parameter, the learning rate and the step number as inputs, the
// gradients clipped by their global norm (an output too, for the log), and results that replace
// their arguments.
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %[[W:[a-z0-9]+]]: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"}
// ADAMW-SAME: %[[M:[a-z0-9]+]]: tensor<16x10xf32> {memc.param = "w.exp_avg", memc.param_kind = "optimizer_state", memc.state_of = "w"}
// ADAMW-SAME: %[[V:[a-z0-9]+]]: tensor<16x10xf32> {memc.param = "w.exp_avg_sq", memc.param_kind = "optimizer_state", memc.state_of = "w"}
// ADAMW-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.lr"}
// ADAMW-SAME: %[[T:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.step"}
// ADAMW-SAME: -> (tensor<f32> {memc.output = "loss"}, tensor<f32> {memc.output = "memc.grad_norm"}, tensor<16x10xf32> {memc.updates = "w"}, tensor<16x10xf32> {memc.updates = "w.exp_avg"}, tensor<16x10xf32> {memc.updates = "w.exp_avg_sq"})
// ADAMW: %[[NORM:.*]] = memc.sqrt
// ADAMW: memc.clip %{{.*}} {max = 1.000000e+00 : f64}
// ADAMW: %[[CLIPPED:.*]] = memc.mul
// ADAMW: %[[P:.*]], %[[M1:.*]], %[[V1:.*]] = memc.adamw_update %[[W]], %[[CLIPPED]], %[[M]], %[[V]], %[[LR]], %[[T]] {beta1 = 9.000000e-01 : f64, beta2 = {{.*}}, eps = 1.000000e-08 : f64, weight_decay = 1.000000e-02 : f64}
// ADAMW: return %{{.*}}, %[[NORM]], %[[P]], %[[M1]], %[[V1]]

// SGD-LABEL: func.func @train_step
// SGD-SAME: {memc.param = "w.momentum_buffer", memc.param_kind = "optimizer_state", memc.state_of = "w"}
// SGD-SAME: {memc.input = "memc.lr"})
// SGD: memc.sgd_update %{{.*}} {momentum = 9.000000e-01 : f64, nesterov = true, weight_decay = 0.000000e+00 : f64}

// Plain SGD keeps no state: param - grad * lr.
// PLAIN-LABEL: func.func @train_step
// PLAIN-NOT: optimizer_state
// PLAIN: %[[STEP:.*]] = memc.mul %{{.*}}, %{{.*}} : (tensor<16x10xf32>, tensor<f32>) -> tensor<16x10xf32>
// PLAIN: memc.sub %{{.*}}, %[[STEP]]
func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                   %w: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x10xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x16xf32>, tensor<16x10xf32>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
