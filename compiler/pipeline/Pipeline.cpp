//===- Pipeline.cpp - memc's compilation pipeline -------------------------===//
#include "compiler/pipeline/Pipeline.h"
#include "compiler/importer/CheckpointWeights.h"
#include "compiler/lowering/OffloadActivations.h"
#include "compiler/lowering/OnnxTemplate.h"
#include "compiler/pipeline/Passes.h"
#include "compiler/training/TrainStepSignature.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/KernelTargets.h"
#include "passes/AttentionFusion.h"
#include "passes/Passes.h"
#include "runtime/support/Bytes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace memc {

namespace {

/// Whether remat may rewrite the step: a budget, or --remat full.
bool rematMayRun(const PipelineOptions &options) {
  return options.budget.mode != RematMode::None &&
         (options.budget.budgetBytes || options.budget.mode == RematMode::Full);
}

} // namespace

std::optional<Precision> parsePrecision(llvm::StringRef text) {
  if (text == "fp32")
    return Precision::Fp32;
  if (text == "bf16")
    return Precision::Bf16;
  if (text == "fp16")
    return Precision::Fp16;
  return std::nullopt;
}

void buildCanonicalizationPipeline(OpPassManager &pm) {
  OpPassManager &function = pm.nest<func::FuncOp>();
  function.addPass(createFuseGelu());
  function.addPass(createFuseBiasGelu());
  function.addPass(createFuseRmsNorm());
  function.addPass(createCanonicalizerPass());
  function.addPass(createCSEPass());
}

void buildTransformPipeline(OpPassManager &pm, const PipelineOptions &options) {
  if (options.mode == CompileMode::Import && !options.canonicalize)
    return;
  buildCanonicalizationPipeline(pm);
  if (options.mode != CompileMode::Import && options.fuseAttention)
    pm.nest<func::FuncOp>().addPass(createFuseAttention());
  // LoRA adapters and the NF4 base, before anything trains: the adapters are parameters the
  // step differentiates, and master weights and autocast treat them as any other.
  if (options.mode == CompileMode::Train && options.lora.rank > 0) {
    LowRankAdaptersOptions lora;
    lora.rank = options.lora.rank;
    lora.alpha = options.lora.alpha;
    lora.dropout = options.lora.dropout;
    lora.targets = options.lora.targets;
    lora.quantizeBase = options.lora.quantizeNf4 ? "nf4" : "none";
    lora.doubleQuantization = options.lora.doubleQuantization;
    lora.trainable = options.lora.alsoTrainable;
    pm.nest<func::FuncOp>().addPass(createLowRankAdapters(lora));
  }
  // A 16-bit model trains on f32 master weights, whatever --precision says about its ops; its
  // frozen parameters keep their 16-bit storage.
  if (options.mode == CompileMode::Train) {
    MasterWeightsOptions masters;
    masters.freeze = options.training.freeze;
    masters.trainable = options.training.trainable;
    pm.nest<func::FuncOp>().addPass(createMasterWeights(masters));
  }
  if (options.precision != Precision::Fp32 && options.mode != CompileMode::Import) {
    OpPassManager &function = pm.nest<func::FuncOp>();
    AutocastOptions autocast;
    autocast.precision = options.precision == Precision::Fp16 ? "fp16" : "bf16";
    function.addPass(createAutocast(autocast));
    function.addPass(createCanonicalizerPass());
  }
  // After autocast: a residual add fuses into the norm only where both compute in one type.
  // Where remat may run (a budget, or --remat full), a pre-norm block's shared sum stays
  // unfused: remat recomputes the norm from the kept sum, the fused op only from both addends
  // (gpt2-124m's lowest reachable peak was 3.12 GiB with it fused, 2.36 GiB without).
  if (options.mode != CompileMode::Import) {
    FuseAddLayerNormOptions residual;
    residual.fuseSharedSums = options.mode != CompileMode::Train || !rematMayRun(options);
    pm.nest<func::FuncOp>().addPass(createFuseAddLayerNorm(residual));
  }
  if (options.mode != CompileMode::Train)
    return;
  // --dump-grads runs @gradients on its own: the step without an optimizer.
  TrainStepOptions gradientsOnly = options.training;
  gradientsOnly.optimizer = {};
  gradientsOnly.functionName = "gradients";
  gradientsOnly.warnUnreachable = false; // the training step warns once
  gradientsOnly.zeroUnreachableGradients = false; // what trains, as the training step
  pm.addPass(createBuildTrainStepPass(gradientsOnly));
  // --eval-data runs @evaluate: the loss in eval mode, without backward or update.
  TrainStepOptions evaluation = options.training;
  evaluation.optimizer = {};
  evaluation.functionName = "evaluate";
  evaluation.evaluationOnly = true;
  pm.addPass(createBuildTrainStepPass(evaluation));
  pm.addPass(createBuildTrainStepPass(options.training));
  buildCanonicalizationPipeline(pm);
  if (options.saveMaxPoolArgmax.value_or(!rematMayRun(options)))
    pm.nest<func::FuncOp>().addPass(createSaveMaxPoolArgmax());
  // Optimizer-state sharding is the step's (--zero-stage, compiler/training/DataParallel.h).
}

namespace {

/// The parameters memc made (LowRankAdapters.h): adapters and NF4 scales, not the model's.
std::set<std::string> madeByMemc(func::FuncOp step) {
  std::set<std::string> names;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (auto derived = step.getArgAttrOfType<StringAttr>(i, kDerivedAttr);
        derived && derived.getValue() != "nf4")
      names.insert(step.getArgAttrOfType<StringAttr>(i, kParamNameAttr).str());
  return names;
}

/// What the runtime's training loop needs beyond the step: names, schedule, and for
/// cross-entropy the class count, read off the loss's logits (the axis the labels lack).
LogicalResult recordTrainingSetup(func::FuncOp step, const PipelineOptions &options,
                                  plan::Plan &plan) {
  FailureOr<TrainStepSignature> signature = readTrainStepSignature(step);
  if (failed(signature))
    return failure();
  const TrainStepOptions &training = options.training;
  plan::Training *setup = plan.mutable_training();
  setup->set_loss_output("loss");
  setup->set_labels_input(training.labelsName);
  setup->set_optimizer(training.optimizer.name);
  setup->set_learning_rate(options.schedule.learningRate);
  setup->set_warmup_steps(options.schedule.warmupSteps);
  setup->set_decay_steps(options.schedule.decaySteps);
  setup->set_accumulation_steps(training.optimizer.accumulationSteps);
  setup->set_world_size(training.worldSize);
  setup->set_zero_stage(training.worldSize > 1 ? training.zeroStage : 0);
  setup->set_clip_grad_norm(training.optimizer.clipGradNorm);
  if (options.lora.rank > 0) {
    plan::LoraAdapters *lora = setup->mutable_lora();
    lora->set_rank(options.lora.rank);
    lora->set_alpha(options.lora.alpha);
    lora->set_dropout(options.lora.dropout);
    StringRef suffix = ".lora_A.weight";
    for (unsigned i = 0; i < step.getNumArguments(); ++i)
      if (auto name = step.getArgAttrOfType<StringAttr>(i, kParamNameAttr);
          name && name.getValue().ends_with(suffix)) {
        lora->add_target_modules(name.getValue().drop_back(suffix.size()).str());
        lora->add_fan_in_fan_out(step.getArgAttr(i, kFanInFanOutAttr) != nullptr);
      }
  }
  if (const LossScaleOptions &scaling = training.optimizer.lossScale; scaling.enabled) {
    plan::LossScaling *recorded = setup->mutable_loss_scaling();
    recorded->set_initial_scale(scaling.initialScale);
    recorded->set_dynamic(scaling.dynamic);
    recorded->set_window(scaling.window);
  }
  if (training.loss != LossKind::CrossEntropy)
    return success();
  for (Operation *user : step.getArgument(signature->labels).getUsers())
    if (auto loss = dyn_cast<CrossEntropyOp>(user))
      setup->set_classes(loss.getLogits().getType().getShape().back());
    else if (auto fused = dyn_cast<LinearCrossEntropyOp>(user))
      setup->set_classes(fused.getNumClasses());
  setup->set_ignore_index(training.ignoreIndex);
  return success();
}

/// Plans @train_step and, when it fits, @gradients and @evaluate, which it carries.
LogicalResult planTraining(ModuleOp module, const std::string &modelName,
                           const PipelineOptions &options, CompiledModel &compiled) {
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (options.offloadActivations)
    offloadActivations(step);
  // Only the step stages its inputs: --dump-grads and --eval-data run their plans one batch at
  // a time.
  BudgetOptions stepBudget = options.budget;
  const kernels::Target *target = kernels::findTarget(options.budget.plan.target);
  stepBudget.plan.stageInputs = target && target->stagesInputs;
  FailureOr<BudgetedPlan> planned = planWithinBudget(step, modelName, stepBudget);
  if (failed(planned))
    return failure();
  compiled.planned = std::move(*planned);
  if (!compiled.planned->fits || options.planStepOnly)
    return success();
  // --dump-grads and --eval-data run these on their own; each gets the same budget, and what
  // the plans before it left of the ILP's time limit (a total for the compilation).
  BudgetOptions carriedBudget = options.budget;
  double solveSeconds = compiled.planned->solveSeconds;
  auto planCarried = [&](StringRef function, StringRef what) -> FailureOr<BudgetedPlan> {
    carriedBudget.ilpTimeLimitSeconds = options.budget.ilpTimeLimitSeconds - solveSeconds;
    if (carriedBudget.ilpTimeLimitSeconds <= 0)
      carriedBudget.solver = RematSolver::Heuristic;
    FailureOr<BudgetedPlan> carried =
        planWithinBudget(module.lookupSymbol<func::FuncOp>(function), modelName, carriedBudget);
    if (failed(carried))
      return failure();
    solveSeconds += carried->solveSeconds;
    if (!carried->fits)
      compiled.warnings.push_back(what.str() + " needs " +
                                  runtime::formatBytes(planPeakBytes(carried->plan)) +
                                  ", more than the budget");
    return carried;
  };
  FailureOr<BudgetedPlan> gradients =
      planCarried("gradients", "the gradients program of --dump-grads");
  if (failed(gradients))
    return failure();
  FailureOr<BudgetedPlan> evaluation =
      planCarried("evaluate", "the evaluation program of --eval-data");
  if (failed(evaluation))
    return failure();
  plan::Plan &plan = compiled.planned->plan;
  if (failed(recordTrainingSetup(step, options, plan)))
    return failure();
  *plan.mutable_gradients() = std::move(gradients->plan);
  *plan.mutable_evaluation() = std::move(evaluation->plan);
  // Saving ONNX is optional to training: a model memc cannot make a template of still trains.
  std::string error;
  if (!addOnnxTemplate(plan, modelName, compiled.weights, madeByMemc(step), error)) {
    compiled.warnings.push_back("the program will not save ONNX models (--save OUT.onnx): " +
                                error);
    plan.mutable_training()->clear_onnx_template();
    plan.mutable_training()->clear_onnx_initializers();
  }
  return success();
}

} // namespace

FailureOr<CompiledModel> compileModel(MLIRContext &context, const std::string &modelPath,
                                      const PipelineOptions &options) {
  CompiledModel compiled;
  ImportOptions import = options.import;
  import.warnAboutExportEvidence = options.mode == CompileMode::Train;
  import.warnAboutTrainingModeDropout = options.mode == CompileMode::Infer;
  compiled.module = importOnnxModel(context, modelPath, import, &compiled.weights);
  if (!compiled.module)
    return failure();
  if (!import.weightsFrom.empty()) {
    std::string error;
    if (!bindCheckpointWeights(compiled.module->lookupSymbol<func::FuncOp>(import.functionName),
                               import.weightsFrom, import.weightsFromMap, compiled.weights,
                               error))
      return emitError(compiled.module->getLoc()) << error;
  }
  PassManager pm(&context);
  buildTransformPipeline(pm, options);
  if (failed(pm.run(*compiled.module)))
    return failure();
  if (options.mode == CompileMode::Train) {
    if (failed(planTraining(*compiled.module, modelPath, options, compiled)))
      return failure();
  } else if (options.mode == CompileMode::Infer) {
    BudgetOptions budget = options.budget;
    budget.mode = RematMode::None; // nothing to recompute without a backward
    FailureOr<BudgetedPlan> planned =
        planWithinBudget(compiled.module->lookupSymbol<func::FuncOp>("forward"), modelPath, budget);
    if (failed(planned))
      return failure();
    compiled.planned = std::move(*planned);
  }
  if (compiled.planned)
    if (auto forward = compiled.module->lookupSymbol<func::FuncOp>("forward"))
      compiled.planned->attention = readAttentionFusion(forward);
  if (compiled.planned)
    if (auto step = compiled.module->lookupSymbol<func::FuncOp>("train_step"))
      compiled.planned->loss = readLossFusion(step);
  return compiled;
}

} // namespace memc
