// RUN: memc-opt --memc-autocast --memc-build-train-step='optimizer=adamw fuse-loss=false' --canonicalize %s | FileCheck %s
// RUN: not memc-opt '--memc-autocast=precision=fp8' %s 2>&1 | FileCheck %s --check-prefix=BAD
// (fuse-loss=false: this pins the matmul's bf16 rule; fuse-loss.mlir has the bf16 head fused.)

// Under autocast the training step keeps f32 master weights and f32 optimizer state: the bf16
// copy of the weight is made once per step, at the entry; the weight's gradient is a bf16 matmul cast back to f32
// before the optimizer reads it; the loss reads the bf16 logits (its kernel widens them exactly),
// so the step saves them for the backward in bf16, and their gradient comes out in bf16.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"}
// CHECK-SAME: tensor<8x3xf32> {memc.param = "w.exp_avg", memc.param_kind = "optimizer_state", memc.state_of = "w"}
// CHECK: %[[WL:.*]] = memc.cast %[[W]] : tensor<8x3xf32> -> tensor<8x3xbf16>
// CHECK-NOT: memc.cast %[[W]]
// CHECK: %[[Y:.*]] = memc.matmul %{{.*}}, %[[WL]] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NEXT: memc.cross_entropy %[[Y]], {{.*}} : (tensor<4x3xbf16>, tensor<4xi64>) -> tensor<f32>
// CHECK-NEXT: memc.cross_entropy_grad %{{.*}}, %[[Y]], {{.*}} -> tensor<4x3xbf16>
// CHECK-NOT: memc.cast %[[Y]]
// CHECK: %[[G:.*]] = memc.matmul {{.*}} -> tensor<8x3xbf16>
// CHECK: %[[GF:.*]] = memc.cast %[[G]] : tensor<8x3xbf16> -> tensor<8x3xf32>
// CHECK: memc.adamw_update %[[W]], %[[GF]], {{.*}} : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
// BAD: memc-autocast: precision must be bf16 or fp16, got 'fp8'
func.func @forward(%x: tensor<4x8xf32> {memc.input = "x"},
                   %w: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
