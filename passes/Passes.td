//===- Passes.td - memc passes -----------------------------*- tablegen -*-===//
#ifndef MEMC_PASSES_TD
#define MEMC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Canonical forms
//===----------------------------------------------------------------------===//

def FuseGelu : Pass<"memc-fuse-gelu", "::mlir::func::FuncOp"> {
  let summary = "Recognize decomposed GELU and replace it with memc.gelu";
  let description = [{
    torch.onnx.export before opset 20 writes GELU as arithmetic:
    `x * 0.5 * (1 + erf(x / sqrt(2)))`, or for the tanh approximation
    `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`. One `memc.gelu` instead of five to
    nine ops means one saved activation for backward instead of several, and one kernel.
    Products and sums are matched in any operand order; constants must match to 1e-6.

    ```mlir
    %0 = memc.div %x, %c1_41 ...   %1 = memc.erf %0 ...   %2 = memc.add %1, %c1 ...
    %3 = memc.mul %x, %2 ...       %4 = memc.mul %3, %c0_5 ...
    // becomes
    %4 = memc.gelu %x : tensor<4x32xf32>
    ```
  }];
  let dependentDialects = ["::memc::MemcDialect"];
}

#endif // MEMC_PASSES_TD
