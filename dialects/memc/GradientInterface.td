//===- GradientInterface.td - reverse-mode gradient rules ---*- tablegen -*-===//
#ifndef MEMC_GRADIENT_INTERFACE_TD
#define MEMC_GRADIENT_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Memc_DifferentiableOpInterface : OpInterface<"DifferentiableOp"> {
  let description = [{
    The reverse-mode gradient rule of an op. Given the gradients flowing into its results, an
    op builds IR computing the gradients of its operands (vector-Jacobian products). Each op's
    rule lives in GradientRules.cpp beside the others and is tested against PyTorch. Ops without
    this interface (comparisons, constants) pass no gradient.
  }];
  let cppNamespace = "::memc";
  let methods = [
    InterfaceMethod<[{
        Appends one value per operand to `operandGradients`: the gradient of that operand, or a
        null value where the operand carries none (indices, masks, shape-like operands).
        `resultGradients` has one entry per result; null entries received no gradient (e.g.
        unused split pieces). Inserts ops at `builder`'s insertion point.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>
  ];
}

#endif // MEMC_GRADIENT_INTERFACE_TD
