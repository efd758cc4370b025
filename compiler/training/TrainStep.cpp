//===- TrainStep.cpp - build the training step from @forward --------------===//
//
// @train_step = clone of @forward (batch_norm switched to training mode) + loss + reverse
// sweep (+ gradient accumulation, clipping and the optimizer's update). With --fuse-loss auto,
// the head product and cross_entropy become linear_cross_entropy before the sweep. The parameters to
// differentiate are the `parameter`-kind arguments left after --trainable/--freeze that some
// gradient reaches; buffers (integer tensors, running statistics) never train. The optimizer
// is an Optimizer, asked for its state, scalars and update; arguments are reached through the
// TrainStepSignature.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/TrainStep.h"
#include "compiler/training/Autodiff.h"
#include "compiler/training/TrainStepSignature.h"
#include "dialects/memc/MemcDialect.h"
#include "passes/LossFusion.h"

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
        return emitError(forward.getLoc())
               << "invalid glob '" << text << "': " << llvm::toString(pattern.takeError());
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
    bool isParameter =
        name && kind && plan::bindingKindNamed(kind.getValue()) == plan::KIND_PARAMETER;
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
        emitError(forward.getLoc())
            << flag << " '" << texts[p] << "' matches no parameter or buffer name";
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
    auto name = forward.getResultAttrOfType<StringAttr>(i, kOutputNameAttr);
    if (name && name.getValue() == options.lossInput)
      return i;
    names += (names.empty() ? "" : ", ") + (name ? name.str() : "?");
  }
  return emitError(forward.getLoc())
         << "--loss-input '" << options.lossInput
         << "' is not an output of the model (outputs: " << names << ")";
}

FailureOr<RankedTensorType> labelsType(RankedTensorType logits, const TrainStepOptions &options,
                                       Location loc) {
  if (options.loss == LossKind::MeanSquaredError)
    return logits;
  if (logits.getRank() < 1 || !isa<FloatType>(logits.getElementType()))
    return emitError(loc) << "cross_entropy needs floating logits [..., classes], got " << logits;
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
  Value mean =
      b.create<ReduceMeanOp>(loc, squared, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  auto meanType = cast<RankedTensorType>(mean.getType());
  if (!meanType.getElementType().isF32())
    mean = b.create<CastOp>(loc, meanType.clone(b.getF32Type()), mean);
  return mean;
}

/// A scalar constant of `like`'s element type.
Value scalarLike(OpBuilder &b, Location loc, Value like, double value) {
  Type element = cast<RankedTensorType>(like.getType()).getElementType();
  return b.create<ConstantOp>(loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                                          b.getFloatAttr(element, value)));
}

/// Sum of squares of every gradient, sqrt, and the scale clip_grad_norm_ applies:
/// min(1, max_norm / (norm + 1e-6)).
SmallVector<Value> clipByGlobalNorm(OpBuilder &b, Location loc, ArrayRef<Value> gradients,
                                    double maxNorm) {
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  Value total;
  for (Value gradient : gradients) {
    auto type = cast<RankedTensorType>(gradient.getType());
    Value squares = b.create<MulOp>(loc, gradient, gradient);
    if (!type.getElementType().isF32())
      squares = b.create<CastOp>(loc, type.clone(b.getF32Type()), squares);
    SmallVector<int64_t> axes;
    for (int64_t axis = 0; axis < type.getRank(); ++axis)
      axes.push_back(axis);
    Value sum =
        b.create<ReduceSumOp>(loc, squares, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
    total = total ? b.create<AddOp>(loc, total, sum).getResult() : sum;
  }
  auto constant = [&](double value) {
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(value)));
  };
  Value norm = b.create<SqrtOp>(loc, total);
  Value coefficient =
      b.create<DivOp>(loc, constant(maxNorm), b.create<AddOp>(loc, norm, constant(1e-6)));
  Value clamped = b.create<ClipOp>(loc, coefficient, FloatAttr(), b.getF64FloatAttr(1.0));
  SmallVector<Value> clipped;
  for (Value gradient : gradients) {
    Type element = cast<RankedTensorType>(gradient.getType()).getElementType();
    Value scale = clamped;
    if (!element.isF32())
      scale = b.create<CastOp>(loc, RankedTensorType::get({}, element), clamped);
    clipped.push_back(b.create<MulOp>(loc, gradient, scale));
  }
  return clipped;
}

/// PyTorch's running-statistics update of a training-mode batch norm whose statistics are
/// arguments: (statistic, new value) pairs, running = momentum * running + (1 - momentum) *
/// batch, with ONNX's momentum and the unbiased batch variance.
SmallVector<std::pair<Value, Value>> runningStatisticsUpdate(OpBuilder &b, BatchNormOp op) {
  if (!isa<BlockArgument>(op.getMean()) || !isa<BlockArgument>(op.getVar()))
    return {};
  Location loc = op.getLoc();
  // The statistics are kept in their own type (f32 under --precision bf16), whatever the data's.
  Type statisticType = cast<RankedTensorType>(op.getMean().getType()).getElementType();
  Value x = op.getInput();
  if (cast<RankedTensorType>(x.getType()).getElementType() != statisticType)
    x = b.create<CastOp>(loc, cast<RankedTensorType>(x.getType()).clone(statisticType), x);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank(), channels = type.getDimSize(1);
  SmallVector<int64_t> axes = {0}, kept(rank, 1);
  for (int64_t dim = 2; dim < rank; ++dim)
    axes.push_back(dim);
  kept[1] = channels;
  int64_t count = type.getNumElements() / std::max<int64_t>(channels, 1);
  auto axesAttr = b.getDenseI64ArrayAttr(axes);
  auto scalar = [&](double value) {
    return b.create<ConstantOp>(
        loc, DenseElementsAttr::get(RankedTensorType::get({}, type.getElementType()),
                                    b.getFloatAttr(type.getElementType(), value)));
  };
  Value mean = b.create<ReduceMeanOp>(loc, x, axesAttr, b.getBoolAttr(false));
  Value centered = b.create<SubOp>(
      loc, x, b.create<ReshapeOp>(loc, cast<RankedTensorType>(mean.getType()).clone(kept), mean));
  Value variance = b.create<ReduceMeanOp>(loc, b.create<MulOp>(loc, centered, centered), axesAttr,
                                          b.getBoolAttr(false));
  Value unbiased =
      b.create<MulOp>(loc, variance, scalar(double(count) / std::max<int64_t>(count - 1, 1)));
  double momentum = op.getMomentum().convertToDouble();
  auto blend = [&](Value running, Value batch) -> Value {
    Value decayed = b.create<MulOp>(loc, running, scalar(momentum));
    return b.create<AddOp>(loc, b.create<MulOp>(loc, batch, scalar(1.0 - momentum)), decayed);
  };
  return {{op.getMean(), blend(op.getMean(), mean)}, {op.getVar(), blend(op.getVar(), unbiased)}};
}

/// The step's arguments as they are laid out: types and attributes.
struct ArgumentList {
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;

  unsigned add(Type type, DictionaryAttr attributes) {
    types.push_back(type);
    attrs.push_back(attributes);
    return types.size() - 1;
  }
};

DictionaryAttr inputAttrs(OpBuilder &b, StringRef name) {
  return b.getDictionaryAttr(b.getNamedAttr(kInputNameAttr, b.getStringAttr(name)));
}

/// An optimizer state or accumulator named `param`.`suffix`, tied to `param` by memc.state_of.
DictionaryAttr stateAttrs(OpBuilder &b, StringRef param, StringRef suffix, plan::BindingKind kind) {
  return b.getDictionaryAttr(
      {b.getNamedAttr(kParamNameAttr, b.getStringAttr(param + "." + suffix)),
       b.getNamedAttr(kParamKindAttr, b.getStringAttr(plan::bindingKindInfo(kind).name)),
       b.getNamedAttr(kStateOfAttr, b.getStringAttr(param))});
}

/// Lays out the step's arguments: graph inputs, labels, parameters and buffers (@forward's,
/// with the labels before the first of them), then each trained parameter's optimizer state,
/// the gradient accumulators, and the run-time scalars in PlanVocabulary.h's order.
/// `forwardToStep` maps @forward's argument indices to the step's.
TrainStepSignature layOutArguments(OpBuilder &b, func::FuncOp forward, Type labels,
                                   const TrainStepOptions &options, ArrayRef<unsigned> trainable,
                                   const Optimizer *optimizer, bool hasDropout,
                                   ArgumentList &arguments, SmallVector<unsigned> &forwardToStep) {
  TrainStepSignature signature;
  unsigned labelsPosition = 0;
  while (labelsPosition < forward.getNumArguments() &&
         !argAttr(forward, labelsPosition, kParamNameAttr))
    ++labelsPosition;
  for (unsigned i = 0; i <= forward.getNumArguments(); ++i) {
    if (i == labelsPosition)
      signature.labels = arguments.add(labels, inputAttrs(b, options.labelsName));
    if (i == forward.getNumArguments())
      break;
    DictionaryAttr attrs = forward.getArgAttrDict(i);
    forwardToStep.push_back(
        arguments.add(forward.getArgument(i).getType(), attrs ? attrs : b.getDictionaryAttr({})));
    (argAttr(forward, i, kParamNameAttr) ? signature.modelTensors : signature.graphInputs)
        .push_back(forwardToStep.back());
  }
  for (unsigned index : trainable)
    signature.trained.push_back({forwardToStep[index], {}, std::nullopt});
  SmallVector<plan::ScalarInput> scalars;
  if (optimizer) {
    bool accumulates = options.optimizer.accumulationSteps > 1;
    for (auto [index, trained] : llvm::zip(trainable, signature.trained)) {
      auto type = cast<RankedTensorType>(forward.getArgument(index).getType());
      StringRef param = argAttr(forward, index, kParamNameAttr).getValue();
      for (const OptimizerStateSpec &spec : optimizer->stateSpecs(type))
        trained.state.push_back(
            arguments.add(spec.type, stateAttrs(b, param, spec.suffix, spec.kind)));
    }
    if (accumulates)
      for (auto [index, trained] : llvm::zip(trainable, signature.trained))
        trained.accumulator =
            arguments.add(forward.getArgument(index).getType(),
                          stateAttrs(b, argAttr(forward, index, kParamNameAttr).getValue(),
                                     "grad_accum", plan::KIND_GRADIENT_ACCUMULATOR));
    scalars = optimizer->scalarInputs();
    if (accumulates)
      scalars.push_back(plan::ScalarInput::Apply);
  }
  if (hasDropout)
    scalars.push_back(plan::ScalarInput::Salt);
  for (const plan::ScalarInputInfo &info : plan::kScalarInputs) {
    if (!llvm::is_contained(scalars, info.input))
      continue;
    Type element = info.dtype == plan::I64 ? Type(b.getI64Type()) : Type(b.getF32Type());
    signature.scalars[size_t(info.input)] =
        arguments.add(RankedTensorType::get({}, element), inputAttrs(b, info.name));
  }
  return signature;
}

/// Builds the step training `trainableArgs` (indices of @forward's arguments) and appends to
/// `unreachable` those whose gradient the reverse sweep found no path for (given a zero one).
FailureOr<func::FuncOp> buildStep(ModuleOp module, func::FuncOp forward,
                                  const TrainStepOptions &options, const Optimizer *optimizer,
                                  ArrayRef<unsigned> trainableArgs, unsigned lossIndex,
                                  RankedTensorType labels, bool hasDropout,
                                  SmallVectorImpl<unsigned> &unreachable) {
  OpBuilder b(module.getContext());
  Location loc = forward.getLoc();
  ArgumentList arguments;
  SmallVector<unsigned> forwardToStep;
  TrainStepSignature signature = layOutArguments(b, forward, labels, options, trainableArgs,
                                                 optimizer, hasDropout, arguments, forwardToStep);

  b.setInsertionPointAfter(forward);
  auto step =
      b.create<func::FuncOp>(loc, options.functionName, b.getFunctionType(arguments.types, {}));
  step.setAllArgAttrs(arguments.attrs);
  step->setAttr(kLabelsAttr, b.getStringAttr(options.labelsName));
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);
  auto argument = [&](unsigned index) -> Value { return step.getArgument(index); };
  auto nameOf = [&](unsigned index) {
    return step.getArgAttrOfType<StringAttr>(index, kParamNameAttr).getValue();
  };
  SmallVector<Value> scalars(plan::kScalarInputs.size());
  for (auto [slot, scalar] : llvm::zip(signature.scalars, scalars))
    if (slot)
      scalar = argument(*slot);

  IRMapping mapping;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    mapping.map(forward.getArgument(i), argument(forwardToStep[i]));
  SmallVector<BatchNormOp> batchNorms;
  for (Operation &op : forward.getBody().front().without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (auto batchNorm = dyn_cast<BatchNormOp>(clone)) {
      batchNorm.setTraining(true);
      batchNorms.push_back(batchNorm);
    }
    if (auto dropout = dyn_cast<DropoutOp>(clone))
      dropout.getSaltMutable().assign(scalars[size_t(plan::ScalarInput::Salt)]);
  }
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  Value predictionValue = mapping.lookup(returnOp.getOperand(lossIndex));
  // Named so that reports can say where the loss and its gradient live.
  Value loss = buildLoss(b, NameLoc::get(b.getStringAttr("loss")), predictionValue,
                         argument(signature.labels), options);
  if (auto crossEntropy = loss.getDefiningOp<CrossEntropyOp>(); crossEntropy && options.fuseLoss) {
    LossFusionSummary fusion;
    loss = fuseHeadIntoLoss(crossEntropy, fusion);
    recordLossFusion(step, fusion);
  }
  // The computation to differentiate: the forward clone and the loss, in order.
  SmallVector<Operation *> ops;
  for (Operation &op : *body)
    ops.push_back(&op);

  SmallVector<Value> wrt;
  for (const TrainStepSignature::TrainedParameter &trained : signature.trained)
    wrt.push_back(argument(trained.param));
  Value seed =
      b.create<ConstantOp>(loc, DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                                       b.getF32FloatAttr(1.0f)));
  FailureOr<SmallVector<Value>> gradients = buildReverseSweep(b, ops, loss, seed, wrt);
  if (failed(gradients)) {
    step.erase();
    return failure();
  }
  for (auto [index, trained, gradient] : llvm::zip(trainableArgs, signature.trained, *gradients)) {
    if (gradient)
      continue;
    unreachable.push_back(index);
    auto type = cast<RankedTensorType>(argument(trained.param).getType());
    gradient = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0)));
  }
  // Accumulation: the update sees the mean of the micro-batches' gradients so far.
  SmallVector<Value> accumulated;
  for (auto [trained, gradient] : llvm::zip(signature.trained, *gradients)) {
    if (!trained.accumulator)
      continue;
    Value sum = b.create<AddOp>(loc, argument(*trained.accumulator), gradient);
    accumulated.push_back(sum);
    gradient = b.create<MulOp>(loc, sum,
                               scalarLike(b, loc, sum, 1.0 / options.optimizer.accumulationSteps));
  }
  if (options.optimizer.clipGradNorm > 0 && !gradients->empty())
    *gradients = clipByGlobalNorm(b, loc, *gradients, options.optimizer.clipGradNorm);

  SmallVector<Value> results = {loss};
  SmallVector<DictionaryAttr> resultAttrs = {
      b.getDictionaryAttr(b.getNamedAttr(kOutputNameAttr, b.getStringAttr("loss")))};
  auto marked = [&](StringRef attr, StringRef name) {
    return b.getDictionaryAttr(b.getNamedAttr(attr, b.getStringAttr(name)));
  };
  if (!optimizer) {
    for (auto [trained, gradient] : llvm::zip(signature.trained, *gradients)) {
      results.push_back(gradient);
      resultAttrs.push_back(marked(kGradientOfAttr, nameOf(trained.param)));
    }
  } else {
    // With accumulation, parameters and state change only on the micro-batch that applies.
    Value apply;
    if (Value flag = scalars[size_t(plan::ScalarInput::Apply)])
      apply = b.create<GreaterOp>(loc, flag, scalarLike(b, loc, flag, 0.5));
    auto applied = [&](Value updated, Value current) -> Value {
      return apply ? b.create<WhereOp>(loc, apply, updated, current).getResult() : updated;
    };
    for (auto [i, trained, gradient] : llvm::enumerate(signature.trained, *gradients)) {
      SmallVector<Value> state;
      for (unsigned index : trained.state)
        state.push_back(argument(index));
      Value param = argument(trained.param);
      SmallVector<Value> updated =
          optimizer->buildUpdate(b, loc, {param, gradient, state, scalars});
      results.push_back(applied(updated[0], param));
      resultAttrs.push_back(marked(kUpdatesAttr, nameOf(trained.param)));
      for (auto [index, value, newValue] :
           llvm::zip(trained.state, state, ArrayRef(updated).drop_front())) {
        results.push_back(applied(newValue, value));
        resultAttrs.push_back(marked(kUpdatesAttr, nameOf(index)));
      }
      if (trained.accumulator) { // restart the sum after an update
        Value zero = scalarLike(b, loc, accumulated[i], 0.0);
        results.push_back(b.create<WhereOp>(loc, apply, zero, accumulated[i]));
        resultAttrs.push_back(marked(kUpdatesAttr, nameOf(*trained.accumulator)));
      }
    }
    for (BatchNormOp batchNorm : batchNorms)
      for (auto [statistic, updated] : runningStatisticsUpdate(b, batchNorm)) {
        results.push_back(updated);
        resultAttrs.push_back(
            marked(kUpdatesAttr, nameOf(cast<BlockArgument>(statistic).getArgNumber())));
      }
  }
  b.create<func::ReturnOp>(loc, results);
  step.setType(b.getFunctionType(arguments.types, ValueRange(results).getTypes()));
  step.setAllResultAttrs(resultAttrs);
  return step;
}

} // namespace

std::optional<LossKind> parseLossKind(StringRef name) {
  if (name == "cross_entropy")
    return LossKind::CrossEntropy;
  if (name == "mse")
    return LossKind::MeanSquaredError;
  return std::nullopt;
}

FailureOr<func::FuncOp> buildTrainStep(ModuleOp module, const TrainStepOptions &options) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return emitError(module.getLoc()) << "no @forward function to train";
  std::unique_ptr<Optimizer> optimizer;
  if (options.optimizer.name != "none") {
    std::string error;
    optimizer = createOptimizer(options.optimizer, error);
    if (!optimizer)
      return emitError(forward.getLoc()) << error;
  }
  FailureOr<unsigned> lossIndex = lossInputIndex(forward, options);
  FailureOr<SmallVector<bool>> trainable = selectTrainable(forward, options);
  if (failed(lossIndex) || failed(trainable))
    return failure();
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  auto prediction = cast<RankedTensorType>(returnOp.getOperand(*lossIndex).getType());
  FailureOr<RankedTensorType> labels = labelsType(prediction, options, forward.getLoc());
  if (failed(labels))
    return failure();
  // Dropout masks must change every step: the step takes a salt (the runtime's seed and step
  // number) that every dropout mixes into its seed.
  bool hasDropout =
      forward.walk([](DropoutOp) { return WalkResult::interrupt(); }).wasInterrupted();
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    for (StringRef attr : {StringRef(kInputNameAttr), StringRef(kParamNameAttr)})
      if (StringAttr name = argAttr(forward, i, attr);
          name && name.getValue() == options.labelsName)
        return emitError(forward.getLoc())
               << "--labels '" << options.labelsName
               << "' is already the name of a model input or parameter; choose another";
  SmallVector<unsigned> trainableArgs, unreachable; // indices into @forward's arguments
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if ((*trainable)[i])
      trainableArgs.push_back(i);
  FailureOr<func::FuncOp> step = buildStep(module, forward, options, optimizer.get(), trainableArgs,
                                           *lossIndex, *labels, hasDropout, unreachable);
  // Trainability is the reverse sweep's verdict: a parameter no gradient rule reaches (a mask
  // used only through Equal/Where, say) would still get optimizer state and weight decay, so the
  // step is built again without it.
  bool leaveOut = optimizer || !options.zeroUnreachableGradients;
  if (succeeded(step) && leaveOut && !unreachable.empty()) {
    step->erase();
    llvm::erase_if(trainableArgs, [&](unsigned i) { return llvm::is_contained(unreachable, i); });
    SmallVector<unsigned> none;
    step = buildStep(module, forward, options, optimizer.get(), trainableArgs, *lossIndex, *labels,
                     hasDropout, none);
  }
  if (succeeded(step) && options.warnUnreachable)
    for (unsigned index : unreachable) {
      InFlightDiagnostic warning = emitWarning(forward.getLoc())
                                   << "parameter '"
                                   << argAttr(forward, index, kParamNameAttr).getValue()
                                   << "' has no path to the loss; its gradient is zero";
      if (leaveOut)
        warning << ", so it does not train (no optimizer state, no weight decay)";
    }
  return step;
}

} // namespace memc
