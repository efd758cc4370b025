//===- TrainStep.cpp - build the training step from @forward --------------===//
//
// @train_step = clone of @forward (batch_norm switched to training mode) + loss + reverse
// sweep. The parameters to differentiate are the `parameter`-kind arguments left after
// --trainable/--freeze; buffers (integer tensors, running statistics) never train.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/TrainStep.h"
#include "compiler/training/Autodiff.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/Support/GlobPattern.h"

using namespace mlir;

namespace memc {
namespace {

StringAttr argAttr(func::FuncOp function, unsigned index, StringRef name) {
  return function.getArgAttrOfType<StringAttr>(index, name);
}

/// Which arguments of @forward train, after the globs; errors on globs that match nothing.
FailureOr<llvm::SmallVector<bool>> selectTrainable(func::FuncOp forward,
                                                   const TrainStepOptions &options) {
  auto compile = [&](const std::vector<std::string> &texts,
                     std::vector<llvm::GlobPattern> &patterns) -> LogicalResult {
    for (const std::string &text : texts) {
      llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(text);
      if (!pattern)
        return emitError(forward.getLoc()) << "invalid glob '" << text
                                           << "': " << llvm::toString(pattern.takeError());
      patterns.push_back(std::move(*pattern));
    }
    return success();
  };
  std::vector<llvm::GlobPattern> freeze, trainable;
  if (failed(compile(options.freeze, freeze)) || failed(compile(options.trainable, trainable)))
    return failure();
  std::vector<bool> freezeUsed(freeze.size()), trainableUsed(trainable.size());
  llvm::SmallVector<bool> selected;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    StringAttr name = argAttr(forward, i, kParamNameAttr);
    StringAttr kind = argAttr(forward, i, kParamKindAttr);
    bool isParameter = name && kind && kind.getValue() == "parameter";
    bool chosen = isParameter && trainable.empty();
    for (size_t p = 0; name && p < trainable.size(); ++p)
      if (trainable[p].match(name.getValue())) {
        trainableUsed[p] = true;
        chosen = isParameter;
      }
    for (size_t p = 0; name && p < freeze.size(); ++p)
      if (freeze[p].match(name.getValue())) {
        freezeUsed[p] = true;
        chosen = false;
      }
    selected.push_back(chosen);
  }
  bool unmatched = false;
  auto reportUnused = [&](const std::vector<std::string> &texts, const std::vector<bool> &used,
                          StringRef flag) {
    for (size_t p = 0; p < texts.size(); ++p)
      if (!used[p]) {
        emitError(forward.getLoc()) << flag << " '" << texts[p]
                                    << "' matches no parameter or buffer name";
        unmatched = true;
      }
  };
  reportUnused(options.freeze, freezeUsed, "--freeze");
  reportUnused(options.trainable, trainableUsed, "--trainable");
  if (unmatched)
    return failure();
  return selected;
}

/// The index of the @forward result the loss is computed from.
FailureOr<unsigned> lossInputIndex(func::FuncOp forward, const TrainStepOptions &options) {
  unsigned count = forward.getNumResults();
  if (options.lossInput.empty()) {
    if (count == 1)
      return 0u;
    return emitError(forward.getLoc())
           << "the model has " << count << " outputs; choose the loss input with --loss-input";
  }
  std::string names;
  for (unsigned i = 0; i < count; ++i) {
    auto name = forward.getResultAttrOfType<StringAttr>(i, "memc.output");
    if (name && name.getValue() == options.lossInput)
      return i;
    names += (names.empty() ? "" : ", ") + (name ? name.str() : "?");
  }
  return emitError(forward.getLoc()) << "--loss-input '" << options.lossInput
                                     << "' is not an output of the model (outputs: " << names
                                     << ")";
}

FailureOr<RankedTensorType> labelsType(RankedTensorType logits, const TrainStepOptions &options,
                                       Location loc) {
  if (options.loss == LossKind::MeanSquaredError)
    return logits;
  if (logits.getRank() < 1 || !isa<FloatType>(logits.getElementType()))
    return emitError(loc) << "cross_entropy needs floating logits [..., classes], got "
                          << logits;
  return RankedTensorType::get(logits.getShape().drop_back(),
                               IntegerType::get(logits.getContext(), 64));
}

Value buildLoss(OpBuilder &b, Location loc, Value prediction, Value labels,
                const TrainStepOptions &options) {
  if (options.loss == LossKind::CrossEntropy)
    return b.create<CrossEntropyOp>(loc, RankedTensorType::get({}, b.getF32Type()), prediction,
                                    labels, b.getI64IntegerAttr(options.ignoreIndex));
  // mse: mean over every element of the squared difference, as torch.nn.functional.mse_loss.
  Value difference = b.create<SubOp>(loc, prediction, labels);
  Value squared = b.create<MulOp>(loc, difference, difference);
  auto rank = cast<RankedTensorType>(squared.getType()).getRank();
  SmallVector<int64_t> axes;
  for (int64_t axis = 0; axis < rank; ++axis)
    axes.push_back(axis);
  Value mean = b.create<ReduceMeanOp>(loc, squared, b.getDenseI64ArrayAttr(axes),
                                      b.getBoolAttr(false));
  auto meanType = cast<RankedTensorType>(mean.getType());
  if (!meanType.getElementType().isF32())
    mean = b.create<CastOp>(loc, meanType.clone(b.getF32Type()), mean);
  return mean;
}

} // namespace

FailureOr<func::FuncOp> buildTrainStep(ModuleOp module, const TrainStepOptions &options) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return emitError(module.getLoc()) << "no @forward function to train";
  FailureOr<unsigned> lossIndex = lossInputIndex(forward, options);
  FailureOr<SmallVector<bool>> trainable = selectTrainable(forward, options);
  if (failed(lossIndex) || failed(trainable))
    return failure();
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  auto prediction = cast<RankedTensorType>(returnOp.getOperand(*lossIndex).getType());
  FailureOr<RankedTensorType> labels = labelsType(prediction, options, forward.getLoc());
  if (failed(labels))
    return failure();

  // Arguments: graph inputs, labels, then parameters and buffers.
  unsigned labelsPosition = 0;
  while (labelsPosition < forward.getNumArguments() &&
         !argAttr(forward, labelsPosition, kParamNameAttr))
    ++labelsPosition;
  SmallVector<Type> argTypes(forward.getArgumentTypes());
  argTypes.insert(argTypes.begin() + labelsPosition, *labels);
  SmallVector<DictionaryAttr> argAttrs;
  forward.getAllArgAttrs(argAttrs);
  OpBuilder b(module.getContext());
  argAttrs.insert(argAttrs.begin() + labelsPosition,
                  b.getDictionaryAttr(b.getNamedAttr(
                      "memc.input", b.getStringAttr(options.labelsName))));

  b.setInsertionPointAfter(forward);
  auto step = b.create<func::FuncOp>(forward.getLoc(), "train_step",
                                     b.getFunctionType(argTypes, {}));
  step.setAllArgAttrs(argAttrs);
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);

  IRMapping mapping;
  for (unsigned i = 0, j = 0; i < step.getNumArguments(); ++i)
    if (i != labelsPosition)
      mapping.map(forward.getArgument(j++), step.getArgument(i));
  for (Operation &op : forward.getBody().front().without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (auto batchNorm = dyn_cast<BatchNormOp>(clone))
      batchNorm.setTraining(true);
  }
  Value predictionValue = mapping.lookup(returnOp.getOperand(*lossIndex));
  Value loss = buildLoss(b, forward.getLoc(), predictionValue, step.getArgument(labelsPosition),
                         options);
  // The computation to differentiate: the forward clone and the loss, in order.
  SmallVector<Operation *> ops;
  for (Operation &op : *body)
    ops.push_back(&op);

  SmallVector<Value> wrt;
  SmallVector<std::string> wrtNames;
  for (unsigned i = 0, j = 0; i < step.getNumArguments(); ++i) {
    if (i == labelsPosition)
      continue;
    if ((*trainable)[j]) {
      wrt.push_back(step.getArgument(i));
      wrtNames.push_back(argAttr(forward, j, kParamNameAttr).str());
    }
    ++j;
  }
  Value seed = b.create<ConstantOp>(
      forward.getLoc(), DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                               b.getF32FloatAttr(1.0f)));
  FailureOr<SmallVector<Value>> gradients = buildReverseSweep(b, ops, loss, seed, wrt);
  if (failed(gradients)) {
    step.erase();
    return failure();
  }

  SmallVector<Value> results = {loss};
  SmallVector<DictionaryAttr> resultAttrs = {
      b.getDictionaryAttr(b.getNamedAttr("memc.output", b.getStringAttr("loss")))};
  for (auto [value, gradient, name] : llvm::zip(wrt, *gradients, wrtNames)) {
    if (!gradient) {
      emitWarning(forward.getLoc()) << "parameter '" << name
                                    << "' has no path to the loss; its gradient is zero";
      auto type = cast<RankedTensorType>(value.getType());
      gradient = b.create<ConstantOp>(
          forward.getLoc(), DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0)));
    }
    results.push_back(gradient);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr("memc.gradient_of", b.getStringAttr(name))));
  }
  b.create<func::ReturnOp>(forward.getLoc(), results);
  step.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  step.setAllResultAttrs(resultAttrs);
  return step;
}

} // namespace memc
