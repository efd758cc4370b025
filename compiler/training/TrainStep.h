//===- TrainStep.h - build the training step from @forward ------*- C++ -*-===//
#ifndef MEMC_COMPILER_TRAINING_TRAINSTEP_H
#define MEMC_COMPILER_TRAINING_TRAINSTEP_H

#include "compiler/training/Optimizer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace memc {

enum class LossKind { CrossEntropy, MeanSquaredError };

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
  /// Globs over trained parameters that take no weight decay (a param group with weight_decay
  /// 0); `noDecayNormsAndBiases` adds Hugging Face Trainer's group: every name with "bias" and
  /// the scales and biases of layer and RMS norms (by the op reading them, or a norm-like name).
  std::vector<std::string> noDecay;
  bool noDecayNormsAndBiases = false;
  /// Build `functionName` as the loss of @forward in eval mode instead (no backward, no update;
  /// BatchNorm on its running statistics, no dropout): the training program's --eval-data.
  bool evaluationOnly = false;
  /// "none": the step returns the gradients. Otherwise it returns the updated parameters and
  /// optimizer state instead, each marked `memc.updates = NAME` (the argument it replaces).
  OptimizerOptions optimizer;
  std::string functionName = "train_step";
  /// Warn about parameters the loss does not depend on (once per compilation is enough).
  bool warnUnreachable = true;
  /// Without an optimizer, whether a parameter the reverse sweep finds no gradient for is
  /// returned with a zero gradient (true) or left out like a frozen one (false: the pipeline's
  /// @gradients, so that --dump-grads names what trains). With an optimizer it is always left
  /// out: no state, no update, no weight decay.
  bool zeroUnreachableGradients = true;
  /// cross_entropy only: the head product feeding the loss and the loss become one
  /// memc.linear_cross_entropy before autodiff (--fuse-loss auto), so neither the logits nor
  /// their gradient exist whole. The step records what it did (passes/LossFusion.h).
  bool fuseLoss = true;
  /// Data parallel (--world-size): the ranks the step runs on, each with its own micro-batches.
  /// With more than one, the update sees the gradients summed over the ranks (memc.all_reduce)
  /// and divided by ranks x micro-batches: what one process accumulating them all computes.
  int64_t worldSize = 1;
  /// --zero-stage with more than one rank: what each rank keeps a shard of (compiler/training/
  /// DataParallel.h): 1 the optimizer state, 2 also the gradients and their accumulators.
  /// One rank shards nothing, whatever this says.
  int64_t zeroStage = 0;
  /// Stages 0 and 1: the MiB of gradients one all-reduce carries (DDP's bucket_cap_mb); 0 gives
  /// every gradient its own.
  int64_t bucketCapMb = 25;
  /// --offload-optimizer cpu (ZeRO-Offload): the optimizer state, and the f32 master of each
  /// trained parameter the step reads only through its 16-bit copy, live in host memory
  /// (kOffloadedAttr); the copy is kept on the device and made again from the master at the
  /// start of each optimizer step, as with accumulation.
  bool offloadOptimizer = false;
};

/// Which arguments of `forward` train: the `parameter`-kind ones `options.trainable` (when
/// given) and not `options.freeze` match. With `reportUnmatched`, a glob matching no name is an
/// error (buildTrainStep's); memc-master-weights asks the same question silently.
mlir::FailureOr<llvm::SmallVector<bool>> selectTrainable(mlir::func::FuncOp forward,
                                                         const TrainStepOptions &options,
                                                         bool reportUnmatched);

/// The command-line spellings: "cross_entropy" / "mse".
std::optional<LossKind> parseLossKind(llvm::StringRef name);

/// Adds `@train_step` (options.functionName) to `module`, built from `@forward`: the forward
/// computation (batch normalization in training mode), the loss, and the reverse sweep. Its
/// arguments are @forward's with the labels after the graph inputs. Without an optimizer its
/// results are the loss (`memc.output = "loss"`) and the gradient of every trainable parameter
/// (`memc.gradient_of = NAME`). With one, the step also takes each trained parameter's optimizer
/// state (Optimizer::stateSpecs: arguments of kind `optimizer_state` named NAME.SUFFIX) and
/// gradient accumulator, with accumulation the 16-bit weight copies it keeps (`weight_copy`),
/// with loss scaling the scaler's state (`loss_scaler`), and the run-time scalars
/// (PlanVocabulary.h) it reads, and returns the loss followed by the new parameters and state,
/// each with `memc.updates = NAME` (and, with loss scaling, the outputs the runtime logs).
/// A parameter the reverse sweep reaches no gradient for does not train (without an optimizer,
/// see zeroUnreachableGradients). The layout is TrainStepSignature's, and readTrainStepSignature
/// reads it back. Emits errors (and warnings for parameters the loss does not depend on) through
/// the context.
mlir::FailureOr<mlir::func::FuncOp> buildTrainStep(mlir::ModuleOp module,
                                                   const TrainStepOptions &options);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_TRAINSTEP_H
