//===- Passes.td - memc's passes over compiler transforms --*- tablegen -*-===//
//
// Passes that wrap transforms of the compiler (compiler/training, compiler/remat), so that each
// runs alone through memc-opt. They live beside the pipeline rather than in passes/, which
// depends only on the dialect and MLIR: passes/ holds rewrites of the IR alone.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PIPELINE_PASSES_TD
#define MEMC_COMPILER_PIPELINE_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

def BuildTrainStep : Pass<"memc-build-train-step", "::mlir::ModuleOp"> {
  let summary = "Build @train_step (forward, loss, gradients) from @forward";
  let description = [{
    Adds `@train_step`: a copy of `@forward` with batch normalization in training mode, the loss
    against a new labels argument, and the reverse sweep, returning the loss and the gradient of
    every trainable parameter. Gradient rules come from each op's DifferentiableOpInterface.
    A thin wrapper around memc::buildTrainStep (compiler/training).

    ```mlir
    func.func @forward(%x: tensor<4x16xf32> {memc.input = "x"},
                       %w: tensor<16x10xf32> {memc.param = "w", memc.param_kind = "parameter"})
        -> (tensor<4x10xf32> {memc.output = "logits"})
    // gains
    func.func @train_step(%x, %labels: tensor<4xi64> {memc.input = "labels"}, %w)
        -> (tensor<f32> {memc.output = "loss"}, tensor<16x10xf32> {memc.gradient_of = "w"})
    ```
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross_entropy\"",
           "Loss: cross_entropy or mse">,
    Option<"lossInput", "loss-input", "std::string", /*default=*/"\"\"",
           "Graph output the loss is computed from (default: the only output)">,
    Option<"labels", "labels", "std::string", /*default=*/"\"labels\"",
           "Name of the labels argument">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "cross_entropy: label value that contributes nothing">,
    ListOption<"freeze", "freeze", "std::string", "Globs of parameters that do not train">,
    ListOption<"trainable", "trainable", "std::string",
               "Globs of the only parameters that train">,
    ListOption<"noDecay", "no-decay", "std::string",
               "Globs of trained parameters without weight decay">,
    Option<"noDecayNormsAndBiases", "no-decay-norms-and-biases", "bool", /*default=*/"false",
           "Hugging Face Trainer's group: no weight decay for biases and norm parameters">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"none\"",
           "none (return gradients), sgd or adamw (return updated parameters and state)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0", "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false", "SGD Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (coupled for SGD, decoupled for AdamW; default: the optimizer's, "
           "torch.optim's: SGD 0, AdamW 0.01)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "Clip the gradients' global norm to this value (0: off)">,
    Option<"logGradNorm", "log-grad-norm", "bool", /*default=*/"false",
           "Output the gradients' global norm (memc.grad_norm)">,
    Option<"accumulationSteps", "accumulation-steps", "int64_t", /*default=*/"1",
           "Micro-batches per optimizer step (gradient accumulation)">,
    Option<"tokenWeightedAccumulation", "token-weighted-accumulation", "bool",
           /*default=*/"true",
           "With accumulation under cross_entropy, weight each micro-batch by its counted "
           "labels (the input memc.loss_weight), as one bigger batch would">,
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"none\"",
           "fp16 loss scaling: none, dynamic (GradScaler from 2^16), or a fixed scale">,
    Option<"lossScaleWindow", "loss-scale-window", "int64_t", /*default=*/"2000",
           "Consecutive finite steps before a dynamic scale doubles">,
    Option<"fuseLoss", "fuse-loss", "bool", /*default=*/"true",
           "cross_entropy: fuse the head product into memc.linear_cross_entropy">,
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1",
           "Data parallel: ranks whose gradients each update sums (memc.all_reduce)">,
    Option<"bucketCapMb", "bucket-cap-mb", "int64_t", /*default=*/"25",
           "Data parallel, stages 0 and 1: MiB of gradients per all-reduce (0: one each)">,
    Option<"zeroStage", "zero-stage", "int64_t", /*default=*/"0",
           "With world-size > 1: ZeRO's sharding, 1 the optimizer state, 2 also the gradients, "
           "3 also the parameters">
  ];
  let dependentDialects = ["::memc::MemcDialect", "::mlir::func::FuncDialect"];
}

def LowRankAdapters : Pass<"memc-lora", "::mlir::func::FuncOp"> {
  let summary = "Add PEFT's LoRA adapters to matmul weights; store the frozen base in NF4";
  let description = [{
    For each 2-D weight a matmul reads whose module name (the weight's name less `.weight`)
    `targets` matches, adds `<module>.lora_A.weight` [rank, in] and `<module>.lora_B.weight`
    [out, rank] and the path `(alpha / rank) * dropout(x) A^T B^T` beside each product. With
    `quantize-base=nf4`, every frozen weight only matmuls read, except a graph output's (the LM
    head), becomes QLoRA's NF4 storage read by memc.matmul_nf4. Runs on @forward before the
    training step is built. A thin wrapper around memc::addLowRankAdapters (compiler/training).
  }];
  let options = [
    Option<"rank", "rank", "int64_t", "0", "Adapter rank (0: no adapters)">,
    Option<"alpha", "alpha", "double", "0", "The adapters' scale is alpha / rank">,
    Option<"dropout", "dropout", "double", "0", "Dropout on the adapters' input">,
    ListOption<"targets", "targets", "std::string", "Globs over module names">,
    Option<"quantizeBase", "quantize-base", "std::string", "\"none\"",
           "none or nf4: the frozen base's storage">,
    Option<"doubleQuantization", "double-quant", "bool", "true",
           "Quantize the NF4 absmax in 8 bits">,
    ListOption<"trainable", "trainable", "std::string",
               "Globs of parameters that train besides the adapters (never quantized)">
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

def MasterWeights : Pass<"memc-master-weights", "::mlir::func::FuncOp"> {
  let summary = "Hold the 16-bit parameters of a 16-bit model in f32 for training";
  let description = [{
    For models exported in 16 bits (model.half(), model.bfloat16()): each f16 or bf16 argument
    that is a parameter that trains becomes f32 (the master weight the optimizer updates), and
    the function computes on its 16-bit copy, cast once at the entry. Buffers and frozen
    parameters (`freeze`, `trainable`: the training step's globs) keep their types. Runs before
    the training step is built, so the step's gradients and optimizer state are f32 too.
    A thin wrapper around memc::holdParametersInFloat32 (compiler/training).

    ```mlir
    func.func @forward(%x: tensor<4x8xbf16>, %w: tensor<8x8xbf16> {memc.param_kind = "parameter"})
    // becomes
    func.func @forward(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32> {memc.param_kind = "parameter"}) {
      %wl = memc.cast %w : tensor<8x8xf32> -> tensor<8x8xbf16>
    ```
  }];
  let options = [
    ListOption<"freeze", "freeze", "std::string", "Globs of parameters that do not train">,
    ListOption<"trainable", "trainable", "std::string",
               "Globs of the only parameters that train">
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

def Rematerialize : Pass<"memc-remat", "::mlir::func::FuncOp"> {
  let summary = "Recompute forward values in the backward so the step fits a memory budget";
  let description = [{
    On a training step (a function with a result named "loss"), decides which forward ops run
    again just before their first backward use instead of keeping their results, and clones
    them there (compiler/remat). `mode=auto` recomputes only what `budget` needs, with the
    least recompute cost (FLOPs and bytes of the shared cost model), the memory planner's peak
    of the rewritten function being the check; `mode=full` keeps only layer boundaries.
    Functions without a loss are left alone. A budget that cannot be met is an error naming the
    lowest peak reached.

    ```mlir
    // memc-opt --memc-remat="mode=full"
    %h = memc.gelu %x ...           // forward
    ...
    %h2 = memc.gelu %x ...          // recomputed just before the backward reads it
    %dw = memc.matmul %hT, %dy ...
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"", "auto, none or full">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Peak bytes allowed (24GiB, 512MiB, ...); auto does nothing without one">,
    Option<"solver", "solver", "std::string", /*default=*/"\"heuristic\"",
           "heuristic or ilp">,
  ];
  let dependentDialects = ["::memc::MemcDialect"];
}

#endif // MEMC_COMPILER_PIPELINE_PASSES_TD
