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

def FuseRmsNorm : Pass<"memc-fuse-rms-norm", "::mlir::func::FuncOp"> {
  let summary = "Recognize decomposed RMS norm and replace it with memc.rms_norm";
  let description = [{
    torch.onnx.export writes Llama's RMSNorm, `x * rsqrt(mean(x^2, -1) + eps) * weight`, as
    pow (or mul), reduce_mean, add, sqrt and div (or reciprocal) and two muls. One
    `memc.rms_norm` computes the statistic in f32 whatever the activations' type and saves only
    x for the backward, where the chain saves x, the normalized product and the statistics.
    The inverse root may be `1 / sqrt`, `reciprocal(sqrt)`, `pow(., -0.5)` or a division
    `x / sqrt`; products match in any association and operand order. The mean must be over the
    last axis with keepdims, the weight of x's last dimension's shape; anything else stays.

    ```mlir
    %0 = memc.pow %x, %c2 ...   %1 = memc.reduce_mean %0 {axes = array<i64: 2>, keepdims = true} ...
    %2 = memc.add %1, %eps ...  %3 = memc.sqrt %2 ...   %4 = memc.div %c1, %3 ...
    %5 = memc.mul %x, %4 ...    %6 = memc.mul %5, %w ...
    // becomes
    %6 = memc.rms_norm %x, %w {axis = 2 : i64, epsilon = 1.0e-06 : f64} ...
    ```
  }];
  let dependentDialects = ["::memc::MemcDialect"];
}

//===----------------------------------------------------------------------===//
// Fusions
//===----------------------------------------------------------------------===//

def FuseAddLayerNorm : Pass<"memc-fuse-add-layer-norm", "::mlir::func::FuncOp"> {
  let summary = "Fuse a residual add into the layer norm that reads it (memc.add_layer_norm)";
  let description = [{
    A transformer's `layer_norm(x + f(x))` (post-norm, BERT) or `h = x + f(x); layer_norm(h)`
    (pre-norm, GPT-2, where h is also the next residual) becomes one `memc.add_layer_norm`
    that writes the sum and normalizes each row while it is in cache, so the sum is not read back
    from memory. The add's operands must have the sum's type (no broadcasting, no cast between
    the add and the norm: it runs after memc-autocast, so a norm autocast moved to 16 bits
    keeps its own 16-bit input). The sum's other readers read the fused op's first result.

    ```mlir
    %h = memc.add %x, %r : (tensor<2x16x32xf32>, tensor<2x16x32xf32>) -> tensor<2x16x32xf32>
    %y = memc.layer_norm %h, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} ...
    // becomes
    %h, %y = memc.add_layer_norm %x, %r, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} ...
    ```

    With `fuse-shared-sums=false` only a sum the norm alone reads is fused: rematerialization
    recomputes a pre-norm block's norm from the residual sum it keeps, where the fused op could
    only be recomputed from both addends, so the pipeline turns it off whenever remat may run.
  }];
  let options = [
    Option<"fuseSharedSums", "fuse-shared-sums", "bool", /*default=*/"true",
           "Also fuse a sum that other ops read (a pre-norm block's residual stream)">
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

def FuseAttention : Pass<"memc-fuse-attention", "::mlir::func::FuncOp"> {
  let summary = "Replace attention subgraphs with memc.flash_attention";
  let description = [{
    Recognizes `softmax(scale * q @ k^T [+ mask | masked_fill]) @ v` as torch.onnx.export writes
    it (scale by Mul or Div on the scores or on q and k^T, an additive mask or a masked_fill
    with -inf, k's transposes absorbed, rank-3 nn.MultiheadAttention layouts, a Dropout on the
    probabilities, which becomes the op's own with the same mask) and replaces it with one
    `memc.flash_attention`, whose backward keeps O(T) per head instead of the [T, T]
    probabilities. Candidates it cannot express stay as they are; the pass marks the function
    with `memc.attention_fused` (the count) and, with `remark-unfused`, remarks on each unfused
    candidate and why.

    ```mlir
    %s = memc.matmul %q, %kt ...   %s1 = memc.mul %s, %c0_35 ...   %s2 = memc.add %s1, %mask ...
    %p = memc.softmax %s2 {axis = 3 : i64} ...   %o = memc.matmul %p, %v ...
    // becomes
    %o, %lse = memc.flash_attention %q, %k, %v, %mask4 {causal = false, scale = 0.35 : f64} ...
    ```
  }];
  let options = [
    Option<"remarkUnfused", "remark-unfused", "bool", "false",
           "Emit a remark for each attention candidate left unfused, with the reason">
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

def FuseBiasGelu : Pass<"memc-fuse-bias-gelu", "::mlir::func::FuncOp"> {
  let summary = "Fuse a linear layer's bias add into the GELU after it (memc.bias_gelu)";
  let description = [{
    torch.onnx.export writes an MLP's `gelu(linear(x))` as a matmul (Gemm imports as one), an
    add of the bias in either operand order, and a GELU (memc-fuse-gelu's memc.gelu). One
    `memc.bias_gelu` reads the product and the bias and writes the activation: the sum is
    neither written nor read back, and the backward saves the product in its place. The bias must
    be [N], N the last dimension, of the data's element type; an add whose sum has other readers
    stays as it is.

    ```mlir
    %s = memc.add %h, %b : (tensor<4x16x64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
    %y = memc.gelu %s {approximate = "tanh"} : tensor<4x16x64xf32>
    // becomes
    %y = memc.bias_gelu %h, %b {approximate = "tanh"}
        : (tensor<4x16x64xf32>, tensor<64xf32>) -> tensor<4x16x64xf32>
    ```
  }];
  let dependentDialects = ["::memc::MemcDialect"];
}

def FuseLoss : Pass<"memc-fuse-loss", "::mlir::func::FuncOp"> {
  let summary = "Replace the LM head product feeding cross_entropy with memc.linear_cross_entropy";
  let description = [{
    Recognizes `cross_entropy(hidden @ weight [+ bias], labels)` with the weight 2-D (tied or
    not, read in place with `transpose_rhs`) and the bias [V], through reshapes that keep the
    class axis and casts between float types, and replaces it with one `memc.linear_cross_entropy`, whose kernels form the
    logits a tile at a time (Cut Cross-Entropy): neither the [..., V] logits nor their gradient
    exist. Logits something else reads stay unfused. The training step runs the same function
    (`fuseHeadIntoLoss`) on the loss it attaches, before autodiff (`--fuse-loss auto`); the pass
    marks the function with `memc.loss_fused` (the count), `memc.loss_logits_bytes_avoided` and,
    with `remark-unfused`, remarks on each unfused loss and why.

    ```mlir
    %logits = memc.matmul %h, %wte {transpose_rhs} ...
    %loss = memc.cross_entropy %logits, %labels {ignore_index = -100 : i64} ...
    // becomes
    %loss, %lse = memc.linear_cross_entropy %h, %wte, %labels
        {ignore_index = -100 : i64, transpose_weight} ...
    ```
  }];
  let options = [
    Option<"remarkUnfused", "remark-unfused", "bool", "false",
           "Emit a remark for each cross_entropy left unfused, with the reason">
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

def SaveMaxPoolArgmax : Pass<"memc-save-max-pool-argmax", "::mlir::func::FuncOp"> {
  let summary = "Max pooling saves its argmax for the backward instead of its input";
  let description = [{
    After autodiff: a `max_pool` whose gradient is a `max_pool_grad` (reading the pool's
    input) becomes `max_pool_with_argmax`, which also writes each output's maximum tap as one
    byte, and the gradient becomes `max_pool_grad_argmax`, which routes by those taps. The
    backward then keeps a byte per output instead of the pool's input (for a 3x3 stride-2 pool,
    1/16 of an f32 input), and does not search the windows again. The same taps are picked
    (first maximum, NaN wins) and added in the same order, so the gradients are the same bits.
    Windows of more than 256 taps keep `max_pool_grad`.

    ```mlir
    %y = memc.max_pool %x {...}    %dx = memc.max_pool_grad %dy, %x {...}
    // becomes
    %y, %taps = memc.max_pool_with_argmax %x {...}
    %dx = memc.max_pool_grad_argmax %dy, %taps {...}
    ```
  }];
  let dependentDialects = ["::memc::MemcDialect"];
}

//===----------------------------------------------------------------------===//
// Precision
//===----------------------------------------------------------------------===//

def Autocast : Pass<"memc-autocast", "::mlir::func::FuncOp"> {
  let summary = "Mixed precision: compute each op in the type the precision policy gives it";
  let description = [{
    torch.autocast done by the compiler, before autodiff: matmuls and convolutions take 16-bit
    operands and give 16-bit results (the kernels accumulate in f32); softmax and layer norm
    compute in f32 but read and store 16 bits where every reader takes their result in 16 bits
    (else f32); log-softmax, RMS norm (which then saves the f32 residual stream, as autocast's
    does), exp/log/pow/sqrt/reciprocal, sums and means take f32; batch norm
    keeps its data's type with f32 statistics; every other op computes in the widest type of the
    activations it
    reads, and weights, buffers and constants follow the activations they meet. The table is
    `passes/PrecisionPolicy.cpp`. Weights and parameters keep their f32 types in the signature
    (master weights); their 16-bit copies are cast once at the entry and shared by every reader.
    Each value is cast at most once per type; asking for a cast's source type gives the source,
    so no cancelling pair is built. Results keep their declared types.

    ```mlir
    %h = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    // becomes
    %wl = memc.cast %w : tensor<8x8xf32> -> tensor<8x8xbf16>
    %xl = memc.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    %h = memc.matmul %xl, %wl : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "The 16-bit type ops compute in: bf16 or fp16">,
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

#endif // MEMC_PASSES_TD
