//===- TrainStepSignature.cpp - a training step's arguments by role -------===//
#include "compiler/training/TrainStepSignature.h"
#include "dialects/memc/MemcDialect.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace memc {

plan::BindingKind argumentKind(func::FuncOp function, unsigned index) {
  if (auto kind = function.getArgAttrOfType<StringAttr>(index, kParamKindAttr))
    return plan::bindingKindNamed(kind.getValue());
  if (function.getArgAttr(index, kParamNameAttr))
    return plan::KIND_PARAMETER;
  return plan::KIND_NONE;
}

namespace {

/// Rebuilds a signature in two passes over the arguments: inputs and model tensors first, then
/// the state and accumulators, which name a parameter the first pass has found.
class SignatureReader {
public:
  explicit SignatureReader(func::FuncOp step) : step(step) {}

  FailureOr<TrainStepSignature> read();

private:
  LogicalResult readInput(unsigned index, StringRef labelsName);
  void readModelTensor(unsigned index, plan::BindingKind kind);
  LogicalResult readState(unsigned index, plan::BindingKind kind);
  LogicalResult readLossScaler(unsigned index);
  LogicalResult readWeightCopy(unsigned index);
  /// Every name a result gives in memc.updates or memc.gradient_of must be an argument's.
  LogicalResult checkResultNames();

  InFlightDiagnostic argumentError(unsigned index) {
    return step.emitError("argument ") << index << " ";
  }

  func::FuncOp step;
  TrainStepSignature signature;
  std::optional<unsigned> labels;
  /// The parameters a result updates or is the gradient of: those the step trains.
  llvm::StringSet<> resultNames;
  llvm::StringSet<> argumentNames;
  /// Where in signature.trained each trained parameter is, by its memc.param name.
  llvm::StringMap<unsigned> trainedByName;
};

FailureOr<TrainStepSignature> SignatureReader::read() {
  auto labelsName = step->getAttrOfType<StringAttr>(kLabelsAttr);
  if (!labelsName)
    return step.emitError("a training step names its labels input in ") << kLabelsAttr;
  for (unsigned i = 0; i < step.getNumResults(); ++i)
    for (StringRef attr : {StringRef(kUpdatesAttr), StringRef(kGradientOfAttr)})
      if (auto name = step.getResultAttrOfType<StringAttr>(i, attr))
        resultNames.insert(name.getValue());
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    plan::BindingKind kind = argumentKind(step, i);
    if (kind == plan::KIND_NONE && failed(readInput(i, labelsName.getValue())))
      return failure();
    if (kind == plan::KIND_PARAMETER || kind == plan::KIND_BUFFER)
      readModelTensor(i, kind);
  }
  if (!labels)
    return step.emitError("no input is the labels '")
           << labelsName.getValue() << "' that " << kLabelsAttr << " names";
  signature.labels = *labels;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    plan::BindingKind kind = argumentKind(step, i);
    if ((kind == plan::KIND_OPTIMIZER_STATE || kind == plan::KIND_GRADIENT_ACCUMULATOR) &&
        failed(readState(i, kind)))
      return failure();
    if (kind == plan::KIND_LOSS_SCALER && failed(readLossScaler(i)))
      return failure();
    if (kind == plan::KIND_WEIGHT_COPY && failed(readWeightCopy(i)))
      return failure();
  }
  if (failed(checkResultNames()))
    return failure();
  return signature;
}

LogicalResult SignatureReader::readInput(unsigned index, StringRef labelsName) {
  if (step.getArgAttr(index, kParamNameAttr))
    return argumentError(index) << "has an unknown " << kParamKindAttr;
  auto name = step.getArgAttrOfType<StringAttr>(index, kInputNameAttr);
  if (name && name.getValue() == labelsName) {
    if (labels)
      return argumentError(index) << "is a second labels input '" << labelsName << "'";
    labels = index;
    return success();
  }
  for (const plan::ScalarInputInfo &info : plan::kScalarInputs) {
    if (!name || name.getValue() != StringRef(info.name))
      continue;
    std::optional<unsigned> &slot = signature.scalars[size_t(info.input)];
    if (slot)
      return argumentError(index) << "is a second '" << StringRef(info.name) << "'";
    slot = index;
    return success();
  }
  signature.graphInputs.push_back(index);
  return success();
}

void SignatureReader::readModelTensor(unsigned index, plan::BindingKind kind) {
  signature.modelTensors.push_back(index);
  StringRef name = step.getArgAttrOfType<StringAttr>(index, kParamNameAttr).getValue();
  argumentNames.insert(name);
  if (kind != plan::KIND_PARAMETER || !resultNames.contains(name))
    return;
  trainedByName[name] = signature.trained.size();
  signature.trained.push_back({index, {}, std::nullopt});
}

LogicalResult SignatureReader::readState(unsigned index, plan::BindingKind kind) {
  if (auto name = step.getArgAttrOfType<StringAttr>(index, kParamNameAttr))
    argumentNames.insert(name.getValue());
  auto param = step.getArgAttrOfType<StringAttr>(index, kStateOfAttr);
  if (!param)
    return argumentError(index) << "(" << StringRef(plan::bindingKindInfo(kind).name)
                                << ") names no parameter in " << kStateOfAttr;
  auto trained = trainedByName.find(param.getValue());
  if (trained == trainedByName.end())
    return argumentError(index) << "is kept for '" << param.getValue()
                                << "', which is no parameter the step trains";
  TrainStepSignature::TrainedParameter &parameter = signature.trained[trained->second];
  if (kind == plan::KIND_OPTIMIZER_STATE) {
    parameter.state.push_back(index);
    return success();
  }
  if (parameter.accumulator)
    return argumentError(index) << "is a second gradient accumulator of '" << param.getValue()
                                << "'";
  parameter.accumulator = index;
  return success();
}

LogicalResult SignatureReader::readLossScaler(unsigned index) {
  auto name = step.getArgAttrOfType<StringAttr>(index, kParamNameAttr);
  for (const plan::LossScalerStateInfo &info : plan::kLossScalerStates) {
    if (!name || name.getValue() != StringRef(info.name))
      continue;
    std::optional<unsigned> &slot = signature.lossScaler[size_t(info.state)];
    if (slot)
      return argumentError(index) << "is a second '" << name.getValue() << "'";
    argumentNames.insert(name.getValue());
    slot = index;
    return success();
  }
  return argumentError(index) << "(loss_scaler) is none of the loss scaler's states";
}

LogicalResult SignatureReader::readWeightCopy(unsigned index) {
  if (auto name = step.getArgAttrOfType<StringAttr>(index, kParamNameAttr))
    argumentNames.insert(name.getValue());
  auto source = step.getArgAttrOfType<StringAttr>(index, kStateOfAttr);
  for (unsigned model : signature.modelTensors)
    if (source && step.getArgAttrOfType<StringAttr>(model, kParamNameAttr) == source) {
      signature.weightCopies.push_back({model, index});
      return success();
    }
  return argumentError(index) << "(weight_copy) names no parameter or buffer in " << kStateOfAttr;
}

LogicalResult SignatureReader::checkResultNames() {
  for (const auto &name : resultNames)
    if (!argumentNames.contains(name.getKey()))
      return step.emitError("a result names '")
             << name.getKey() << "', which is no parameter, buffer or state of the step";
  return success();
}

} // namespace

FailureOr<TrainStepSignature> readTrainStepSignature(func::FuncOp step) {
  return SignatureReader(step).read();
}

} // namespace memc
