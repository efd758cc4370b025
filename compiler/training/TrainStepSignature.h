//===- TrainStepSignature.h - a training step's arguments by role -*- C++ -*-===//
//
// A training step's arguments are graph inputs, labels, parameters and buffers, each trained
// parameter's optimizer state and gradient accumulator, and the run-time scalars. buildTrainStep
// lays them out once into a TrainStepSignature and reaches every argument through it, never by
// position. The IR says each argument's role in its attributes (memc.param_kind for model
// tensors, state and accumulators; memc.state_of naming the parameter a state or accumulator
// belongs to; memc.input with a PlanVocabulary.h name for the scalars; the step's memc.labels
// naming its labels input), so readTrainStepSignature rebuilds the signature from the function
// alone and later passes and the lowering never match names.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_TRAINING_TRAINSTEPSIGNATURE_H
#define MEMC_COMPILER_TRAINING_TRAINSTEPSIGNATURE_H

#include "runtime/plan/PlanVocabulary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <optional>

namespace memc {

/// Argument indices of a training step, by role.
struct TrainStepSignature {
  /// One trainable parameter and what the step keeps for it.
  struct TrainedParameter {
    unsigned param = 0;
    /// In the optimizer's stateSpecs order.
    llvm::SmallVector<unsigned> state;
    /// With gradient accumulation.
    std::optional<unsigned> accumulator;
  };

  llvm::SmallVector<unsigned> graphInputs;
  unsigned labels = 0;
  /// Parameters and buffers, in @forward's order.
  llvm::SmallVector<unsigned> modelTensors;
  llvm::SmallVector<TrainedParameter> trained;
  /// Indexed by plan::ScalarInput.
  std::array<std::optional<unsigned>, plan::kScalarInputs.size()> scalars;
  /// With accumulation in 16 bits: the 16-bit copy (KIND_WEIGHT_COPY) kept of a model tensor.
  struct WeightCopy {
    unsigned source = 0;
    unsigned copy = 0;
  };
  llvm::SmallVector<WeightCopy> weightCopies;
  /// With loss scaling (KIND_LOSS_SCALER arguments), indexed by plan::LossScalerState.
  std::array<std::optional<unsigned>, plan::kLossScalerStates.size()> lossScaler;

  std::optional<unsigned> scalar(plan::ScalarInput input) const {
    return scalars[static_cast<size_t>(input)];
  }
};

/// What argument `index` of `function` is, from its attributes: KIND_NONE for inputs (data,
/// labels, scalars), KIND_PARAMETER for a named tensor without a kind.
plan::BindingKind argumentKind(mlir::func::FuncOp function, unsigned index);

/// The signature of a training step (@train_step, or @gradients without an optimizer) from its
/// attributes: the trained parameters are those a result updates or is the gradient of. Emits
/// an error and fails where the attributes contradict each other.
mlir::FailureOr<TrainStepSignature> readTrainStepSignature(mlir::func::FuncOp step);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_TRAINSTEPSIGNATURE_H
