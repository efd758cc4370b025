//===- Pipeline.h - memc's compilation pipeline -----------------*- C++ -*-===//
//
// The whole compilation from one options struct: import the ONNX model, run the IR transforms
// (registered passes, in the order below), then plan under the budget. `memc` is a front end
// that turns flags into PipelineOptions, calls compileModel and prints or writes its result.
//
// Pipeline order (a slot marked "later" is where that pass goes when it exists):
//   1. canonicalize            fuse-gelu, fuse-bias-gelu, fuse-rms-norm, canonicalize, cse
//                              (buildCanonicalizationPipeline)
//   2. attention fusion        infer and train (--fuse-attention auto): memc-fuse-attention,
//                              before autodiff, so the backward is flash_attention_grad
//   2b. LoRA / quantization  train with --lora-rank: memc-lora, adapters beside the targeted
//                              products and (--quantize-base nf4) the frozen base in NF4
//                              (compiler/training/LowRankAdapters.h), before master weights
//   2c. master weights         train: memc-master-weights, 16-bit parameters that train in f32
//   3. precision policy        --precision bf16: memc-autocast then canonicalize, after the
//                              fusions (whose patterns casts would break), before autodiff sees
//                              the ops (passes/PrecisionPolicy.cpp)
//   3b. residual + norm fusion  infer and train: memc-fuse-add-layer-norm, after autocast (an
//                              add and norm in one type), before autodiff
//   4. build the training step(s)  train only: @gradients (for --dump-grads) and @train_step;
//                              with --fuse-loss auto, the head product and cross_entropy become
//                              linear_cross_entropy (passes/LossFusion.h) before autodiff
//   5. canonicalize            train only: folds what autodiff wrote
//   5b. max-pool argmax        train only (--max-pool-argmax on, or auto where remat does not
//                              run): memc-save-max-pool-argmax, the backward of max_pool keeps a
//                              byte per output, not the input
//   6. plan within the budget  planWithinBudget: remat (training only) and the memory plan
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PIPELINE_PIPELINE_H
#define MEMC_COMPILER_PIPELINE_PIPELINE_H

#include "compiler/importer/OnnxImporter.h"
#include "compiler/importer/WeightStore.h"
#include "compiler/pipeline/PlanWithinBudget.h"
#include "compiler/training/LowRankAdapters.h"
#include "compiler/training/TrainStep.h"

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>
#include <vector>

namespace memc {

/// Brings freshly imported IR to memc's canonical form: decomposed GELUs fused, folds and
/// dead code removed, common subexpressions (e.g. repeated scalar constants) merged.
void buildCanonicalizationPipeline(mlir::OpPassManager &pm);

enum class CompileMode { Import, Infer, Train };

/// What the ops compute in: fp32 everywhere, or bf16 or fp16 where the precision policy allows,
/// with the parameters and optimizer state kept in f32. Training in fp16 also scales the loss
/// (TrainStepOptions' optimizer.lossScale, which the caller sets).
enum class Precision { Fp32, Bf16, Fp16 };
/// The Precision of a --precision value ("fp32", "bf16", "fp16"); nothing for any other text.
std::optional<Precision> parsePrecision(llvm::StringRef text);

/// The learning-rate schedule a training program runs (run-time inputs, not part of the IR).
struct LearningRateSchedule {
  double learningRate = 1e-3;
  int64_t warmupSteps = 0, decaySteps = 0;
};

struct PipelineOptions {
  CompileMode mode = CompileMode::Import;
  ImportOptions import;
  /// Import mode: false keeps the IR exactly as imported.
  bool canonicalize = true;
  /// Infer and train: attention subgraphs become memc.flash_attention (--fuse-attention auto),
  /// before autodiff, so the backward keeps O(T) per head.
  bool fuseAttention = true;
  /// Train: max_pool saves a one-byte argmax per output for its gradient instead of keeping
  /// its input (--max-pool-argmax on); unset (auto), only where remat does not run: under a
  /// budget the heuristic reached less with it (ResNet-50 B32's lowest peak 1.13 -> 1.34 GiB).
  std::optional<bool> saveMaxPoolArgmax;
  /// Train: LoRA adapters and the quantized base (rank 0: none). `training.trainable` must
  /// already name the adapters (loraTrainable).
  LoraOptions lora;
  /// Train mode: the step to build and the schedule its program runs.
  TrainStepOptions training;
  LearningRateSchedule schedule;
  /// Infer and train.
  Precision precision = Precision::Fp32;
  /// Infer and train: the budget (inference never recomputes, whatever `budget.mode` says).
  BudgetOptions budget;
  /// Train: the step's activations go to host memory (compiler/lowering/OffloadActivations.h),
  /// instead of remat (budget.mode None).
  bool offloadActivations = false;
  /// Train: plan @train_step only, not the programs it carries (--dump-grads', --eval-data's)
  /// nor its ONNX template; for answers about memory (the ladder, --micro-batch auto), which
  /// write no program.
  bool planStepOnly = false;
};

/// The IR transforms of `options.mode`, steps 1 to 5b of the order above.
void buildTransformPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

struct CompiledModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  WeightStore weights;
  /// Infer: @forward's plan; train: @train_step's, with its training section and (when it
  /// fits) the @gradients program filled in. With what the reports read.
  std::optional<BudgetedPlan> planned;
  /// Train, when the step fits: what the user should know and may ignore (the @gradients
  /// program of --dump-grads missing the budget; a model the program cannot save as ONNX).
  std::vector<std::string> warnings;
};

/// Imports `modelPath` and compiles it as `options` say. Fails with errors emitted through the
/// context; a budget the plan cannot meet is not a failure (planned->fits is false). A training
/// plan that fits carries the model's ONNX template (OnnxTemplate.h) when memc can make one.
mlir::FailureOr<CompiledModel> compileModel(mlir::MLIRContext &context,
                                            const std::string &modelPath,
                                            const PipelineOptions &options);

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_PIPELINE_H
