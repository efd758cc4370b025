//===- Optimizer.h - what an optimizer adds to the training step -*- C++ -*-===//
//
// buildTrainStep knows optimizers only through this interface: the state each parameter
// carries between steps, the run-time scalars the update reads, and the update itself. Adding
// one (AdamW8bit, a ZeRO-sharded AdamW) is one class in its own file, its entry in
// OptimizerRegistry.cpp (name, create function, update op), and that op and its kernel. Gradient
// clipping and accumulation are the step's, the same for every optimizer.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_TRAINING_OPTIMIZER_H
#define MEMC_COMPILER_TRAINING_OPTIMIZER_H

#include "runtime/plan/PlanVocabulary.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace memc {

/// --precision fp16's loss scaling, torch.cuda.amp.GradScaler's algorithm in the step: the loss
/// gradient is seeded with the scale, the gradients are checked (one memc.non_finite_check over
/// all of them) and unscaled before clipping and the update, the update is skipped where any is
/// not finite, and memc.loss_scale_update keeps the scale (KIND_LOSS_SCALER state).
struct LossScaleOptions {
  bool enabled = false;
  /// GradScaler's init_scale.
  double initialScale = 65536.0;
  /// false: the scale stays `initialScale` (--loss-scale); steps that are not finite are still
  /// skipped, as GradScaler does.
  bool dynamic = true;
  /// GradScaler's growth_interval (DeepSpeed's loss_scale_window).
  int64_t window = 2000;
};

/// torch.optim hyperparameters, for whichever optimizer `name` is (each reads its own), and the
/// step's gradient clipping and accumulation. The learning rate is a run-time input: schedules
/// change it every step.
struct OptimizerOptions {
  /// "none" (the step returns the gradients) or a name of optimizerNames().
  std::string name = "none";
  double momentum = 0.0;
  bool nesterov = false;
  /// Unset: the optimizer's default, torch.optim's (SGD 0, AdamW 0.01).
  std::optional<double> weightDecay;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// Clip the gradients' global L2 norm to this value first (torch.nn.utils.clip_grad_norm_);
  /// 0 disables.
  double clipGradNorm = 0.0;
  /// Output the gradients' global L2 norm (memc.grad_norm, after unscaling) for the log; always
  /// so when clipping, which computes it anyway.
  bool logGradNorm = false;
  /// Gradient accumulation: the step adds its gradients into accumulators (state NAME.grad_accum)
  /// and updates the parameters, with the mean of the accumulated gradients, only where the
  /// run-time input memc.apply is 1 (every `accumulationSteps`-th micro-batch).
  int64_t accumulationSteps = 1;
  /// With accumulation under cross_entropy: weight each micro-batch by its counted labels (the
  /// run-time input memc.loss_weight), as one bigger batch would; false averages the
  /// micro-batches' mean losses (`--grad-accum-mean micro-batches`, memc before issue 23).
  bool tokenWeightedAccumulation = true;
  LossScaleOptions lossScale;
};

/// A tensor an optimizer keeps for each parameter between steps.
struct OptimizerStateSpec {
  /// The state of parameter P is named P.SUFFIX (in plans, checkpoints and reports).
  std::string suffix;
  mlir::RankedTensorType type;
  /// Its binding kind, hence its memory category (PlanVocabulary.h).
  plan::BindingKind kind = plan::KIND_OPTIMIZER_STATE;
};

/// What one parameter's update reads.
struct ParameterUpdate {
  mlir::Value param;
  mlir::Value gradient;
  /// In stateSpecs' order.
  mlir::ValueRange state;
  /// Indexed by plan::ScalarInput; set for the scalars the optimizer asked for.
  llvm::ArrayRef<mlir::Value> scalars;
  /// False for a parameter in the no-decay group (--no-decay, --no-decay-norms-and-biases): its
  /// update leaves weight decay out, as a torch optimizer's param group with weight_decay 0.
  bool decays = true;
  /// An f32 scalar, or null: where it is at or below 0.5 the update must leave the parameter
  /// and its state as they are (accumulation's micro-batches before the last, steps the fp16
  /// loss scaler skips), best without computing them.
  mlir::Value gate;

  mlir::Value scalar(plan::ScalarInput input) const { return scalars[static_cast<size_t>(input)]; }
};

class Optimizer {
public:
  virtual ~Optimizer() = default;

  /// The name users choose it by (--optimizer), written into the plan for logs.
  virtual llvm::StringRef name() const = 0;

  /// The state one parameter of type `param` carries.
  virtual llvm::SmallVector<OptimizerStateSpec> stateSpecs(mlir::RankedTensorType param) const = 0;

  /// The run-time scalars the update reads.
  virtual llvm::SmallVector<plan::ScalarInput> scalarInputs() const = 0;

  /// The new parameter followed by its new state, in stateSpecs' order.
  virtual llvm::SmallVector<mlir::Value> buildUpdate(mlir::OpBuilder &b, mlir::Location loc,
                                                     const ParameterUpdate &update) const = 0;
};

/// The optimizer `options.name` names, with its hyperparameters; null with a message for an
/// unknown name.
std::unique_ptr<Optimizer> createOptimizer(const OptimizerOptions &options, std::string &error);

/// The names createOptimizer knows, in the registry's order.
std::vector<std::string> registeredOptimizers();
/// "sgd, adamw": the names createOptimizer knows, for messages.
std::string optimizerNames();

/// The gradient an optimizer's update op reads, or null for any other op: how the lowering
/// finds gradients whatever the optimizer.
mlir::Value gradientOfUpdate(mlir::Operation *op);

/// The optimizers OptimizerRegistry.cpp lists, one file each.
std::unique_ptr<Optimizer> createSgdOptimizer(const OptimizerOptions &options);
std::unique_ptr<Optimizer> createAdamWOptimizer(const OptimizerOptions &options);
std::unique_ptr<Optimizer> createAdamW8bitOptimizer(const OptimizerOptions &options);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_OPTIMIZER_H
