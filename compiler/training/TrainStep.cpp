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
#include "compiler/training/DataParallel.h"
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

/// The salt operand of an op that draws a dropout mask (memc.dropout, flash_attention with a
/// dropout_ratio), which the step sets to its per-step salt; nothing for other ops.
std::optional<MutableOperandRange> dropoutSalt(Operation *op) {
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return dropout.getSaltMutable();
  if (auto attention = dyn_cast<FlashAttentionOp>(op);
      attention && attention.getDropoutRatio().convertToDouble() > 0.0)
    return attention.getSaltMutable();
  return std::nullopt;
}

/// Whether a parameter is a norm's scale or bias by the op reading it (through casts), or by
/// Hugging Face's norm-like name patterns.
bool isNormParameter(BlockArgument argument, StringRef name) {
  // transformers' forbidden_name_patterns: layernorm, rmsnorm, a component "norm" or "*_norm".
  std::string lower = name.lower();
  if (StringRef(lower).contains("layernorm") || StringRef(lower).contains("rmsnorm"))
    return true;
  SmallVector<StringRef> components;
  StringRef(lower).split(components, '.');
  for (StringRef component : components)
    if (component == "norm" || component.ends_with("_norm"))
      return true;
  SmallVector<Value> reads = {argument};
  while (!reads.empty()) {
    Value value = reads.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<CastOp>(user)) {
        reads.push_back(user->getResult(0));
        continue;
      }
      // Every operand after the normalized input(s): the scale and the bias.
      unsigned inputs = isa<AddLayerNormOp>(user) ? 2 : 1;
      if (isa<LayerNormOp, AddLayerNormOp, RmsNormOp>(user) && use.getOperandNumber() >= inputs)
        return true;
    }
  }
  return false;
}

/// Which arguments of @forward take weight decay when they train: all but --no-decay's globs
/// and, with --no-decay-norms-and-biases, Hugging Face Trainer's group (names with "bias",
/// layer and RMS norm parameters). Errors on globs that match no trained parameter.
FailureOr<SmallVector<bool>> selectDecaying(func::FuncOp forward, const TrainStepOptions &options,
                                            ArrayRef<bool> trainable) {
  std::vector<llvm::GlobPattern> globs;
  for (const std::string &text : options.noDecay) {
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(text);
    if (!pattern)
      return emitError(forward.getLoc())
             << "invalid glob '" << text << "': " << llvm::toString(pattern.takeError());
    globs.push_back(std::move(*pattern));
  }
  std::vector<bool> used(globs.size());
  SmallVector<bool> decaying;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    StringAttr name = argAttr(forward, i, kParamNameAttr);
    bool decays = true;
    for (size_t p = 0; name && trainable[i] && p < globs.size(); ++p)
      if (globs[p].match(name.getValue())) {
        used[p] = true;
        decays = false;
      }
    if (name && options.noDecayNormsAndBiases &&
        (name.getValue().contains("bias") || isNormParameter(forward.getArgument(i), name)))
      decays = false;
    decaying.push_back(decays);
  }
  for (size_t p = 0; p < globs.size(); ++p)
    if (!used[p])
      return emitError(forward.getLoc())
             << "--no-decay '" << options.noDecay[p] << "' matches no trained parameter";
  return decaying;
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

/// What each rank shards (DataParallel.h): nothing when there is one.
int64_t zeroStageOf(const TrainStepOptions &options) {
  return options.worldSize > 1 ? options.zeroStage : 0;
}

/// The sum of the squares of every element of the gradients, in f32 (the square of their
/// global L2 norm).
Value sumOfSquares(OpBuilder &b, Location loc, ArrayRef<Value> gradients) {
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
  return total;
}

/// The gradients times the scale clip_grad_norm_ applies: min(1, max_norm / (norm + 1e-6)).
SmallVector<Value> clipByGlobalNorm(OpBuilder &b, Location loc, ArrayRef<Value> gradients,
                                    Value norm, Value maxNorm) {
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  auto constant = [&](double value) {
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(value)));
  };
  Value coefficient =
      b.create<DivOp>(loc, maxNorm, b.create<AddOp>(loc, norm, constant(1e-6)));
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

/// The loss scaler of a step with --precision fp16: the scale this step uses and the flag that
/// its gradients are not all finite.
struct LossScaler {
  Value scale;
  Value foundInf;
};

/// initial * 2^exponent: the scale the loss gradient is seeded with.
Value currentLossScale(OpBuilder &b, Location loc, Value exponent, double initial) {
  Value two = scalarLike(b, loc, exponent, 2.0);
  return b.create<MulOp>(loc, scalarLike(b, loc, exponent, initial),
                         b.create<PowOp>(loc, two, exponent));
}

/// GradScaler.unscale_: found_inf over every gradient, one kernel, and each gradient times
/// 1 / scale (in f32, then in the gradient's own type).
Value unscaleGradients(OpBuilder &b, Location loc, MutableArrayRef<Value> gradients, Value scale) {
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  Value foundInf = b.create<NonFiniteCheckOp>(loc, scalarType, gradients);
  Value inverse = b.create<DivOp>(loc, scalarLike(b, loc, scale, 1.0), scale);
  for (Value &gradient : gradients) {
    Type element = cast<RankedTensorType>(gradient.getType()).getElementType();
    Value factor = inverse;
    if (!element.isF32())
      factor = b.create<CastOp>(loc, RankedTensorType::get({}, element), inverse);
    gradient = b.create<MulOp>(loc, gradient, factor);
  }
  return foundInf;
}

/// PyTorch's running-statistics update of a training-mode batch norm whose statistics are
/// arguments: (statistic, new value) pairs, running = momentum * running + (1 - momentum) *
/// batch, with ONNX's momentum and the unbiased batch variance.
SmallVector<std::pair<Value, Value>> runningStatisticsUpdate(OpBuilder &b, BatchNormOp op) {
  if (!isa<BlockArgument>(op.getMean()) || !isa<BlockArgument>(op.getVar()))
    return {};
  Location loc = op.getLoc();
  // The statistics are kept in their own type (f32 under --precision bf16), whatever the data's:
  // batch_moments reads the data in its type and gives each statistic in its own.
  auto type = cast<RankedTensorType>(op.getInput().getType());
  int64_t channels = type.getDimSize(1);
  int64_t count = type.getNumElements() / std::max<int64_t>(channels, 1);
  // Right after the batch norm: the moments are [C], and the input need not live to the end.
  BatchMomentsOp moments;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(op);
    moments = b.create<BatchMomentsOp>(
        loc, TypeRange{op.getMean().getType(), op.getVar().getType()}, op.getInput());
  }
  // `value` as a scalar of `like`'s element type.
  auto scalar = [&](double value, Value like) {
    Type element = cast<RankedTensorType>(like.getType()).getElementType();
    return b.create<ConstantOp>(loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                                            b.getFloatAttr(element, value)));
  };
  Value variance = moments.getVariance();
  Value unbiased = b.create<MulOp>(
      loc, variance, scalar(double(count) / std::max<int64_t>(count - 1, 1), variance));
  double momentum = op.getMomentum().convertToDouble();
  auto blend = [&](Value running, Value batch) -> Value {
    Value decayed = b.create<MulOp>(loc, running, scalar(momentum, running));
    return b.create<AddOp>(loc, b.create<MulOp>(loc, batch, scalar(1.0 - momentum, batch)),
                           decayed);
  };
  return {{op.getMean(), blend(op.getMean(), moments.getMean())},
          {op.getVar(), blend(op.getVar(), unbiased)}};
}

/// PyTorch's count of the batches a training-mode batch norm has seen: the buffer
/// PREFIX.num_batches_tracked beside its PREFIX.running_mean (the export helper carries it), and
/// that count plus one; nothing when the model has no such buffer.
std::optional<std::pair<Value, Value>> batchesTrackedUpdate(OpBuilder &b, func::FuncOp step,
                                                            BatchNormOp op) {
  auto mean = dyn_cast<BlockArgument>(op.getMean());
  if (!mean)
    return std::nullopt;
  auto nameAt = [&](unsigned index) {
    auto name = step.getArgAttrOfType<StringAttr>(index, kParamNameAttr);
    return name ? name.getValue() : StringRef();
  };
  StringRef meanName = nameAt(mean.getArgNumber());
  if (!meanName.consume_back("running_mean"))
    return std::nullopt;
  std::string counterName = (meanName + "num_batches_tracked").str();
  for (BlockArgument argument : step.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (nameAt(argument.getArgNumber()) != counterName || !type ||
        !type.getElementType().isInteger(64) || type.getNumElements() != 1)
      continue;
    Value one = b.create<ConstantOp>(
        op.getLoc(), DenseElementsAttr::get(type, b.getIntegerAttr(type.getElementType(), 1)));
    return std::make_pair(Value(argument), Value(b.create<AddOp>(op.getLoc(), argument, one)));
  }
  return std::nullopt;
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

/// A 16-bit cast of a model tensor in @forward (autocast's weight copy), by argument index.
struct WeightCast {
  unsigned argument;
  RankedTensorType copyType;
};

/// With accumulation or offload, the weight copies kept across micro-batches and steps:
/// @forward's narrowing casts of its parameters and buffers (autocast makes one per tensor and
/// type, at the entry).
SmallVector<WeightCast> weightCastsToKeep(func::FuncOp forward, const TrainStepOptions &options) {
  SmallVector<WeightCast> kept;
  // Under ZeRO stage 3 a whole copy kept across micro-batches would undo the sharding.
  if (options.optimizer.name == "none" ||
      (options.optimizer.accumulationSteps <= 1 && !options.offloadOptimizer) ||
      zeroStageOf(options) >= 3)
    return kept;
  forward.walk([&](CastOp cast) {
    auto argument = dyn_cast<BlockArgument>(cast.getInput());
    auto from = cast.getInput().getType().getElementType(), to = cast.getType().getElementType();
    if (argument && argAttr(forward, argument.getArgNumber(), kParamNameAttr) &&
        isa<FloatType>(from) && isa<FloatType>(to) &&
        to.getIntOrFloatBitWidth() < from.getIntOrFloatBitWidth())
      kept.push_back({argument.getArgNumber(), cast.getType()});
  });
  return kept;
}

/// --offload-optimizer: every optimizer state, and each trained parameter @forward reads only
/// through kept 16-bit copies (its f32 master), go to host memory.
void markOffloaded(OpBuilder &b, func::FuncOp forward, ArrayRef<unsigned> trainable,
                   ArrayRef<WeightCast> weightCasts, ArrayRef<unsigned> forwardToStep,
                   const TrainStepSignature &signature, ArgumentList &arguments) {
  auto mark = [&](unsigned stepIndex) {
    NamedAttrList attrs(arguments.attrs[stepIndex]);
    attrs.set(kOffloadedAttr, b.getUnitAttr());
    arguments.attrs[stepIndex] = attrs.getDictionary(b.getContext());
  };
  for (auto [index, trained] : llvm::zip(trainable, signature.trained)) {
    for (unsigned state : trained.state)
      mark(state);
    Value param = forward.getArgument(index);
    bool onlyCopied = !param.use_empty() && llvm::all_of(param.getUsers(), [&](Operation *user) {
      auto cast = dyn_cast<CastOp>(user);
      return cast && llvm::any_of(weightCasts, [&](const WeightCast &kept) {
               return kept.argument == index && kept.copyType == cast.getType();
             });
    });
    if (onlyCopied)
      mark(forwardToStep[index]);
  }
}

/// Lays out the step's arguments: graph inputs, labels, parameters and buffers (@forward's,
/// with the labels before the first of them), then each trained parameter's optimizer state,
/// the gradient accumulators, the weight copies, the loss scaler's state, and the run-time
/// scalars in PlanVocabulary.h's order.
/// `forwardToStep` maps @forward's argument indices to the step's.
/// The arguments every step starts with: @forward's, with the labels before the first
/// parameter or buffer; returns the labels' index.
unsigned layOutForwardArguments(OpBuilder &b, func::FuncOp forward, Type labels,
                                const TrainStepOptions &options, ArgumentList &arguments,
                                SmallVector<unsigned> &forwardToStep) {
  unsigned labelsPosition = 0, labelsIndex = 0;
  while (labelsPosition < forward.getNumArguments() &&
         !argAttr(forward, labelsPosition, kParamNameAttr))
    ++labelsPosition;
  for (unsigned i = 0; i <= forward.getNumArguments(); ++i) {
    if (i == labelsPosition)
      labelsIndex = arguments.add(labels, inputAttrs(b, options.labelsName));
    if (i == forward.getNumArguments())
      break;
    DictionaryAttr attrs = forward.getArgAttrDict(i);
    forwardToStep.push_back(
        arguments.add(forward.getArgument(i).getType(), attrs ? attrs : b.getDictionaryAttr({})));
  }
  return labelsIndex;
}

TrainStepSignature layOutArguments(OpBuilder &b, func::FuncOp forward, Type labels,
                                   const TrainStepOptions &options, ArrayRef<unsigned> trainable,
                                   const Optimizer *optimizer, bool hasDropout,
                                   ArrayRef<WeightCast> weightCasts, ArgumentList &arguments,
                                   SmallVector<unsigned> &forwardToStep) {
  TrainStepSignature signature;
  signature.labels =
      layOutForwardArguments(b, forward, labels, options, arguments, forwardToStep);
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    (argAttr(forward, i, kParamNameAttr) ? signature.modelTensors : signature.graphInputs)
        .push_back(forwardToStep[i]);
  for (unsigned index : trainable)
    signature.trained.push_back({forwardToStep[index], {}, std::nullopt});
  SmallVector<plan::ScalarInput> scalars;
  if (optimizer) {
    bool accumulates = options.optimizer.accumulationSteps > 1;
    // Under ZeRO a rank keeps its shard of what the stage partitions.
    auto kept = [&](unsigned index, int64_t fromStage) {
      auto type = cast<RankedTensorType>(forward.getArgument(index).getType());
      return zeroStageOf(options) >= fromStage ? shardType(type, options.worldSize) : type;
    };
    for (auto [index, trained] : llvm::zip(trainable, signature.trained)) {
      StringRef param = argAttr(forward, index, kParamNameAttr).getValue();
      for (const OptimizerStateSpec &spec : optimizer->stateSpecs(kept(index, 1)))
        trained.state.push_back(
            arguments.add(spec.type, stateAttrs(b, param, spec.suffix, spec.kind)));
    }
    // Stage 3: a parameter's argument, trained or frozen, is its shard, naming the whole
    // shape (buffers, which the step updates whole, stay whole).
    if (zeroStageOf(options) >= 3)
      for (unsigned index = 0; index < forward.getNumArguments(); ++index) {
        if (argumentKind(forward, index) != plan::KIND_PARAMETER)
          continue;
        unsigned param = forwardToStep[index];
        auto whole = cast<RankedTensorType>(forward.getArgument(index).getType());
        arguments.types[param] = shardType(whole, options.worldSize);
        NamedAttrList attrs(arguments.attrs[param]);
        attrs.set(kShardOfAttr, b.getDenseI64ArrayAttr(whole.getShape()));
        arguments.attrs[param] = attrs.getDictionary(b.getContext());
      }
    if (accumulates)
      for (auto [index, trained] : llvm::zip(trainable, signature.trained))
        trained.accumulator =
            arguments.add(kept(index, 2),
                          stateAttrs(b, argAttr(forward, index, kParamNameAttr).getValue(),
                                     "grad_accum", plan::KIND_GRADIENT_ACCUMULATOR));
    if (options.offloadOptimizer)
      markOffloaded(b, forward, trainable, weightCasts, forwardToStep, signature, arguments);
    for (const WeightCast &weightCast : weightCasts)
      signature.weightCopies.push_back(
          {forwardToStep[weightCast.argument],
           arguments.add(
               weightCast.copyType,
               stateAttrs(b, argAttr(forward, weightCast.argument, kParamNameAttr).getValue(),
                          "weight_copy", plan::KIND_WEIGHT_COPY))});
    if (options.optimizer.lossScale.enabled)
      for (const plan::LossScalerStateInfo &info : plan::kLossScalerStates)
        signature.lossScaler[size_t(info.state)] = arguments.add(
            RankedTensorType::get({}, b.getF32Type()),
            b.getDictionaryAttr(
                {b.getNamedAttr(kParamNameAttr, b.getStringAttr(info.name)),
                 b.getNamedAttr(
                     kParamKindAttr,
                     b.getStringAttr(plan::bindingKindInfo(plan::KIND_LOSS_SCALER).name))}));
    scalars = optimizer->scalarInputs();
    if (accumulates)
      scalars.push_back(plan::ScalarInput::Apply);
    if ((accumulates || options.worldSize > 1) && options.loss == LossKind::CrossEntropy &&
        options.optimizer.tokenWeightedAccumulation)
      scalars.push_back(plan::ScalarInput::LossWeight);
    if (options.optimizer.clipGradNorm > 0)
      scalars.push_back(plan::ScalarInput::ClipNorm);
    if (!weightCasts.empty())
      scalars.push_back(plan::ScalarInput::Refresh);
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

/// With accumulation, each 16-bit weight copy is made on the first micro-batch of an optimizer
/// step (memc.refresh) and kept for the others: the cast of the argument becomes a
/// memc.refresh_copy whose result updates the copy's state. After the reverse sweep, which reads
/// the cast as a cast (its gradient is the cast back).
void keepWeightCopies(OpBuilder &b, func::FuncOp step, const TrainStepSignature &signature,
                      Value refresh, SmallVectorImpl<Value> &results,
                      SmallVectorImpl<DictionaryAttr> &resultAttrs) {
  for (const TrainStepSignature::WeightCopy &kept : signature.weightCopies) {
    BlockArgument source = step.getArgument(kept.source), copy = step.getArgument(kept.copy);
    for (Operation *user : llvm::make_early_inc_range(source.getUsers())) {
      auto cast = dyn_cast<CastOp>(user);
      if (!cast || cast.getType() != copy.getType())
        continue;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(cast);
      Value refreshed =
          b.create<RefreshCopyOp>(cast.getLoc(), copy.getType(), refresh, source, copy);
      cast.replaceAllUsesWith(refreshed);
      cast.erase();
      results.push_back(refreshed);
      resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
          kUpdatesAttr, step.getArgAttrOfType<StringAttr>(kept.copy, kParamNameAttr))));
    }
  }
}

/// GradScaler.update as the step's results: the scaler's new state (on the micro-batch that
/// applies, with accumulation), and the outputs the runtime logs, the scale used and found_inf.
void appendLossScalerUpdate(OpBuilder &b, Location loc, func::FuncOp step,
                            const TrainStepSignature &signature, const LossScaler &scaler,
                            const LossScaleOptions &options, Value apply,
                            SmallVectorImpl<Value> &results,
                            SmallVectorImpl<DictionaryAttr> &resultAttrs) {
  SmallVector<Value> state;
  for (std::optional<unsigned> index : signature.lossScaler)
    state.push_back(step.getArgument(*index));
  auto scalar = state[0].getType();
  auto updated = b.create<LossScaleUpdateOp>(
      loc, TypeRange{scalar, scalar, scalar}, state[0], state[1], state[2], scaler.foundInf,
      b.getI64IntegerAttr(options.window), b.getBoolAttr(options.dynamic));
  for (auto [info, current, next] :
       llvm::zip(plan::kLossScalerStates, state, updated.getResults())) {
    results.push_back(apply ? b.create<WhereOp>(loc, apply, next, current).getResult()
                            : Value(next));
    resultAttrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr(kUpdatesAttr, b.getStringAttr(info.name))));
  }
  for (auto [name, value] : {std::pair{plan::kLossScaleOutput, scaler.scale},
                             std::pair{plan::kSkippedOutput, scaler.foundInf}}) {
    results.push_back(value);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(kOutputNameAttr, b.getStringAttr(StringRef(name.data(), name.size())))));
  }
}

/// Gradient accumulation: each trained parameter's gradient becomes the sum of its accumulator
/// (the micro-batches before this one) and this micro-batch's; returns those sums, which the
/// accumulators keep until an update restarts them.
SmallVector<Value> accumulateGradients(OpBuilder &b, Location loc, func::FuncOp step,
                                       const TrainStepSignature &signature,
                                       MutableArrayRef<Value> gradients) {
  SmallVector<Value> sums;
  for (auto [trained, gradient] : llvm::zip(signature.trained, gradients)) {
    if (!trained.accumulator)
      continue;
    gradient = b.create<AddOp>(loc, step.getArgument(*trained.accumulator), gradient);
    sums.push_back(gradient);
  }
  return sums;
}

/// Builds the step training `trainableArgs` (indices of @forward's arguments) and appends to
/// `unreachable` those whose gradient the reverse sweep found no path for (given a zero one).
FailureOr<func::FuncOp> buildStep(ModuleOp module, func::FuncOp forward,
                                  const TrainStepOptions &options, const Optimizer *optimizer,
                                  ArrayRef<unsigned> trainableArgs, ArrayRef<bool> decaying,
                                  unsigned lossIndex,
                                  RankedTensorType labels, bool hasDropout,
                                  SmallVectorImpl<unsigned> &unreachable) {
  OpBuilder b(module.getContext());
  Location loc = forward.getLoc();
  ArgumentList arguments;
  SmallVector<unsigned> forwardToStep;
  SmallVector<WeightCast> weightCasts = weightCastsToKeep(forward, options);
  TrainStepSignature signature =
      layOutArguments(b, forward, labels, options, trainableArgs, optimizer, hasDropout,
                      weightCasts, arguments, forwardToStep);

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

  // Stage 3: the forward and the backward read each trained parameter whole, gathered from
  // its shard (placed by placeGathers once the backward exists).
  const int64_t zeroStage = optimizer ? zeroStageOf(options) : 0;
  IRMapping mapping;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    mapping.map(forward.getArgument(i), argument(forwardToStep[i]));
  SmallVector<Value> gathers;
  if (zeroStage >= 3)
    for (unsigned index = 0; index < forward.getNumArguments(); ++index) {
      if (argumentKind(forward, index) != plan::KIND_PARAMETER)
        continue;
      Value gathered = gatherParameter(
          b, loc, argument(forwardToStep[index]),
          cast<RankedTensorType>(forward.getArgument(index).getType()), options.worldSize);
      mapping.map(forward.getArgument(index), gathered);
      gathers.push_back(gathered);
    }
  SmallVector<BatchNormOp> batchNorms;
  for (Operation &op : forward.getBody().front().without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (auto batchNorm = dyn_cast<BatchNormOp>(clone)) {
      batchNorm.setTraining(true);
      batchNorms.push_back(batchNorm);
    }
    if (std::optional<MutableOperandRange> salt = dropoutSalt(clone))
      salt->assign(scalars[size_t(plan::ScalarInput::Salt)]);
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
  // (Stage 3's gathers are where the gradients stop: their results are what they are taken
  // with respect to.)
  SmallVector<Operation *> ops;
  for (Operation &op : *body)
    if (!isa<AllGatherOp>(op))
      ops.push_back(&op);

  SmallVector<Value> wrt;
  for (auto [index, trained] : llvm::zip(trainableArgs, signature.trained))
    wrt.push_back(mapping.lookup(forward.getArgument(index)));
  // With loss scaling the backward starts from the scale instead of 1 (GradScaler.scale(loss)),
  // so that 16-bit gradients that would underflow keep their bits.
  const LossScaleOptions &lossScale = options.optimizer.lossScale;
  LossScaler scaler;
  Value seed;
  if (optimizer && lossScale.enabled)
    seed = scaler.scale = currentLossScale(
        b, loc, argument(*signature.lossScaler[size_t(plan::LossScalerState::Exponent)]),
        lossScale.initialScale);
  else
    seed =
        b.create<ConstantOp>(loc, DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()),
                                                         b.getF32FloatAttr(1.0f)));
  if (Value weight = scalars[size_t(plan::ScalarInput::LossWeight)])
    seed = b.create<MulOp>(loc, seed, weight);
  Operation *lastForward = &body->back();
  FailureOr<SmallVector<Value>> gradients = buildReverseSweep(b, ops, loss, seed, wrt);
  if (failed(gradients)) {
    step.erase();
    return failure();
  }
  for (auto [index, whole, gradient] : llvm::zip(trainableArgs, wrt, *gradients)) {
    if (gradient)
      continue;
    unreachable.push_back(index);
    auto type = cast<RankedTensorType>(whole.getType());
    gradient = b.create<ConstantOp>(
        loc, DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0)));
  }
  // Stage 3: each gather in the narrowest type its readers take (the backward's readers may
  // differ: an embedding's f32 lookup is the forward's alone). `wrt` may name erased gathers
  // from here on.
  narrowGathers(b, gathers);
  SmallVector<Value> backwardGathers = placeGathers(b, gathers, lastForward);
  narrowGathers(b, backwardGathers);
  // The step's phases: gradients (above) -> synchronise over the ranks and accumulate (stage 2
  // reduce-scatters each micro-batch's gradients into sharded accumulators; stages 0 and 1
  // accumulate locally and all-reduce the sums on the micro-batch that applies, stage 1 then
  // taking its shard) -> mean -> unscale/clip -> update (of this rank's shards under ZeRO) ->
  // parameter gather. Without an optimizer (the gradients of --dump-grads) each rank's
  // gradients are its own.
  Value flag = scalars[size_t(plan::ScalarInput::Apply)];
  const bool synchronizes = optimizer && options.worldSize > 1;
  if (zeroStage >= 2)
    reduceScatterGradients(b, loc, *gradients, options.worldSize);
  SmallVector<Value> accumulated = accumulateGradients(b, loc, step, signature, *gradients);
  if (synchronizes && zeroStage < 2)
    allReduceGradients(b, loc, *gradients, flag, options.worldSize,
                       static_cast<uint64_t>(options.bucketCapMb) << 20);
  if (zeroStage == 1)
    shardGradients(b, loc, *gradients, options.worldSize);
  // The update sees the mean over the micro-batches (so far) and the ranks.
  int64_t contributions = (synchronizes ? options.worldSize : 1) *
                          (accumulated.empty() ? 1 : options.optimizer.accumulationSteps);
  if (contributions > 1)
    for (Value &gradient : *gradients)
      gradient = b.create<MulOp>(loc, gradient, scalarLike(b, loc, gradient, 1.0 / contributions));
  // Unscaled before clipping and the update, once per optimizer step: on the accumulated mean.
  // Under ZeRO each rank sees its shards: whether any is not finite, and the squares of the
  // global norm, are summed over the ranks.
  if (scaler.scale && !gradients->empty()) {
    scaler.foundInf = unscaleGradients(b, loc, *gradients, scaler.scale);
    if (zeroStage > 0)
      scaler.foundInf =
          b.create<ClipOp>(loc, sumOverRanks(b, loc, scaler.foundInf, options.worldSize),
                           FloatAttr(), b.getF64FloatAttr(1.0));
  }
  Value maxNorm = scalars[size_t(plan::ScalarInput::ClipNorm)];
  Value norm;
  if ((maxNorm || options.optimizer.logGradNorm) && optimizer && !gradients->empty()) {
    Value squares = sumOfSquares(b, loc, *gradients);
    if (zeroStage > 0)
      squares = sumOverRanks(b, loc, squares, options.worldSize);
    norm = b.create<SqrtOp>(loc, squares);
  }
  if (maxNorm && norm)
    *gradients = clipByGlobalNorm(b, loc, *gradients, norm, maxNorm);

  SmallVector<Value> results = {loss};
  SmallVector<DictionaryAttr> resultAttrs = {
      b.getDictionaryAttr(b.getNamedAttr(kOutputNameAttr, b.getStringAttr("loss")))};
  if (norm) {
    results.push_back(norm);
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
        kOutputNameAttr,
        b.getStringAttr(StringRef(plan::kGradNormOutput.data(), plan::kGradNormOutput.size())))));
  }
  auto marked = [&](StringRef attr, StringRef name) {
    return b.getDictionaryAttr(b.getNamedAttr(attr, b.getStringAttr(name)));
  };
  if (!optimizer) {
    for (auto [trained, gradient] : llvm::zip(signature.trained, *gradients)) {
      results.push_back(gradient);
      resultAttrs.push_back(marked(kGradientOfAttr, nameOf(trained.param)));
    }
  } else {
    // With accumulation, parameters and state change only on the micro-batch that applies;
    // with loss scaling, only when the gradients are finite (GradScaler.step skips the update:
    // parameters, optimizer state and its step count stay). The update's gate says so, and
    // the update computes nothing elsewhere.
    Value apply;
    if (flag)
      apply = b.create<GreaterOp>(loc, flag, scalarLike(b, loc, flag, 0.5));
    Value gate = flag;
    if (scaler.foundInf) {
      Value finite =
          b.create<SubOp>(loc, scalarLike(b, loc, scaler.foundInf, 1.0), scaler.foundInf);
      gate = flag ? b.create<MulOp>(loc, finite, flag).getResult() : finite;
    }
    SmallVector<Value> optimizerScalars(scalars.begin(), scalars.end());
    if (Value step = scalars[size_t(plan::ScalarInput::StepNumber)]; step && scaler.foundInf)
      optimizerScalars[size_t(plan::ScalarInput::StepNumber)] = b.create<SubOp>(
          loc, step, argument(*signature.lossScaler[size_t(plan::LossScalerState::Skipped)]));
    for (auto [i, trained, gradient] : llvm::enumerate(signature.trained, *gradients)) {
      SmallVector<Value> state;
      for (unsigned index : trained.state)
        state.push_back(argument(index));
      Value param = argument(trained.param);
      ParameterUpdate parameterUpdate{param, gradient, state, optimizerScalars,
                                      decaying[trainableArgs[i]], gate};
      // Stages 1 and 2 update this rank's shard of the whole parameter and gather it on the
      // micro-batch that applies (elsewhere the gather leaves its result unspecified, so the
      // parameter is selected); stage 3's argument is the shard.
      const bool gathers = zeroStage == 1 || zeroStage == 2;
      SmallVector<Value> updated =
          gathers ? buildShardedUpdate(b, loc, *optimizer, parameterUpdate, flag, options.worldSize)
                  : optimizer->buildUpdate(b, loc, parameterUpdate);
      if (gathers && apply)
        updated[0] = b.create<WhereOp>(loc, apply, updated[0], param);
      results.push_back(updated[0]);
      resultAttrs.push_back(marked(kUpdatesAttr, nameOf(trained.param)));
      for (auto [index, newValue] : llvm::zip(trained.state, ArrayRef(updated).drop_front())) {
        results.push_back(newValue);
        resultAttrs.push_back(marked(kUpdatesAttr, nameOf(index)));
      }
      if (trained.accumulator) { // restart the sum after an update
        Value zero = scalarLike(b, loc, accumulated[i], 0.0);
        results.push_back(b.create<WhereOp>(loc, apply, zero, accumulated[i]));
        resultAttrs.push_back(marked(kUpdatesAttr, nameOf(*trained.accumulator)));
      }
    }
    keepWeightCopies(b, step, signature, scalars[size_t(plan::ScalarInput::Refresh)], results,
                     resultAttrs);
    if (scaler.foundInf)
      appendLossScalerUpdate(b, loc, step, signature, scaler, lossScale, apply, results,
                             resultAttrs);
    for (BatchNormOp batchNorm : batchNorms) {
      SmallVector<std::pair<Value, Value>> updates = runningStatisticsUpdate(b, batchNorm);
      if (!updates.empty())
        if (std::optional<std::pair<Value, Value>> counter =
                batchesTrackedUpdate(b, step, batchNorm))
          updates.push_back(*counter);
      for (auto [statistic, updated] : updates) {
        results.push_back(updated);
        resultAttrs.push_back(
            marked(kUpdatesAttr, nameOf(cast<BlockArgument>(statistic).getArgNumber())));
      }
    }
  }
  b.create<func::ReturnOp>(loc, results);
  step.setType(b.getFunctionType(arguments.types, ValueRange(results).getTypes()));
  step.setAllResultAttrs(resultAttrs);
  return step;
}

/// @evaluate: the loss of @forward in eval mode (module.eval()): BatchNorm normalizes with its
/// running statistics, dropout passes its input through, nothing is differentiated or updated.
/// Its arguments are the step's first ones: graph inputs, labels, parameters and buffers.
FailureOr<func::FuncOp> buildEvalStep(ModuleOp module, func::FuncOp forward,
                                      const TrainStepOptions &options, unsigned lossIndex,
                                      RankedTensorType labels) {
  OpBuilder b(module.getContext());
  Location loc = forward.getLoc();
  ArgumentList arguments;
  SmallVector<unsigned> forwardToStep;
  unsigned labelsArgument =
      layOutForwardArguments(b, forward, labels, options, arguments, forwardToStep);
  b.setInsertionPointAfter(forward);
  auto step =
      b.create<func::FuncOp>(loc, options.functionName, b.getFunctionType(arguments.types, {}));
  step.setAllArgAttrs(arguments.attrs);
  step->setAttr(kLabelsAttr, b.getStringAttr(options.labelsName));
  b.setInsertionPointToStart(step.addEntryBlock());
  IRMapping mapping;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    mapping.map(forward.getArgument(i), step.getArgument(forwardToStep[i]));
  for (Operation &op : forward.getBody().front().without_terminator()) {
    if (auto dropout = dyn_cast<DropoutOp>(op)) {
      mapping.map(dropout.getResult(), mapping.lookup(dropout.getInput()));
      continue;
    }
    Operation *clone = b.clone(op, mapping);
    if (auto batchNorm = dyn_cast<BatchNormOp>(clone))
      batchNorm.setTraining(false);
    if (auto attention = dyn_cast<FlashAttentionOp>(clone))
      attention.setDropoutRatio(APFloat(0.0));
  }
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  Value loss = buildLoss(b, NameLoc::get(b.getStringAttr("loss")),
                         mapping.lookup(returnOp.getOperand(lossIndex)),
                         step.getArgument(labelsArgument), options);
  if (auto crossEntropy = loss.getDefiningOp<CrossEntropyOp>(); crossEntropy && options.fuseLoss) {
    LossFusionSummary fusion;
    loss = fuseHeadIntoLoss(crossEntropy, fusion);
  }
  b.create<func::ReturnOp>(loc, loss);
  step.setType(b.getFunctionType(arguments.types, {loss.getType()}));
  step.setResultAttrs(
      0, b.getDictionaryAttr(b.getNamedAttr(kOutputNameAttr, b.getStringAttr("loss"))));
  return step;
}

} // namespace

FailureOr<llvm::SmallVector<bool>> selectTrainable(func::FuncOp forward,
                                                   const TrainStepOptions &options,
                                                   bool reportUnmatched) {
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
    for (size_t p = 0; reportUnmatched && p < texts.size(); ++p)
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
  FailureOr<SmallVector<bool>> trainable = selectTrainable(forward, options, true);
  if (failed(lossIndex) || failed(trainable))
    return failure();
  FailureOr<SmallVector<bool>> decaying = selectDecaying(forward, options, *trainable);
  if (failed(decaying))
    return failure();
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  auto prediction = cast<RankedTensorType>(returnOp.getOperand(*lossIndex).getType());
  FailureOr<RankedTensorType> labels = labelsType(prediction, options, forward.getLoc());
  if (failed(labels))
    return failure();
  if (options.evaluationOnly)
    return buildEvalStep(module, forward, options, *lossIndex, *labels);
  // Dropout masks must change every step: the step takes a salt (the runtime's seed and step
  // number) that every dropout mixes into its seed.
  bool hasDropout = forward
                        .walk([](Operation *op) {
                          return dropoutSalt(op) ? WalkResult::interrupt() : WalkResult::advance();
                        })
                        .wasInterrupted();
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
  FailureOr<func::FuncOp> step =
      buildStep(module, forward, options, optimizer.get(), trainableArgs, *decaying, *lossIndex,
                *labels, hasDropout, unreachable);
  // Trainability is the reverse sweep's verdict: a parameter no gradient rule reaches (a mask
  // used only through Equal/Where, say) would still get optimizer state and weight decay, so the
  // step is built again without it.
  bool leaveOut = optimizer || !options.zeroUnreachableGradients;
  if (succeeded(step) && leaveOut && !unreachable.empty()) {
    step->erase();
    llvm::erase_if(trainableArgs, [&](unsigned i) { return llvm::is_contained(unreachable, i); });
    SmallVector<unsigned> none;
    step = buildStep(module, forward, options, optimizer.get(), trainableArgs, *decaying,
                     *lossIndex, *labels, hasDropout, none);
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
