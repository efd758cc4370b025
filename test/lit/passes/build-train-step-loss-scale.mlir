// RUN: memc-opt '--memc-autocast=precision=fp16' '--memc-build-train-step=optimizer=adamw loss-scale=dynamic loss-scale-window=4 accumulation-steps=2 fuse-loss=false' --canonicalize %s | FileCheck %s --check-prefix=DYN
// RUN: memc-opt '--memc-autocast=precision=fp16' '--memc-build-train-step=optimizer=sgd loss-scale=1024 clip-grad-norm=1.0 fuse-loss=false' --canonicalize %s | FileCheck %s --check-prefix=FIXED
// RUN: memc-opt '--memc-autocast=precision=fp16' '--memc-build-train-step=loss-scale=dynamic fuse-loss=false' --canonicalize %s | FileCheck %s --check-prefix=GRADS
// RUN: not memc-opt '--memc-build-train-step=optimizer=sgd loss-scale=-2' %s 2>&1 | FileCheck %s --check-prefix=BAD
// The mean of the micro-batches' means (--grad-accum-mean micro-batches) takes no token weight.
// RUN: memc-opt '--memc-autocast=precision=fp16' '--memc-build-train-step=optimizer=adamw loss-scale=dynamic accumulation-steps=2 token-weighted-accumulation=false fuse-loss=false' %s | FileCheck %s --check-prefix=MEANS
// MEANS: func.func @train_step
// MEANS-NOT: memc.loss_weight
// MEANS: memc.apply

// Where GradScaler's pieces go in an fp16 step with gradient accumulation. The scaler's state is
// three f32 scalars (kind loss_scaler) after the accumulators; the backward is seeded with
// 2^16 * 2^exponent instead of 1, times the micro-batch's token weight (memc.loss_weight). The check and the unscale read the accumulated mean (once per
// optimizer step: the update and the scale only take effect where memc.apply is 1), the update's
// gate is on where the gradients are finite on the applying micro-batch (elsewhere it computes
// nothing and leaves the weight and moments as they are), AdamW's step number counts
// only applied steps (memc.step - skipped), the accumulator restarts on every applying micro-batch
// (skipped or not), and the scale used and found_inf are outputs for the log. (The weight's f16
// copy is kept across micro-batches: build-train-step-weight-copies.mlir.)
// DYN-LABEL: func.func @train_step
// DYN-SAME: %[[W:[a-z0-9]+]]: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"}
// DYN-SAME: %[[ACC:[a-z0-9]+]]: tensor<8x3xf32> {memc.param = "w.grad_accum", memc.param_kind = "gradient_accumulator", memc.state_of = "w"}
// DYN-SAME: %[[E:[a-z0-9]+]]: tensor<f32> {memc.param = "memc.loss_scale_exponent", memc.param_kind = "loss_scaler"}
// DYN-SAME: %[[N:[a-z0-9]+]]: tensor<f32> {memc.param = "memc.loss_scale_growth", memc.param_kind = "loss_scaler"}
// DYN-SAME: %[[S:[a-z0-9]+]]: tensor<f32> {memc.param = "memc.skipped_steps", memc.param_kind = "loss_scaler"}
// DYN-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.lr"}, %[[STEP:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.step"}, %[[APPLY:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.apply"}, %{{[a-z0-9]+}}: tensor<f32> {memc.input = "memc.refresh"}, %[[WEIGHT:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.loss_weight"}
// DYN-SAME: tensor<f32> {memc.updates = "memc.loss_scale_exponent"}, tensor<f32> {memc.updates = "memc.loss_scale_growth"}, tensor<f32> {memc.updates = "memc.skipped_steps"}, tensor<f32> {memc.output = "memc.loss_scale"}, tensor<f32> {memc.output = "memc.skipped"}
// DYN-DAG: %[[INITIAL:.*]] = memc.constant dense<6.553600e+04> : tensor<f32>
// DYN-DAG: %[[TWO:.*]] = memc.constant dense<2.000000e+00> : tensor<f32>
// DYN: %[[WL:.*]] = memc.refresh_copy %{{.*}}, %[[W]], %{{.*}} : (tensor<f32>, tensor<8x3xf32>, tensor<8x3xf16>)
// DYN: %[[LOSS:.*]] = memc.cross_entropy
// DYN: %[[POW:.*]] = memc.pow %[[TWO]], %[[E]]
// DYN-NEXT: %[[SCALE:.*]] = memc.mul %[[POW]], %[[INITIAL]]
// DYN-NEXT: %[[SEED:.*]] = memc.mul %[[SCALE]], %[[WEIGHT]]
// DYN-NEXT: memc.cross_entropy_grad %[[SEED]],
// DYN: %[[SUM:.*]] = memc.add %[[ACC]], %{{.*}} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
// DYN-NEXT: %[[MEAN:.*]] = memc.mul %[[SUM]], %{{.*}} : (tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf32>
// DYN-NEXT: %[[FOUND:.*]] = memc.non_finite_check %[[MEAN]] : (tensor<8x3xf32>) -> tensor<f32>
// DYN-NEXT: %[[INVERSE:.*]] = memc.div %{{.*}}, %[[SCALE]]
// DYN-NEXT: %[[UNSCALED:.*]] = memc.mul %[[MEAN]], %[[INVERSE]]
// DYN-NEXT: %[[APPLIES:.*]] = memc.greater %[[APPLY]],
// DYN-NEXT: %[[FINITE:.*]] = memc.sub %{{.*}}, %[[FOUND]]
// DYN-NEXT: %[[BOTH:.*]] = memc.mul %[[FINITE]], %[[APPLY]]
// DYN-NEXT: %[[T:.*]] = memc.sub %[[STEP]], %[[S]]
// DYN-NEXT: %[[NEWW:.*]], %{{.*}}, %{{.*}} = memc.adamw_update %[[W]], %[[UNSCALED]], %{{.*}}, %{{.*}}, %[[LR]], %[[T]], %[[BOTH]]
// DYN-NEXT: %[[RESTART:.*]] = memc.where %[[APPLIES]], %{{.*}}, %[[SUM]]
// DYN-NEXT: %[[E1:.*]], %[[N1:.*]], %[[S1:.*]] = memc.loss_scale_update %[[E]], %[[N]], %[[S]], %[[FOUND]] {dynamic = true, window = 4 : i64}
// DYN-NEXT: %[[E2:.*]] = memc.where %[[APPLIES]], %[[E1]], %[[E]]
// DYN-NEXT: %[[N2:.*]] = memc.where %[[APPLIES]], %[[N1]], %[[N]]
// DYN-NEXT: %[[S2:.*]] = memc.where %[[APPLIES]], %[[S1]], %[[S]]
// DYN-NEXT: return %[[LOSS]], %[[NEWW]], {{.*}}, %[[RESTART]], %[[WL]], %[[E2]], %[[N2]], %[[S2]], %[[SCALE]], %[[FOUND]]

// A fixed scale (--loss-scale 1024): the same pieces with dynamic = false; gradients are unscaled
// before the clipping norm reads them, and plain SGD's update is skipped where they are not
// finite.
// FIXED-LABEL: func.func @train_step
// FIXED: %[[FIXED:.*]] = memc.constant dense<1.024000e+03> : tensor<f32>
// FIXED: %[[SCALE:.*]] = memc.mul %{{.*}}, %[[FIXED]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
// FIXED-NEXT: memc.cross_entropy_grad %[[SCALE]],
// FIXED: %[[G:.*]] = memc.cast %{{.*}} : tensor<8x3xf16> -> tensor<8x3xf32>
// FIXED-NEXT: %[[FOUND:.*]] = memc.non_finite_check %[[G]]
// FIXED-NEXT: %[[INVERSE:.*]] = memc.div %{{.*}}, %[[SCALE]]
// FIXED-NEXT: %[[UNSCALED:.*]] = memc.mul %[[G]], %[[INVERSE]]
// FIXED-NEXT: %[[SQUARES:.*]] = memc.mul %[[UNSCALED]], %[[UNSCALED]]
// FIXED: %[[FINITE:.*]] = memc.sub %{{.*}}, %[[FOUND]]
// FIXED: %[[UPDATES:.*]] = memc.greater %[[FINITE]],
// FIXED: memc.where %[[UPDATES]],
// FIXED: memc.loss_scale_update {{.*}}, %[[FOUND]] {dynamic = false, window = 2000 : i64}

// Without an optimizer (the @gradients of --dump-grads) nothing is scaled: the step returns the
// gradients as they are.
// GRADS-LABEL: func.func @train_step
// GRADS-NOT: loss_scale
// GRADS-NOT: non_finite_check
// GRADS: return

// BAD: loss-scale must be none, dynamic or a positive number, got '-2'
func.func @forward(%x: tensor<4x8xf32> {memc.input = "x"},
                   %w: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
