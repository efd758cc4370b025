//===- TrainStep.h - build the training step from @forward ------*- C++ -*-===//
#ifndef MEMC_COMPILER_TRAINING_TRAINSTEP_H
#define MEMC_COMPILER_TRAINING_TRAINSTEP_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace memc {

enum class LossKind { CrossEntropy, MeanSquaredError };

enum class OptimizerKind { None, Sgd, AdamW };

/// torch.optim.SGD / torch.optim.AdamW hyperparameters (the learning rate is a run-time input:
/// schedules change it every step).
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::None;
  double momentum = 0.0;
  bool nesterov = false;
  double weightDecay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// Clip the gradients' global L2 norm to this value first (torch.nn.utils.clip_grad_norm_);
  /// 0 disables.
  double clipGradNorm = 0.0;
  /// Gradient accumulation: the step adds its gradients into accumulators (state NAME.grad_accum)
  /// and updates the parameters, with the mean of the accumulated gradients, only where the
  /// run-time input memc.apply is 1 (every `accumulationSteps`-th micro-batch).
  int64_t accumulationSteps = 1;
};

struct TrainStepOptions {
  LossKind loss = LossKind::CrossEntropy;
  /// The graph output the loss is computed from; empty means the only output.
  std::string lossInput;
  /// Name of the labels argument the step takes.
  std::string labelsName = "labels";
  int64_t ignoreIndex = -100;
  /// Globs over parameter names: frozen parameters get no gradient; when `trainable` is not
  /// empty, only parameters it matches train.
  std::vector<std::string> freeze;
  std::vector<std::string> trainable;
  /// None: the step returns the gradients. Otherwise it returns the updated parameters and
  /// optimizer state instead, each marked `memc.updates = NAME` (the argument it replaces).
  OptimizerOptions optimizer;
  std::string functionName = "train_step";
  /// Warn about parameters the loss does not depend on (once per compilation is enough).
  bool warnUnreachable = true;
};

/// The command-line spellings: "cross_entropy" / "mse"; "none" / "sgd" / "adamw".
std::optional<LossKind> parseLossKind(llvm::StringRef name);
std::optional<OptimizerKind> parseOptimizerKind(llvm::StringRef name);

/// Names of the run-time scalar inputs a step with an optimizer takes.
constexpr llvm::StringLiteral kLearningRateInput = "memc.lr";
constexpr llvm::StringLiteral kStepInput = "memc.step";
constexpr llvm::StringLiteral kApplyInput = "memc.apply";
/// i64 scalar that steps with dropout mix into every mask: different for every micro-batch.
constexpr llvm::StringLiteral kSaltInput = "memc.salt";

/// Adds `@train_step` (options.functionName) to `module`, built from `@forward`: the forward
/// computation (batch normalization in training mode), the loss, and the reverse sweep. Its
/// arguments are @forward's with the labels after the graph inputs. Without an optimizer its
/// results are the loss (`memc.output = "loss"`) and the gradient of every trainable parameter
/// (`memc.gradient_of = NAME`). With one, the step also takes the optimizer state (arguments of
/// kind `optimizer_state`, named NAME.momentum, NAME.exp_avg, NAME.exp_avg_sq) and the scalar
/// inputs memc.lr (and memc.step for AdamW), and returns the loss followed by the new parameters
/// and state, each with `memc.updates = NAME`. Emits errors (and warnings for parameters the
/// loss does not depend on) through the context.
mlir::FailureOr<mlir::func::FuncOp> buildTrainStep(mlir::ModuleOp module,
                                                   const TrainStepOptions &options);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_TRAINSTEP_H
