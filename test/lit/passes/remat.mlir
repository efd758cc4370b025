// RUN: memc-opt --memc-build-train-step=fuse-loss=false --canonicalize --memc-remat="mode=full" %s | FileCheck %s --check-prefix=FULL
// RUN: memc-opt --memc-build-train-step=fuse-loss=false --canonicalize --memc-remat="mode=none" %s | FileCheck %s --check-prefix=NONE
// RUN: not memc-opt --memc-build-train-step=fuse-loss=false --canonicalize --memc-remat="budget=1KiB" %s 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: not memc-opt --memc-remat="mode=most" %s 2>&1 | FileCheck %s --check-prefix=BADMODE
// (fuse-loss=false: the cases below name the unfused head's backward ops.)

// Two residual blocks y = x + gelu(x @ w). With mode=full only the layer boundaries are kept
// (the residual stream, and the first matmul's result, which is alone in its cut since graph
// inputs are always kept): the second block's matmul runs again in the backward, just before
// gelu_grad reads its result. @forward (no loss) is untouched.
// FULL-LABEL: func.func @forward
// FULL-COUNT-1: memc.matmul %{{.*}}, %arg2 :
// FULL-NOT: memc.matmul %{{.*}}, %arg2 :
// FULL-LABEL: func.func @train_step
// FULL: memc.cross_entropy_grad
// FULL: %[[H2:.*]] = memc.matmul %{{.*}}, %arg3 :
// FULL-NEXT: memc.gelu_grad %{{.*}}, %[[H2]]

// NONE-LABEL: func.func @train_step
// NONE: memc.cross_entropy_grad
// NONE-NOT: memc.matmul %{{.*}}, %arg3 :

// Parameters alone exceed 1 KiB: the pass says so, with the lowest peak it reached.
// TIGHT: error: memc-remat: the budget of 1024 bytes cannot be met; the lowest peak reached is {{[0-9]+}} bytes

// BADMODE: error: memc-remat: mode must be auto, none or full, got 'most'
func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                   %w1: tensor<16x16xf32> {memc.param = "w1", memc.param_kind = "parameter"},
                   %w2: tensor<16x16xf32> {memc.param = "w2", memc.param_kind = "parameter"},
                   %v: tensor<16x3xf32> {memc.param = "v", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %0 = memc.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %1 = memc.gelu %0 : tensor<4x16xf32>
  %2 = memc.add %x, %1 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %3 = memc.matmul %2, %w2 : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
  %4 = memc.gelu %3 : tensor<4x16xf32>
  %5 = memc.add %2, %4 : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %6 = memc.matmul %5, %v : (tensor<4x16xf32>, tensor<16x3xf32>) -> tensor<4x3xf32>
  return %6 : tensor<4x3xf32>
}
