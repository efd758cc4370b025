// RUN: not memc-opt --memc-build-train-step %s 2>&1 | FileCheck %s

// CHECK: error: dropout in a training graph is not supported yet (its mask would repeat every step)
func.func @forward(%x: tensor<4x8xf32> {memc.input = "x"},
                   %w: tensor<8x3xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<4x3xf32> {memc.output = "logits"}) {
  %0 = memc.dropout %x {ratio = 0.1 : f64, seed = 0 : i64} : tensor<4x8xf32>
  %1 = memc.matmul %0, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}
