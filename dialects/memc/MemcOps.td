//===- MemcOps.td - memc op definitions --------------------*- tablegen -*-===//
//
// Ops are grouped by shape rule. Each op infers its result type where the rule is mechanical
// (elementwise, broadcasting, reductions, layout ops) so the importer and the passes never compute
// shapes by hand; the ops whose result shape is a choice (reshape, broadcast_to, cast) state it
// and verify it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_OPS_TD
#define MEMC_OPS_TD

include "MemcDialect.td"
include "GradientInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Ops with a reverse-mode gradient rule (GradientRules.cpp).
defvar Memc_Differentiable = DeclareOpInterfaceMethods<Memc_DifferentiableOpInterface>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Memc_ConstantOp : Memc_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A small constant tensor";
  let description = [{
    Holds literal data that is part of the program rather than of the model's state: scalars,
    masks computed from shapes, folded shape arithmetic. Model weights are never constants; they
    are function arguments. Splat attributes keep large uniform constants cheap.

    ```mlir
    %0 = memc.constant dense<0.5> : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops: the result has the operand's type.
//===----------------------------------------------------------------------===//

class Memc_UnaryOp<string mnemonic, Type operandType, string doc, list<Trait> traits = []>
    : Memc_Op<mnemonic, !listconcat(traits,
        [Pure, Elementwise, SameOperandsAndResultType, InferTypeOpInterface])> {
  let summary = doc;
  let description = "Elementwise " # doc # [{.

    ```mlir
    %y = memc.}] # mnemonic # [{ %x : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Memc_NegOp : Memc_UnaryOp<"neg", Memc_NumericTensor, "negation", [Memc_Differentiable]>;
def Memc_ExpOp : Memc_UnaryOp<"exp", Memc_FloatTensor, "natural exponential", [Memc_Differentiable]>;
def Memc_LogOp : Memc_UnaryOp<"log", Memc_FloatTensor, "natural logarithm", [Memc_Differentiable]>;
def Memc_SqrtOp : Memc_UnaryOp<"sqrt", Memc_FloatTensor, "square root", [Memc_Differentiable]>;
def Memc_ReciprocalOp : Memc_UnaryOp<"reciprocal", Memc_FloatTensor, "reciprocal 1/x", [Memc_Differentiable]>;
def Memc_ErfOp : Memc_UnaryOp<"erf", Memc_FloatTensor, "Gauss error function", [Memc_Differentiable]>;
def Memc_TanhOp : Memc_UnaryOp<"tanh", Memc_FloatTensor, "hyperbolic tangent", [Memc_Differentiable]>;
def Memc_SigmoidOp : Memc_UnaryOp<"sigmoid", Memc_FloatTensor, "logistic sigmoid 1/(1+exp(-x))", [Memc_Differentiable]>;
def Memc_ReluOp : Memc_UnaryOp<"relu", Memc_NumericTensor, "rectified linear unit max(x, 0)", [Memc_Differentiable]>;
def Memc_NotOp : Memc_UnaryOp<"not", Memc_BoolTensor, "logical negation">;
def Memc_AbsOp : Memc_UnaryOp<"abs", Memc_NumericTensor, "absolute value", [Memc_Differentiable]>;
def Memc_SinOp : Memc_UnaryOp<"sin", Memc_FloatTensor, "sine", [Memc_Differentiable]>;
def Memc_CosOp : Memc_UnaryOp<"cos", Memc_FloatTensor, "cosine", [Memc_Differentiable]>;
def Memc_SoftplusOp : Memc_UnaryOp<"softplus", Memc_FloatTensor, "softplus log(1 + exp(x))",
                                   [Memc_Differentiable]>;
def Memc_HardSwishOp : Memc_UnaryOp<"hard_swish", Memc_FloatTensor,
                                    "hard swish x * clamp(x / 6 + 1/2, 0, 1)", [Memc_Differentiable]>;

// Activations with scalar coefficients: one operand, a result like it.
class Memc_ScaledActivationOp<string mnemonic, string doc, dag coefficients, string example>
    : Memc_Op<mnemonic, [Memc_Differentiable, Pure, Elementwise, SameOperandsAndResultType,
                         InferTypeOpInterface]> {
  let summary = doc;
  let description = "Elementwise " # doc # [{, as ONNX and torch.nn.functional define it.

    ```mlir
    %y = memc.}] # mnemonic # " %x " # example # [{ : tensor<4x16xf32>
    ```
  }];
  let arguments = !con((ins Memc_FloatTensor:$input), coefficients);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Memc_LeakyReluOp : Memc_ScaledActivationOp<"leaky_relu", "leaky ReLU x < 0 ? alpha * x : x",
    (ins F64Attr:$alpha), "{alpha = 1.000000e-02 : f64}">;
def Memc_EluOp : Memc_ScaledActivationOp<"elu", "ELU x < 0 ? alpha * (exp(x) - 1) : x",
    (ins F64Attr:$alpha), "{alpha = 1.000000e+00 : f64}">;
def Memc_HardSigmoidOp : Memc_ScaledActivationOp<"hard_sigmoid",
    "hard sigmoid clamp(alpha * x + beta, 0, 1)", (ins F64Attr:$alpha, F64Attr:$beta),
    "{alpha = 0.16666666666666666 : f64, beta = 5.000000e-01 : f64}">;

def Memc_GeluOp : Memc_Op<"gelu",
    [Memc_Differentiable, Pure, Elementwise, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * Phi(x)`, exactly (`approximate = "none"`, with erf) or with PyTorch's tanh approximation
    (`approximate = "tanh"`), matching torch.nn.functional.gelu.

    ```mlir
    %y = memc.gelu %x {approximate = "tanh"} : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Memc_BiasGeluOp : Memc_Op<"bias_gelu", [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "GELU of a tensor plus a bias along its last dimension";
  let description = [{
    `gelu(input + bias)`, the bias of shape [N] broadcast along the input's last dimension N:
    a linear layer's bias add and the MLP's activation in one pass over the data, the sum in f32
    registers (never stored). memc-fuse-bias-gelu builds it from the add and gelu torch.onnx.export
    writes; its backward saves the input (the matmul's output) and the bias, not the sum. The bias
    may be f32 with 16-bit data (a weight under --precision keeps its type).

    ```mlir
    %y = memc.bias_gelu %x, %b {approximate = "tanh"}
        : (tensor<4x16x64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Memc_FloatTensor:$bias,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Memc_ClipOp : Memc_Op<"clip",
    [Memc_Differentiable, Pure, Elementwise, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Clamp to [min, max]";
  let description = [{
    Elementwise `min(max(x, min), max)`; an absent bound does not clamp on that side.

    ```mlir
    %y = memc.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Memc_NumericTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let results = (outs Memc_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Memc_TriluOp : Memc_Op<"trilu",
    [Memc_Differentiable, Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Upper or lower triangle of the last two dimensions";
  let description = [{
    Keeps elements on and above (`upper = true`) or on and below (`upper = false`) the `k`-th
    diagonal of the innermost matrices, zeroing the rest.

    ```mlir
    %y = memc.trilu %x {k = 0 : i64, upper = false} : tensor<16x16xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input, I64Attr:$k, BoolAttr:$upper);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Memc_CastOp : Memc_Op<"cast", [Memc_Differentiable, Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "Element type conversion";
  let description = [{
    Converts each element to the result's element type: floats round to nearest even, floats to
    integers truncate toward zero, anything to i1 is `x != 0`.

    ```mlir
    %y = memc.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Memc_DropoutOp : Memc_Op<"dropout",
    [Memc_Differentiable, Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "Dropout with a fixed seed";
  let description = [{
    Zeroes each element with probability `ratio` and scales the rest by `1 / (1 - ratio)`. The
    mask is a pure function of `seed`, the optional scalar `salt` and the element index, so
    forward and backward (and recomputation) draw the same mask. Training steps pass a salt
    that changes every step (the runtime's seed and step number), so masks differ between steps
    as in PyTorch. The importer gives each ONNX Dropout its own seed (the node's `seed`, or a
    hash of its name and first output), so that two dropouts draw independent masks. ONNX
    models exported in eval mode carry no dropout.

    ```mlir
    %y = memc.dropout %x {ratio = 1.000000e-01 : f64, seed = 0 : i64} : tensor<4x16xf32>
    %z = memc.dropout %x salt %step {ratio = 1.000000e-01 : f64, seed = 3 : i64}
        : tensor<4x16xf32>, tensor<i64>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Optional<StaticShapeTensorOf<[I64]>>:$salt,
                       F64Attr:$ratio, I64Attr:$seed);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`salt` $salt^)? attr-dict `:` type($input) (`,` type($salt)^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Broadcasting binary ops (numpy / ONNX multidirectional broadcasting).
//===----------------------------------------------------------------------===//

class Memc_BroadcastOp<string mnemonic, list<Trait> traits = []>
    : Memc_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

class Memc_BinaryArithOp<string mnemonic, string doc, list<Trait> traits = []>
    : Memc_BroadcastOp<mnemonic,
        !listconcat(traits, [AllElementTypesMatch<["lhs", "rhs", "result"]>])> {
  let summary = doc # " with broadcasting";
  let description = "Elementwise " # doc # [{ of two tensors broadcast against each other by
    ONNX's multidirectional (numpy) rule.

    ```mlir
    %z = memc.}] # mnemonic # [{ %x, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Memc_NumericTensor:$lhs, Memc_NumericTensor:$rhs);
  let results = (outs Memc_NumericTensor:$result);
}

def Memc_AddOp : Memc_BinaryArithOp<"add", "addition", [Commutative, Memc_Differentiable]>;
def Memc_SubOp : Memc_BinaryArithOp<"sub", "subtraction", [Memc_Differentiable]>;
def Memc_MulOp : Memc_BinaryArithOp<"mul", "multiplication", [Commutative, Memc_Differentiable]>;
def Memc_DivOp : Memc_BinaryArithOp<"div", "division", [Memc_Differentiable]>;
def Memc_PowOp : Memc_BinaryArithOp<"pow", "power lhs^rhs", [Memc_Differentiable]>;
def Memc_MaxOp : Memc_BinaryArithOp<"max", "maximum (NaN propagates)",
                                    [Commutative, Memc_Differentiable]>;
def Memc_MinOp : Memc_BinaryArithOp<"min", "minimum (NaN propagates)",
                                    [Commutative, Memc_Differentiable]>;
def Memc_PReluOp : Memc_BinaryArithOp<"prelu", "parametric ReLU lhs < 0 ? rhs * lhs : lhs, the slope rhs",
                                      [Memc_Differentiable]>;

class Memc_CompareOp<string mnemonic, string doc>
    : Memc_BroadcastOp<mnemonic, [AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = doc # " comparison with broadcasting";
  let description = "Elementwise `" # doc # [{` comparison producing i1, with broadcasting.

    ```mlir
    %m = memc.}] # mnemonic # [{ %x, %y : (tensor<4x16xi64>, tensor<1xi64>) -> tensor<4x16xi1>
    ```
  }];
  let arguments = (ins Memc_Tensor:$lhs, Memc_Tensor:$rhs);
  let results = (outs Memc_BoolTensor:$result);
}

def Memc_EqualOp : Memc_CompareOp<"equal", "lhs == rhs">;
def Memc_LessOp : Memc_CompareOp<"less", "lhs < rhs">;
def Memc_GreaterOp : Memc_CompareOp<"greater", "lhs > rhs">;
def Memc_GreaterEqualOp : Memc_CompareOp<"greater_equal", "lhs >= rhs">;
def Memc_LessEqualOp : Memc_CompareOp<"less_equal", "lhs <= rhs">;

def Memc_WhereOp : Memc_BroadcastOp<"where",
    [Memc_Differentiable, AllElementTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "Select by a boolean mask, with broadcasting";
  let description = [{
    `condition ? on_true : on_false` elementwise, the three operands broadcast together; this is
    how PyTorch exports masked_fill (causal masks).

    ```mlir
    %y = memc.where %mask, %scores, %ninf
        : (tensor<1x1x16x16xi1>, tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Memc_BoolTensor:$condition, Memc_Tensor:$on_true, Memc_Tensor:$on_false);
  let results = (outs Memc_Tensor:$result);
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization.
//===----------------------------------------------------------------------===//

def Memc_MatMulOp : Memc_Op<"matmul",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, AllElementTypesMatch<["lhs", "rhs", "result"]>]> {
  let summary = "Batched matrix product with numpy semantics";
  let description = [{
    `numpy.matmul`: 1-D operands are promoted to matrices and the promoted dimension dropped
    from the result; leading (batch) dimensions broadcast. ONNX Gemm imports as matmul, a
    transpose where Gemm asks for one, and an add for the bias.

    `transpose_lhs` / `transpose_rhs` read that operand (rank >= 2) with its last two dims
    swapped, as BLAS's trans flags do, so that no transposed copy is materialised: the
    canonicalizer folds a transpose of the last two dims into them, and the gradient rule
    writes its transposes as flags.

    ```mlir
    %y = memc.matmul %x, %w : (tensor<2x16x32xf32>, tensor<32x96xf32>) -> tensor<2x16x96xf32>
    %z = memc.matmul %x, %v {transpose_rhs} : (tensor<2x16x32xf32>, tensor<96x32xf32>) -> tensor<2x16x96xf32>
    ```
  }];
  let arguments = (ins Memc_NumericTensor:$lhs, Memc_NumericTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Memc_NumericTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Memc_MatMulNf4Op : Memc_Op<"matmul_nf4",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "Product with a frozen weight stored in QLoRA's 4-bit NormalFloat";
  let description = [{
    `lhs @ W` (with `transpose_rhs`, `lhs @ W^T`: nn.Linear's [out, in] weight) for a
    `weight_shape` [rows, cols] weight stored as NF4 (kernels/NormalFloat4.h): `weight` its
    packed bytes, two 4-bit indices each, over its flat storage order; `absmax` one f32 per block
    of 64, or with double quantization their 8-bit codes, one f32 scale per 256 codes and the
    scalar offset. The kernel dequantizes the weight a tile at a time into the compute type
    (the lhs's): no full-size copy exists, in the forward or in the backward, whose product with
    the same weight is this op again (the weight is frozen: no gradient). The memc-lora pass
    writes it for --quantize-base nf4.

    ```mlir
    %y = memc.matmul_nf4 %x, %w, %absmax {transpose_rhs, weight_shape = array<i64: 96, 32>}
        : (tensor<2x16x32xf32>, tensor<1536xui8>, tensor<48xf32>) -> tensor<2x16x96xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$lhs, StaticShapeTensorOf<[UI8]>:$weight,
                       Variadic<StaticShapeTensorOf<[UI8, F32]>>:$absmax,
                       DenseI64ArrayAttr:$weight_shape, UnitAttr:$transpose_rhs);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Memc_SoftmaxLikeOp<string mnemonic, string doc>
    : Memc_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface,
                         Memc_Differentiable]> {
  let summary = doc # " along one axis";
  let description = doc # [{ along `axis` (non-negative), computed stably (max-subtracted).

    ```mlir
    %p = memc.}] # mnemonic # [{ %x {axis = 1 : i64} : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Memc_SoftmaxOp : Memc_SoftmaxLikeOp<"softmax", "Softmax">;
def Memc_LogSoftmaxOp : Memc_SoftmaxLikeOp<"log_softmax", "Log-softmax">;

def Memc_LayerNormOp : Memc_Op<"layer_norm",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalization over the trailing dimensions";
  let description = [{
    Normalizes over dimensions `axis..rank-1` to zero mean and unit variance (biased variance,
    `epsilon` added), then scales and optionally shifts; `scale` and `bias` have the normalized
    dimensions' shape.

    ```mlir
    %y = memc.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Memc_FloatTensor:$scale,
                       Optional<Memc_FloatTensor>:$bias, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_AddLayerNormOp : Memc_Op<"add_layer_norm",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "A residual add and the layer norm of its sum, in one pass";
  let description = [{
    `sum = lhs + rhs` (two tensors of one type, no broadcasting) and `output =
    layer_norm(sum, scale, bias)` as memc.layer_norm computes it: each row is added, stored, and
    normalized while it is in cache, so the sum is written once and never read back. A pre-norm
    transformer's residual stream reads `sum` on; the backward reads it as the norm's input.
    memc-fuse-add-layer-norm builds it from the add and layer_norm torch.onnx.export writes.

    ```mlir
    %s, %y = memc.add_layer_norm %x, %r, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
        -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$lhs, Memc_FloatTensor:$rhs, Memc_FloatTensor:$scale,
                       Optional<Memc_FloatTensor>:$bias, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Memc_FloatTensor:$sum, Memc_FloatTensor:$output);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_RmsNormOp : Memc_Op<"rms_norm",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "RMS normalization over the trailing dimensions (Llama's RMSNorm)";
  let description = [{
    `input * scale / sqrt(mean(input^2) + epsilon)`, the mean over dimensions `axis..rank-1`;
    `scale` has those dimensions' shape. The statistics are computed in f32 (f64 sums) whatever
    the input's type, so a 16-bit input and result round once each. memc-fuse-rms-norm builds it
    from the arithmetic torch.onnx.export writes for an RMSNorm module; its backward saves only
    the input and recomputes the per-row statistic.

    ```mlir
    %y = memc.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f64}
        : (tensor<2x16x32xf32>, tensor<32xf32>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Memc_FloatTensor:$scale, I64Attr:$axis,
                       F64Attr:$epsilon);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_BatchNormOp : Memc_Op<"batch_norm", [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "Batch normalization over the channel axis (axis 1)";
  let description = [{
    With `training = false`, normalizes with the running statistics `mean` and `var`; with
    `training = true`, with the batch's statistics (biased variance), as PyTorch's train mode.
    The running-statistics update (`momentum`, unbiased variance) is built by the training pass.

    ```mlir
    %y = memc.batch_norm %x, %scale, %bias, %mean, %var
        {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64, training = false}
        : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        -> tensor<2x8x4x4xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Memc_FloatTensor:$scale, Memc_FloatTensor:$bias,
                       Memc_FloatTensor:$mean, Memc_FloatTensor:$var, F64Attr:$epsilon,
                       F64Attr:$momentum, BoolAttr:$training);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_FlashAttentionOp : Memc_Op<"flash_attention",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention without the [Tq, Tk] scores";
  let description = [{
    `dropout(softmax(scale * query @ key^T + mask, causal)) @ value` per batch and head, with
    the probabilities never materialized: kernels go over blocks of queries and keys with an
    online softmax in f32. `query` is [B, H, Tq, D], `key` [B, Hkv, Tk, D] and `value`
    [B, Hkv, Tk, Dv], Hkv dividing H: query head h reads kv head h / (H / Hkv) (grouped-query
    attention, without repeating k and v). The optional additive `mask` has rank 4, each
    dimension 1 or that of [B, H, Tq, Tk]. With `causal`, query i sees keys j <= i + Tk - Tq
    (aligned at the bottom right, as a causal buffer sliced for cached keys). A row that sees no
    key gives zeros and a logsumexp of -inf.

    A `dropout_ratio` above 0 drops probabilities as `memc.dropout` {ratio, seed} with the same
    optional scalar `salt` would on the [B, H, Tq, Tk] probabilities: the same mask, a function
    of (seed, salt, flat index), and the kept ones scaled by 1 / (1 - ratio). The logsumexp
    stays that of the scores, undropped.

    Results: the output [B, H, Tq, Dv] in the query's type and the logsumexp of each row's
    scores [B, H, Tq] in f32, which the backward (`flash_attention_grad`) recomputes the
    probabilities from. The mask carries no gradient.

    ```mlir
    %o, %lse = memc.flash_attention %q, %k, %v {causal = true, scale = 0.125 : f64}
        : (tensor<2x12x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>)
        -> (tensor<2x12x64x64xf32>, tensor<2x12x64xf32>)
    %d, %dlse = memc.flash_attention %q, %k, %v salt %step
        {causal = true, dropout_ratio = 1.000000e-01 : f64, scale = 0.125 : f64, seed = 3 : i64}
        : (tensor<2x12x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<i64>)
        -> (tensor<2x12x64x64xf32>, tensor<2x12x64xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$query, Memc_FloatTensor:$key, Memc_FloatTensor:$value,
                       Optional<Memc_FloatTensor>:$mask,
                       Optional<StaticShapeTensorOf<[I64]>>:$salt, BoolAttr:$causal,
                       F64Attr:$scale, DefaultValuedAttr<F64Attr, "0.0">:$dropout_ratio,
                       DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Memc_FloatTensor:$output, StaticShapeTensorOf<[F32]>:$logsumexp);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? (`salt` $salt^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions.
//===----------------------------------------------------------------------===//

class Memc_ReduceOp<string mnemonic, string doc, Type tensorType = Memc_NumericTensor>
    : Memc_Op<mnemonic, [Pure, InferTypeOpAdaptor, Memc_Differentiable,
                         AllElementTypesMatch<["input", "result"]>]> {
  let summary = doc # " over a set of axes";
  let description = doc # [{ over `axes` (sorted, non-negative, unique), keeping them as size-1
    dimensions when `keepdims` is set.

    ```mlir
    %m = memc.}] # mnemonic # [{ %x {axes = array<i64: 2>, keepdims = true}
        : (tensor<2x16x32xf32>) -> tensor<2x16x1xf32>
    ```
  }];
  let arguments = (ins tensorType:$input, DenseI64ArrayAttr:$axes, BoolAttr:$keepdims);
  let results = (outs tensorType:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Memc_ReduceSumOp : Memc_ReduceOp<"reduce_sum", "Sum">;
def Memc_ReduceMeanOp : Memc_ReduceOp<"reduce_mean", "Mean">;
def Memc_ReduceMaxOp : Memc_ReduceOp<"reduce_max", "Maximum">;
def Memc_ReduceProdOp : Memc_ReduceOp<"reduce_prod", "Product">;
def Memc_ReduceL2Op : Memc_ReduceOp<"reduce_l2", "Euclidean norm sqrt(sum(x^2))",
                                    Memc_FloatTensor>;
def Memc_ReduceLogSumExpOp : Memc_ReduceOp<"reduce_log_sum_exp",
                                           "log(sum(exp(x))), computed stably", Memc_FloatTensor>;

//===----------------------------------------------------------------------===//
// Scans.
//===----------------------------------------------------------------------===//

def Memc_CumSumOp : Memc_Op<"cumsum",
    [Memc_Differentiable, Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Cumulative sum along one axis";
  let description = [{
    Running sums along `axis` (non-negative), from the last element backwards when `reverse` is
    set; with `exclusive`, each sum leaves out the element at its own position (ONNX CumSum,
    torch.cumsum).

    ```mlir
    %y = memc.cumsum %x {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x16xf32>
    ```
  }];
  let arguments = (ins Memc_NumericTensor:$input, I64Attr:$axis, BoolAttr:$exclusive,
                       BoolAttr:$reverse);
  let results = (outs Memc_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Selection.
//===----------------------------------------------------------------------===//

def Memc_TopKOp : Memc_Op<"top_k", [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "The k largest (or smallest) elements along one axis, and their indices";
  let description = [{
    ONNX TopK, always sorted: along `axis`, the `k` largest elements in descending order (the
    smallest in ascending order when `largest` is false), equal values in the order of their
    indices, and the indices of the selected elements. The gradient reaches the selected
    elements only.

    ```mlir
    %v, %i = memc.top_k %x {axis = 1 : i64, k = 3 : i64, largest = true}
        : (tensor<2x16xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
    ```
  }];
  let arguments = (ins Memc_NumericTensor:$input, I64Attr:$axis, I64Attr:$k, BoolAttr:$largest);
  let results = (outs Memc_NumericTensor:$values, Memc_IndexTensor:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Layout and indexing.
//===----------------------------------------------------------------------===//

def Memc_TransposeOp : Memc_Op<"transpose",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Permute dimensions";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`.

    ```mlir
    %y = memc.transpose %x {perm = array<i64: 0, 2, 1, 3>}
        : (tensor<2x16x4x8xf32>) -> tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Memc_ReshapeOp : Memc_Op<"reshape",
    [Memc_Differentiable, Pure, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Reinterpret the shape, keeping the row-major element order";
  let description = [{
    The result type states the new static shape; the element count must not change. ONNX
    Reshape, Flatten, Squeeze and Unsqueeze all import as this op.

    ```mlir
    %y = memc.reshape %x : tensor<2x16x32xf32> -> tensor<32x32xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Memc_BroadcastToOp : Memc_Op<"broadcast_to",
    [Memc_Differentiable, Pure, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Broadcast to a larger shape";
  let description = [{
    Materializes numpy broadcasting of `input` to the result shape (ONNX Expand); the result
    shape must be exactly the broadcast of the input's shape and itself.

    ```mlir
    %y = memc.broadcast_to %x : tensor<1x16xf32> -> tensor<4x16xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Memc_ConcatOp : Memc_Op<"concat",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, SameOperandsElementType]> {
  let summary = "Join tensors along one axis";
  let description = [{
    All inputs agree on every dimension but `axis`.

    ```mlir
    %y = memc.concat %a, %b {axis = 1 : i64}
        : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Memc_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Memc_SplitOp : Memc_Op<"split", [Memc_Differentiable, Pure, InferTypeOpAdaptor]> {
  let summary = "Cut a tensor into consecutive pieces along one axis";
  let description = [{
    Piece `i` has `sizes[i]` elements along `axis`; the sizes add up to that dimension.

    ```mlir
    %q, %k, %v = memc.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>}
        : (tensor<2x16x96xf32>) -> (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<2x16x32xf32>)
    ```
  }];
  let arguments = (ins Memc_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Memc_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Memc_SliceOp : Memc_Op<"slice",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "Strided slice with one (start, limit, step) per dimension";
  let description = [{
    For every dimension `d`, takes indices `starts[d], starts[d] + steps[d], ...` up to but not
    including `limits[d]` (steps may be negative; starts and limits are already clamped). The
    importer normalizes ONNX Slice's optional axes and negative/out-of-range indices into this
    full-rank form.

    ```mlir
    %y = memc.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 2, 8>,
                        steps = array<i64: 1, 2>} : (tensor<2x16xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$steps);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Memc_GatherOp : Memc_Op<"gather",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, AllElementTypesMatch<["data", "result"]>]> {
  let summary = "Take slices of `data` along `axis` at the given indices";
  let description = [{
    ONNX Gather: the result's shape is `data.shape[:axis] + indices.shape +
    data.shape[axis+1:]`. Negative indices count from the end. Embedding lookups are gathers on
    axis 0. `padding_idx` (axis 0 only) names a row of `data` that this lookup gives no
    gradient, PyTorch's nn.Embedding(padding_idx=...); other uses of `data` still do.

    ```mlir
    %e = memc.gather %wte, %ids {axis = 0 : i64, padding_idx = 0 : i64}
        : (tensor<64x32xf32>, tensor<2x16xi64>) -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$data, Memc_IndexTensor:$indices, I64Attr:$axis,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW, any number of spatial dimensions).
//===----------------------------------------------------------------------===//

def Memc_ConvOp : Memc_Op<"conv",
    [Memc_Differentiable, Pure, InferTypeOpAdaptor, AllElementTypesMatch<["input", "weight", "result"]>]> {
  let summary = "Grouped N-d convolution (cross-correlation), NC[D]HW layout";
  let description = [{
    `weight` is `[out_channels, in_channels / group, k...]`; `pads` lists the padding at the
    beginning of every spatial dimension, then at the end (ONNX order).

    ```mlir
    %y = memc.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                               dilations = array<i64: 1, 1>, group = 1 : i64}
        : (tensor<2x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x16x16xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Memc_FloatTensor:$weight,
                       Optional<Memc_FloatTensor>:$bias, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

class Memc_PoolOp<string mnemonic, string doc, dag extraArgs>
    : Memc_Op<mnemonic, [Pure, InferTypeOpAdaptor, Memc_Differentiable,
                         AllElementTypesMatch<["input", "result"]>]> {
  let summary = doc # " pooling over the spatial dimensions";
  let description = doc # [{ over windows of `kernel_shape`, with `strides`, `pads` (begins then
    ends) and `dilations`; `ceil_mode` rounds the output size up.

    ```mlir
    %y = memc.}] # mnemonic # [{ %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false, ...}
        : (tensor<2x8x16x16xf32>) -> tensor<2x8x8x8xf32>
    ```
  }];
  let arguments = !con((ins Memc_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                            DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode), extraArgs);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Memc_MaxPoolOp : Memc_PoolOp<"max_pool", "Maximum", (ins)>;
def Memc_AvgPoolOp : Memc_PoolOp<"avg_pool", "Average",
    (ins BoolAttr:$count_include_pad)>;

include "MemcTrainingOps.td"

#endif // MEMC_OPS_TD
