// RUN: memc-opt --memc-autocast '--memc-build-train-step=optimizer=adamw accumulation-steps=4 fuse-loss=false' --canonicalize %s | FileCheck %s
// RUN: memc-opt --memc-autocast '--memc-build-train-step=optimizer=adamw fuse-loss=false' --canonicalize %s | FileCheck %s --check-prefix=ONE

// With gradient accumulation the parameters change only on the micro-batch that applies the
// update, so the 16-bit copy of each weight is made once per optimizer step: the step keeps it as
// state (w.weight_copy, kind weight_copy, the copy's type) and memc.refresh_copy casts the weight
// into it only where memc.refresh is 1 (the first micro-batch); the other micro-batches read the
// kept copy. No cast of the weight is left; the forward and the backward matmul read the copy,
// and the weight's gradient (the cast back of a bf16 matmul) is unchanged.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"}
// CHECK-SAME: %[[COPY:[a-z0-9]+]]: tensor<8x3xbf16> {memc.param = "w.weight_copy", memc.param_kind = "weight_copy", memc.state_of = "w"}
// CHECK-SAME: %[[REFRESH:[a-z0-9]+]]: tensor<f32> {memc.input = "memc.refresh"}
// CHECK-SAME: tensor<8x3xbf16> {memc.updates = "w.weight_copy"}
// CHECK-NOT: memc.cast %[[W]]
// CHECK: %[[WL:.*]] = memc.refresh_copy %[[REFRESH]], %[[W]], %[[COPY]] : (tensor<f32>, tensor<8x3xf32>, tensor<8x3xbf16>) -> tensor<8x3xbf16>
// CHECK-NOT: memc.cast %[[W]]
// CHECK: memc.matmul %{{.*}}, %[[WL]] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
// CHECK-NOT: memc.cast %[[W]]
// CHECK: %[[G:.*]] = memc.matmul {{.*}} -> tensor<8x3xbf16>
// CHECK-NEXT: memc.cast %[[G]] : tensor<8x3xbf16> -> tensor<8x3xf32>
// CHECK: return {{.*}}, %[[WL]]

// Without accumulation every step is an optimizer step: the copy is the plain cast at the entry,
// no state is kept and memc.refresh is not an input.
// ONE-LABEL: func.func @train_step
// ONE-NOT: weight_copy
// ONE-NOT: memc.refresh
// ONE: memc.cast %{{.*}} : tensor<8x3xf32> -> tensor<8x3xbf16>
func.func @forward(%x: tensor<4x8xf32> {memc.input = "x"},
                   %w: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
