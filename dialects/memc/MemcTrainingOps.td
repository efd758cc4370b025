//===- MemcTrainingOps.td - backward and loss ops ----------*- tablegen -*-===//
//
// Ops that training graphs contain: fused backward computations whose decomposition into
// forward ops would keep more values alive (softmax, normalizations, convolutions, pooling,
// scatters), and the losses; conv_grad_input is also ConvTranspose's forward. Included by
// MemcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_TRAINING_OPS_TD
#define MEMC_TRAINING_OPS_TD

//===----------------------------------------------------------------------===//
// Activation and normalization backward
//===----------------------------------------------------------------------===//

def Memc_GeluGradOp : Memc_Op<"gelu_grad",
    [Pure, Elementwise, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gradient of gelu with respect to its input";
  let description = [{
    `grad * gelu'(input)` for the exact or tanh form, as PyTorch's GeluBackward.

    ```mlir
    %dx = memc.gelu_grad %dy, %x {approximate = "none"} : tensor<4x32xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($result)";
}

def Memc_BiasGeluGradOp : Memc_Op<"bias_gelu_grad",
    [Pure, AllTypesMatch<["grad", "input", "result"]>]> {
  let summary = "Gradient of bias_gelu with respect to its input";
  let description = [{
    `grad * gelu'(input + bias)`, the sum recomputed in registers from the saved input and bias.
    The bias's gradient is this result summed over the leading dimensions (as for an add).

    ```mlir
    %dx = memc.bias_gelu_grad %dy, %x, %b {approximate = "none"}
        : (tensor<4x64xf32>, tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input, Memc_FloatTensor:$bias,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class Memc_SoftmaxGradLikeOp<string mnemonic, string rule>
    : Memc_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Softmax-family backward from the forward output";
  let description = "Computes `" # rule # [{` along `axis`, from the forward op's output
    `output` (softmax probabilities or log-probabilities), so the forward input need not be
    kept.

    ```mlir
    %dx = memc.}] # mnemonic # [{ %dy, %y {axis = 3 : i64} : tensor<2x4x16x16xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$output, I64Attr:$axis);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($result)";
}

def Memc_SoftmaxGradOp : Memc_SoftmaxGradLikeOp<"softmax_grad", "y * (dy - sum(dy * y))">;
def Memc_LogSoftmaxGradOp
    : Memc_SoftmaxGradLikeOp<"log_softmax_grad", "dy - exp(y) * sum(dy)">;

def Memc_LayerNormGradOp : Memc_Op<"layer_norm_grad",
    [Pure, AllTypesMatch<["input", "grad", "input_grad"]>,
     AllTypesMatch<["scale", "scale_grad", "bias_grad"]>]> {
  let summary = "Layer normalization backward";
  let description = [{
    Gradients of `layer_norm(input, scale, bias)` with respect to the input, the scale and the
    bias, recomputing mean and inverse standard deviation from `input`.

    ```mlir
    %dx, %dg, %db = memc.layer_norm_grad %dy, %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
        -> (tensor<2x16x32xf32>, tensor<32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input,
                       Memc_FloatTensor:$scale, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Memc_FloatTensor:$input_grad, Memc_FloatTensor:$scale_grad,
                      Memc_FloatTensor:$bias_grad);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_RmsNormGradOp : Memc_Op<"rms_norm_grad",
    [Pure, AllTypesMatch<["input", "grad", "input_grad"]>,
     AllTypesMatch<["scale", "scale_grad"]>]> {
  let summary = "RMS normalization backward";
  let description = [{
    Gradients of `rms_norm(input, scale)` with respect to the input and the scale, recomputing
    the per-row inverse RMS from `input` (the forward saves nothing else).

    ```mlir
    %dx, %dg = memc.rms_norm_grad %dy, %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f64}
        : (tensor<2x16x32xf32>, tensor<2x16x32xf32>, tensor<32xf32>)
        -> (tensor<2x16x32xf32>, tensor<32xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input,
                       Memc_FloatTensor:$scale, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Memc_FloatTensor:$input_grad, Memc_FloatTensor:$scale_grad);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Memc_BatchNormGradOp : Memc_Op<"batch_norm_grad",
    [Pure, AllTypesMatch<["input", "grad", "input_grad"]>,
     AllTypesMatch<["scale", "scale_grad", "bias_grad"]>]> {
  let summary = "Batch normalization backward in training mode";
  let description = [{
    Gradients of training-mode `batch_norm` (batch statistics, biased variance) with respect to
    the input, the scale and the bias, recomputing the statistics from `input`.

    ```mlir
    %dx, %dg, %db = memc.batch_norm_grad %dy, %x, %g {epsilon = 1.0e-05 : f64}
        : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>, tensor<8xf32>)
        -> (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input,
                       Memc_FloatTensor:$scale, F64Attr:$epsilon);
  let results = (outs Memc_FloatTensor:$input_grad, Memc_FloatTensor:$scale_grad,
                      Memc_FloatTensor:$bias_grad);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_BatchMomentsOp : Memc_Op<"batch_moments", [Pure]> {
  let summary = "The batch's per-channel mean and biased variance, for running statistics";
  let description = [{
    Per channel (axis 1) of `input`, over every other axis: the mean and the biased variance,
    computed as training-mode `batch_norm` computes them (f64 sums, the variance from the
    squared deviations). The training step blends them into BatchNorm's running statistics; no
    gradient flows through them (running statistics never train). The results may have a float
    type other than the input's (the statistics keep their own).

    ```mlir
    %mean, %var = memc.batch_moments %x : (tensor<2x8x4x4xbf16>) -> (tensor<8xf32>, tensor<8xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input);
  let results = (outs Memc_FloatTensor:$mean, Memc_FloatTensor:$variance);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Indexing backward: scatters into zeros of the forward input's shape
//===----------------------------------------------------------------------===//

def Memc_GatherGradOp : Memc_Op<"gather_grad",
    [Pure, AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "Gather backward: scatter-add into zeros";
  let description = [{
    The result (the shape of the gathered-from tensor) is zero except that each slice of `grad`
    is added at its index along `axis`; repeated indices accumulate (embedding gradients).

    ```mlir
    %dw = memc.gather_grad %dy, %ids {axis = 0 : i64}
        : (tensor<2x16x32xf32>, tensor<2x16xi64>) -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Memc_SliceGradOp : Memc_Op<"slice_grad",
    [Pure, AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "Slice backward: place the slice's gradient into zeros";
  let description = [{
    The result has the sliced tensor's shape; the elements the slice took receive `grad`, the
    rest are zero.

    ```mlir
    %dx = memc.slice_grad %dy {starts = array<i64: 0, 4>, limits = array<i64: 2, 8>,
                               steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$grad, DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$limits,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling backward
//===----------------------------------------------------------------------===//

def Memc_ConvGradInputOp : Memc_Op<"conv_grad_input",
    [Pure, Memc_Differentiable, AllElementTypesMatch<["grad", "weight", "result"]>]> {
  let summary = "Convolution backward with respect to the input";
  let description = [{
    The transposed convolution of `grad` with `weight` under the forward op's attributes; the
    result type is the forward input's. It is also ONNX ConvTranspose's forward (whose weight
    layout, [in_channels, out_channels / group, k...], is the forward convolution's), so it has
    a gradient rule of its own: a convolution and a conv_grad_weight.

    ```mlir
    %dx = memc.conv_grad_input %dy, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                                        dilations = array<i64: 1, 1>, group = 1 : i64}
        : (tensor<2x8x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<2x3x16x16xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$weight,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Memc_ConvGradWeightOp : Memc_Op<"conv_grad_weight",
    [Pure, AllElementTypesMatch<["grad", "input", "result"]>]> {
  let summary = "Convolution backward with respect to the weight";
  let description = [{
    Correlates the forward input with `grad`; the result type is the weight's.

    ```mlir
    %dw = memc.conv_grad_weight %dy, %x {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                                         dilations = array<i64: 1, 1>, group = 1 : i64}
        : (tensor<2x8x16x16xf32>, tensor<2x3x16x16xf32>) -> tensor<8x3x3x3xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Memc_MaxPoolGradOp : Memc_Op<"max_pool_grad",
    [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Max pooling backward";
  let description = [{
    Routes each window's gradient to the window's maximum in `input` (the first one on ties, as
    PyTorch), recomputing the argmax rather than storing indices.

    ```mlir
    %dx = memc.max_pool_grad %dy, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
        pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false}
        : (tensor<2x8x4x4xf32>, tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_MaxPoolWithArgmaxOp : Memc_Op<"max_pool_with_argmax",
    [Pure, AllElementTypesMatch<["input", "result"]>, AllShapesMatch<["result", "argmax"]>]> {
  let summary = "Max pooling that also saves each output's maximum tap";
  let description = [{
    `max_pool`'s result, and per output the row-major index of its maximum tap in the whole
    window (padding included; 0 for a window entirely in the padding), one byte, so windows
    have at most 256 taps. Training graphs get it from `memc-save-max-pool-argmax`, which
    replaces a pool and its `max_pool_grad` by this op and `max_pool_grad_argmax`, so the
    backward keeps a byte per output instead of the pool's input.

    ```mlir
    %y, %taps = memc.max_pool_with_argmax %x {kernel_shape = array<i64: 2, 2>,
        strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>,
        ceil_mode = false} : (tensor<2x8x8x8xf32>) -> (tensor<2x8x4x4xf32>, tensor<2x8x4x4xui8>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Memc_FloatTensor:$result, StaticShapeTensorOf<[UI8]>:$argmax);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Memc_MaxPoolGradArgmaxOp : Memc_Op<"max_pool_grad_argmax",
    [Pure, AllShapesMatch<["grad", "argmax"]>]> {
  let summary = "Max pooling backward from the saved maximum taps";
  let description = [{
    `max_pool_grad`'s result, routing each window's gradient to the tap `max_pool_with_argmax`
    saved (the same tap, added in the same order, so the same bits). The result type is the
    forward input's.

    ```mlir
    %dx = memc.max_pool_grad_argmax %dy, %taps {kernel_shape = array<i64: 2, 2>,
        strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>,
        ceil_mode = false} : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xui8>) -> tensor<2x8x8x8xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, StaticShapeTensorOf<[UI8]>:$argmax,
                       DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_AvgPoolGradOp : Memc_Op<"avg_pool_grad",
    [Pure, AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "Average pooling backward";
  let description = [{
    Spreads each window's gradient evenly over the window's elements (with the forward op's
    divisor rule); the result type is the forward input's.

    ```mlir
    %dx = memc.avg_pool_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
        pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = false,
        count_include_pad = false} : (tensor<2x8x4x4xf32>) -> tensor<2x8x8x8xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                       BoolAttr:$count_include_pad);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Attention backward
//===----------------------------------------------------------------------===//

def Memc_FlashAttentionGradOp : Memc_Op<"flash_attention_grad",
    [Pure, AllTypesMatch<["query", "query_grad"]>, AllTypesMatch<["key", "key_grad"]>,
     AllTypesMatch<["value", "value_grad"]>, AllTypesMatch<["output", "grad"]>,
     AttrSizedOperandSegments]> {
  let summary = "FlashAttention-2 backward";
  let description = [{
    Gradients of `flash_attention` with respect to the query, the key and the value, from the
    gradient of its output, its inputs, its output and its logsumexp: the probabilities are
    recomputed block by block as `exp(scores - logsumexp)` and `D = rowsum(grad * output)`
    stands in for the softmax's row sums, so no [Tq, Tk] tensor exists. The key and value
    gradients of a kv head sum over the query heads that share it. With the forward's dropout
    (`dropout_ratio`, `seed`, `salt`) the mask is drawn again: dV takes the dropped
    probabilities and the gradient of the probabilities is dropped like them.

    ```mlir
    %dq, %dk, %dv = memc.flash_attention_grad %do, %q, %k, %v, %o, %lse
        {causal = true, scale = 0.125 : f64}
        : (tensor<2x12x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x4x64x64xf32>,
           tensor<2x4x64x64xf32>, tensor<2x12x64x64xf32>, tensor<2x12x64xf32>)
        -> (tensor<2x12x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$grad, Memc_FloatTensor:$query, Memc_FloatTensor:$key,
                       Memc_FloatTensor:$value, Memc_FloatTensor:$output,
                       StaticShapeTensorOf<[F32]>:$logsumexp, Optional<Memc_FloatTensor>:$mask,
                       Optional<StaticShapeTensorOf<[I64]>>:$salt, BoolAttr:$causal,
                       F64Attr:$scale, DefaultValuedAttr<F64Attr, "0.0">:$dropout_ratio,
                       DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Memc_FloatTensor:$query_grad, Memc_FloatTensor:$key_grad,
                      Memc_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $grad `,` $query `,` $key `,` $value `,` $output `,` $logsumexp (`,` $mask^)?
    (`salt` $salt^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Memc_CrossEntropyOp : Memc_Op<"cross_entropy", [Pure, Memc_Differentiable]> {
  let summary = "Mean cross-entropy of logits against integer labels";
  let description = [{
    torch.nn.functional.cross_entropy with the class axis last: `logits` is `[..., C]`, `labels`
    is `[...]`; the loss is the mean over positions whose label is not `ignore_index` of
    `-log_softmax(logits)[label]`, computed stably in one pass (fused log-softmax and NLL). Zero
    when every label is ignored.

    ```mlir
    %loss = memc.cross_entropy %logits, %labels {ignore_index = -100 : i64}
        : (tensor<2x16x64xf32>, tensor<2x16xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$logits, Memc_IndexTensor:$labels, I64Attr:$ignore_index);
  let results = (outs StaticShapeTensorOf<[F32]>:$loss);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Memc_CrossEntropyGradOp : Memc_Op<"cross_entropy_grad",
    [Pure, AllTypesMatch<["logits", "result"]>]> {
  let summary = "Gradient of cross_entropy with respect to the logits";
  let description = [{
    `grad * (softmax(logits) - onehot(label)) / count` at positions whose label is not ignored,
    zero elsewhere, where `count` is the number of such positions and `grad` the scalar gradient
    of the loss.

    ```mlir
    %dlogits = memc.cross_entropy_grad %dloss, %logits, %labels {ignore_index = -100 : i64}
        : (tensor<f32>, tensor<2x16x64xf32>, tensor<2x16xi64>) -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$grad, Memc_FloatTensor:$logits,
                       Memc_IndexTensor:$labels, I64Attr:$ignore_index);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Memc_LinearCrossEntropyOp : Memc_Op<"linear_cross_entropy",
    [Pure, Memc_Differentiable, InferTypeOpAdaptor, AllElementTypesMatch<["hidden", "weight"]>]> {
  let summary = "Cross-entropy of a linear head's logits, without the logits";
  let description = [{
    `cross_entropy(hidden @ weight [+ bias], labels)` (with `transpose_weight`, `hidden @
    weight^T`: a tied embedding or nn.Linear's [V, D] weight read in place, as matmul's
    `transpose_rhs`; the optional bias is [V])
    computed chunk by chunk over tokens and classes, as Cut Cross-Entropy does: kernels form one
    tile of logits at a time in f32 with an online logsumexp, so the [..., V] logits never
    exist. `hidden` is [..., D], `labels` [...]; the loss is the mean over positions whose label
    is not `ignore_index`, zero when every label is ignored (as `cross_entropy`).

    Results: the loss and each position's logsumexp over the classes in f32 (labels' shape),
    which the backward (`linear_cross_entropy_grad`) recomputes the probabilities from. The
    memc-fuse-loss pass writes it from a head product feeding `cross_entropy`.

    ```mlir
    %loss, %lse = memc.linear_cross_entropy %h, %wte, %labels
        {ignore_index = -100 : i64, transpose_weight}
        : (tensor<2x16x64xf32>, tensor<1000x64xf32>, tensor<2x16xi64>)
        -> (tensor<f32>, tensor<2x16xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$hidden, Memc_FloatTensor:$weight,
                       Memc_IndexTensor:$labels, Optional<Memc_FloatTensor>:$bias,
                       I64Attr:$ignore_index, UnitAttr:$transpose_weight);
  let results = (outs StaticShapeTensorOf<[F32]>:$loss, StaticShapeTensorOf<[F32]>:$logsumexp);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    /// V: the weight's class dimension.
    int64_t getNumClasses() {
      llvm::ArrayRef<int64_t> weight = mlir::cast<mlir::ShapedType>(getWeight().getType()).getShape();
      return getTransposeWeight() ? weight[0] : weight[1];
    }
  }];
}

def Memc_LinearCrossEntropyGradOp : Memc_Op<"linear_cross_entropy_grad",
    [Pure, AllTypesMatch<["hidden", "hidden_grad"]>, AllTypesMatch<["weight", "weight_grad"]>,
     AllElementTypesMatch<["hidden", "weight"]>]> {
  let summary = "Gradients of linear_cross_entropy with respect to the hidden states and weight";
  let description = [{
    With `dlogits = grad * (exp(logits - logsumexp) - onehot(label)) / count` on counted
    positions (zero on ignored ones), `hidden_grad = dlogits @ weight^T`, `weight_grad =
    hidden^T @ dlogits` (transposed with `transpose_weight`) and, with a bias, `bias_grad` the
    sum of dlogits over the positions, where each tile of logits is
    recomputed from `hidden` and `weight` as the forward formed it: neither the logits nor
    their gradient exist whole.

    ```mlir
    %dh, %dw = memc.linear_cross_entropy_grad %dloss, %h, %wte, %labels, %lse
        {ignore_index = -100 : i64, transpose_weight}
        : (tensor<f32>, tensor<2x16x64xf32>, tensor<1000x64xf32>, tensor<2x16xi64>,
           tensor<2x16xf32>) -> (tensor<2x16x64xf32>, tensor<1000x64xf32>)
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$grad, Memc_FloatTensor:$hidden,
                       Memc_FloatTensor:$weight, Memc_IndexTensor:$labels,
                       StaticShapeTensorOf<[F32]>:$logsumexp, Optional<Memc_FloatTensor>:$bias,
                       I64Attr:$ignore_index, UnitAttr:$transpose_weight);
  let results = (outs Memc_FloatTensor:$hidden_grad, Memc_FloatTensor:$weight_grad,
                      Optional<Memc_FloatTensor>:$bias_grad);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def Memc_SgdUpdateOp : Memc_Op<"sgd_update",
    [Pure, AllTypesMatch<["param", "grad", "velocity", "new_param", "new_velocity"]>]> {
  let summary = "One step of torch.optim.SGD for one parameter";
  let description = [{
    With `d = grad + weight_decay * param` (coupled weight decay) and, when `momentum` is not
    zero, `velocity' = momentum * velocity + d` (dampening 0; the velocity starts at zero, so
    the first step stores `d` as torch does) and `d = nesterov ? d + momentum * velocity' :
    velocity'`: `param' = param - lr * d`. `lr` is a scalar the runtime sets every step
    (schedules). The lowering writes the results over `param` and `velocity`. With a `gate`
    (an f32 scalar) at or below 0.5 the results are `param` and `velocity` unchanged and
    nothing is computed: the micro-batches that do not update under gradient accumulation,
    and the steps fp16's loss scaler skips.

    ```mlir
    %p1, %v1 = memc.sgd_update %p, %g, %v, %lr {momentum = 0.9 : f64, weight_decay = 0.0 : f64,
                                                 nesterov = false}
        : (tensor<32x16xf32>, tensor<32x16xf32>, tensor<32x16xf32>, tensor<f32>)
        -> (tensor<32x16xf32>, tensor<32x16xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$param, Memc_FloatTensor:$grad,
                       Memc_FloatTensor:$velocity, StaticShapeTensorOf<[F32]>:$lr,
                       Optional<StaticShapeTensorOf<[F32]>>:$gate,
                       F64Attr:$momentum, F64Attr:$weight_decay, BoolAttr:$nesterov);
  let results = (outs Memc_FloatTensor:$new_param, Memc_FloatTensor:$new_velocity);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_AdamWUpdateOp : Memc_Op<"adamw_update",
    [Pure, AllTypesMatch<["param", "grad", "new_param"]>,
     AllTypesMatch<["first_moment", "second_moment", "new_first_moment", "new_second_moment"]>]> {
  let summary = "One step of torch.optim.AdamW for one parameter";
  let description = [{
    torch.optim.AdamW's update, in its order of operations: `param *= 1 - lr * weight_decay`
    (decoupled), `m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`, then
    `param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)` where `t` is the
    1-based `step`. Moments are f32 whatever the parameter's type. `lr` and `step` are scalars
    the runtime sets every step; the lowering writes the results over `param` and the moments.
    With a `gate` at or below 0.5 the results are the inputs unchanged and nothing is
    computed (sgd_update's gate).

    ```mlir
    %p1, %m1, %v1 = memc.adamw_update %p, %g, %m, %v, %lr, %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64}
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<f32>)
        -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$param, Memc_FloatTensor:$grad,
                       StaticShapeTensorOf<[F32]>:$first_moment,
                       StaticShapeTensorOf<[F32]>:$second_moment,
                       StaticShapeTensorOf<[F32]>:$lr, StaticShapeTensorOf<[F32]>:$step,
                       Optional<StaticShapeTensorOf<[F32]>>:$gate,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps, F64Attr:$weight_decay);
  let results = (outs Memc_FloatTensor:$new_param,
                      StaticShapeTensorOf<[F32]>:$new_first_moment,
                      StaticShapeTensorOf<[F32]>:$new_second_moment);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Memc_AdamW8bitUpdateOp : Memc_Op<"adamw8bit_update",
    [Pure, AllTypesMatch<["param", "grad", "new_param"]>,
     AllTypesMatch<["first_moment", "second_moment", "new_first_moment", "new_second_moment"]>,
     AllTypesMatch<["first_absmax", "second_absmax", "new_first_absmax",
                    "new_second_absmax"]>]> {
  let summary = "One step of bitsandbytes' AdamW8bit for one parameter";
  let description = [{
    adamw_update's arithmetic on 8-bit block-wise moments (kernels/DynamicQuantization.h): each
    block of 256 elements of `first_moment` (indices into the signed dynamic code) and
    `second_moment` (the unsigned code) is dequantized with its f32 absmax, updated in f32
    exactly as adamw_update, and quantized again with the block's new absmax. All-zero absmax
    stands for a zero state, so the moments start at zero like adamw_update's. `gate` as
    adamw_update's.

    ```mlir
    %p1, %m1, %v1, %ma1, %va1 = memc.adamw8bit_update %p, %g, %m, %v, %ma, %va, %lr, %t
        {beta1 = 0.9 : f64, beta2 = 0.999 : f64, eps = 1.0e-08 : f64, weight_decay = 0.01 : f64}
        : (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xui8>, tensor<64x128xui8>,
           tensor<32xf32>, tensor<32xf32>, tensor<f32>, tensor<f32>)
        -> (tensor<64x128xf32>, tensor<64x128xui8>, tensor<64x128xui8>, tensor<32xf32>,
            tensor<32xf32>)
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$param, Memc_FloatTensor:$grad,
                       StaticShapeTensorOf<[UI8]>:$first_moment,
                       StaticShapeTensorOf<[UI8]>:$second_moment,
                       StaticShapeTensorOf<[F32]>:$first_absmax,
                       StaticShapeTensorOf<[F32]>:$second_absmax,
                       StaticShapeTensorOf<[F32]>:$lr, StaticShapeTensorOf<[F32]>:$step,
                       Optional<StaticShapeTensorOf<[F32]>>:$gate,
                       F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps, F64Attr:$weight_decay);
  let results = (outs Memc_FloatTensor:$new_param,
                      StaticShapeTensorOf<[UI8]>:$new_first_moment,
                      StaticShapeTensorOf<[UI8]>:$new_second_moment,
                      StaticShapeTensorOf<[F32]>:$new_first_absmax,
                      StaticShapeTensorOf<[F32]>:$new_second_absmax);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Weight copies kept across micro-batches
//===----------------------------------------------------------------------===//

def Memc_RefreshCopyOp : Memc_Op<"refresh_copy", [Pure, AllTypesMatch<["copy", "result"]>]> {
  let summary = "The 16-bit copy of a weight, made only where `refresh` is 1";
  let description = [{
    With gradient accumulation the parameters change only on the micro-batch that applies the
    update, so their 16-bit copies (mixed precision) need making once per optimizer step, not
    once per micro-batch: where `refresh` is nonzero the result is `source` rounded to the
    copy's type (a cast), elsewhere it is `copy`. The lowering writes the result over `copy`
    (persistent state), so a micro-batch that does not refresh does no work.

    ```mlir
    %wl = memc.refresh_copy %refresh, %w, %w_copy
        : (tensor<f32>, tensor<8x8xf32>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$refresh, Memc_FloatTensor:$source,
                       Memc_FloatTensor:$copy);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Activations offloaded to host memory (--offload-activations cpu)
//===----------------------------------------------------------------------===//

def Memc_OffloadOp : Memc_Op<"offload", [SameOperandsAndResultType]> {
  let summary = "A forward value the backward reads, copied to host memory";
  let description = [{
    The lowering places the result in the plan's HOST region, so the device's copy (an arena
    buffer) dies after its last forward reader; `memc.reload` brings it back for the backward
    (compiler/training/OffloadActivations.h). Not Pure: its value is its placement.

    ```mlir
    %h = memc.offload %x : tensor<4x16xf32>
    %x2 = memc.reload %h : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeTensor:$input);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Memc_ReloadOp : Memc_Op<"reload", [SameOperandsAndResultType]> {
  let summary = "An offloaded value copied back to the device ahead of its backward readers";
  let description = [{
    The counterpart of `memc.offload`: its result is an arena buffer again.
  }];
  let arguments = (ins AnyStaticShapeTensor:$input);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Loss scaling (--precision fp16): torch.cuda.amp.GradScaler's bookkeeping in the plan
//===----------------------------------------------------------------------===//

def Memc_NonFiniteCheckOp : Memc_Op<"non_finite_check", [Pure]> {
  let summary = "1 if any element of any gradient is inf or NaN, else 0";
  let description = [{
    GradScaler's `found_inf`: one kernel over every gradient of the step, so the decision to
    skip the optimizer step stays on the device (no host round trip per tensor). The result is
    an f32 scalar, 1 or 0, as torch's `found_inf` tensor.

    ```mlir
    %found_inf = memc.non_finite_check %g0, %g1 : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Memc_FloatTensor>:$grads);
  let results = (outs StaticShapeTensorOf<[F32]>:$found_inf);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Memc_LossScaleUpdateOp : Memc_Op<"loss_scale_update",
    [Pure, AllTypesMatch<["exponent", "growth", "skipped", "found_inf", "new_exponent",
                          "new_growth", "new_skipped"]>]> {
  let summary = "GradScaler.update: the next step's loss scale from this step's found_inf";
  let description = [{
    The scale is `initial * 2^exponent` (the state starts at zero, as every optimizer state, so
    exponent 0 is the initial scale). With `dynamic`: a step with `found_inf` halves the scale
    (exponent - 1) and restarts the count of consecutive finite steps (`growth`); a finite step
    counts, and the `window`-th in a row doubles the scale and restarts the count
    (torch's `_amp_update_scale_`, growth factor 2, backoff 0.5). Without `dynamic` (a fixed
    `--loss-scale`) the exponent and count stay. Either way `skipped` counts the steps whose
    update was skipped, so the optimizer's step number counts only the applied ones, as torch's
    AdamW state does. All operands are f32 scalars.

    ```mlir
    %e1, %n1, %s1 = memc.loss_scale_update %e, %n, %s, %found_inf {window = 2000 : i64,
                                                                   dynamic = true}
        : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
        -> (tensor<f32>, tensor<f32>, tensor<f32>)
    ```
  }];
  let arguments = (ins StaticShapeTensorOf<[F32]>:$exponent, StaticShapeTensorOf<[F32]>:$growth,
                       StaticShapeTensorOf<[F32]>:$skipped, StaticShapeTensorOf<[F32]>:$found_inf,
                       I64Attr:$window, BoolAttr:$dynamic);
  let results = (outs StaticShapeTensorOf<[F32]>:$new_exponent,
                      StaticShapeTensorOf<[F32]>:$new_growth,
                      StaticShapeTensorOf<[F32]>:$new_skipped);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data parallel (--world-size N): the ranks' collectives (kernels/Collectives.h)
//===----------------------------------------------------------------------===//

def Memc_AllReduceOp : Memc_Op<"all_reduce", [AllTypesMatch<["input", "result"]>]> {
  let summary = "The sum of a tensor over the `world_size` ranks of a data-parallel program";
  let description = [{
    Every rank runs the same step; this op is where their gradients meet (DDP's all-reduce,
    summing, so the mean is a multiply after it). With a `gate` (the step's `apply` flag under
    gradient accumulation) the ranks communicate only on the micro-batch whose gate is above
    0.5 and the result is the input elsewhere: accumulation communicates once per optimizer
    step, as DDP's `no_sync`. Every rank sees the same gate, so they agree on when to meet.
    Not Pure: no pass may drop, duplicate or recompute it on one rank alone.

    ```mlir
    %sum = memc.all_reduce %grad, %apply {world_size = 4 : i64}
        : (tensor<8x4xf32>, tensor<f32>) -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, Optional<StaticShapeTensorOf<[F32]>>:$gate,
                       I64Attr:$world_size);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

// ZeRO (--zero-stage 1-2): rank r of N holds the flat elements [r*S, (r+1)*S) of a tensor of
// E elements, S = ceil(E / N) (kernels::shardElements); the last shard is padded with zeros.

def Memc_ShardOp : Memc_Op<"shard", [Pure, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "This rank's flat shard of a tensor every rank holds whole";
  let description = [{
    The elements of `input`, flattened, that this rank of `world_size` owns, zero-padded to the
    shard size. Every rank runs the same step and each gets its own shard: the result depends on
    the rank the step runs on, so no pass may fold it at compile time.

    ```mlir
    %mine = memc.shard %param {world_size = 4 : i64} : tensor<10x3xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input, I64Attr:$world_size);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Memc_ReduceScatterOp : Memc_Op<"reduce_scatter",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "The sum over the ranks of a tensor, of which each rank keeps its shard";
  let description = [{
    ZeRO stage 2's gradient synchronisation: every rank contributes its whole gradient and
    receives the sum over the `world_size` ranks of its own flat shard (memc.shard's layout).
    Not Pure: no pass may drop, duplicate or recompute it on one rank alone.

    ```mlir
    %sum = memc.reduce_scatter %grad {world_size = 4 : i64} : tensor<10x3xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Memc_FloatTensor:$input, I64Attr:$world_size);
  let results = (outs Memc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Memc_AllGatherOp : Memc_Op<"all_gather"> {
  let summary = "The whole tensor from every rank's flat shard";
  let description = [{
    ZeRO's parameter gather: every rank contributes its shard (memc.shard's layout) and receives
    the whole tensor, the padding dropped. The result may be of a narrower float type than an
    f32 shard (bf16, f16): each rank rounds its shard before the exchange, so a parameter the
    step reads in 16 bits moves and lives in 16 bits. With a `gate` (the step's `apply` flag under gradient
    accumulation) the ranks communicate only on the micro-batch whose gate is above 0.5; the
    result is unspecified elsewhere (the step selects the old parameter there). Not Pure.

    ```mlir
    %whole = memc.all_gather %mine, %apply {world_size = 4 : i64}
        : (tensor<8xf32>, tensor<f32>) -> tensor<10x3xf32>
    ```
  }];
  let arguments = (ins Memc_Tensor:$input, Optional<StaticShapeTensorOf<[F32]>>:$gate,
                       I64Attr:$world_size);
  let results = (outs Memc_Tensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // MEMC_TRAINING_OPS_TD
