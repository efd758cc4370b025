//===- BufferCategories.cpp - what each value's bytes are for -------------===//
#include "compiler/lowering/BufferCategories.h"
#include "compiler/training/Optimizer.h"
#include "compiler/training/TrainStepSignature.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace memc {
namespace {

constexpr llvm::StringLiteral kRecomputedTag = "memc.recomputed";

bool isLossResult(func::FuncOp function, unsigned index) {
  auto name = function.getResultAttrOfType<StringAttr>(index, kOutputNameAttr);
  return name && name.getValue() == "loss";
}

/// Whether an op outside `forward` reads `value`, directly or through views.
bool readOutside(Value value, const llvm::DenseSet<Operation *> &forward) {
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    if (auto view = dyn_cast<ReshapeOp>(user); view && forward.contains(user))
      return readOutside(view.getResult(), forward);
    return !forward.contains(user) && !isa<func::ReturnOp>(user);
  });
}

/// Parameter gradients, each with the name of its parameter: what updates read as gradients
/// (an update's first operand is its parameter, or its shard) and the step returns as
/// gradients, new gradient accumulators, and the same-typed adds, scalings and views, and the
/// collectives (sums over the ranks, shards), producing them.
llvm::DenseMap<Value, StringAttr> gradientsByParameter(func::FuncOp function) {
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();
  auto nameOf = [&](Value value) {
    auto argument = dyn_cast<BlockArgument>(value);
    return argument ? function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                            kParamNameAttr)
                    : StringAttr();
  };
  std::vector<std::pair<Value, StringAttr>> work;
  for (Operation &op : body)
    if (Value gradient = gradientOfUpdate(&op)) {
      // Under ZeRO the update reads this rank's shard of the parameter.
      Value param = op.getOperand(0);
      if (auto shard = param.getDefiningOp<ShardOp>())
        param = shard.getInput();
      work.push_back({gradient, nameOf(param)});
    }
  llvm::StringMap<StringAttr> accumulators; // accumulator name -> its parameter's
  for (BlockArgument argument : function.getArguments())
    if (argumentKind(function, argument.getArgNumber()) == plan::KIND_GRADIENT_ACCUMULATOR)
      accumulators[nameOf(argument).getValue()] =
          function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kStateOfAttr);
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    if (auto of = function.getResultAttrOfType<StringAttr>(index, kGradientOfAttr))
      work.push_back({value, of});
    if (auto updated = function.getResultAttrOfType<StringAttr>(index, kUpdatesAttr))
      if (auto found = accumulators.find(updated.getValue()); found != accumulators.end())
        work.push_back({value, found->second});
  }
  llvm::DenseMap<Value, StringAttr> gradients;
  while (!work.empty()) {
    auto [value, parameter] = work.back();
    work.pop_back();
    if (!gradients.try_emplace(value, parameter).second)
      continue;
    Operation *producer = value.getDefiningOp();
    // A 16-bit gradient cast to its f32 parameter's type is a gradient too.
    if (auto widened = dyn_cast_if_present<CastOp>(producer)) {
      if (!isa<BlockArgument>(widened.getInput()))
        work.push_back({widened.getInput(), parameter});
      continue;
    }
    // A piece of a bucket of gradients summed over the ranks (allReduceGradients): the bucket
    // is a gradient, and piece i's gradient is the bucket's part i.
    if (auto pieces = dyn_cast_if_present<SplitOp>(producer)) {
      Value bucket = pieces.getInput();
      work.push_back({bucket, parameter});
      auto sum = bucket.getDefiningOp<AllReduceOp>();
      auto parts = sum ? sum.getInput().getDefiningOp<ConcatOp>() : ConcatOp();
      if (parts && parts.getInputs().size() == pieces.getNumResults())
        work.push_back({parts.getInputs()[cast<OpResult>(value).getResultNumber()], parameter});
      continue;
    }
    // Summed over the ranks, or this rank's shard of one: a gradient too.
    if (isa_and_present<AllReduceOp, ReduceScatterOp, ShardOp>(producer)) {
      if (!isa<BlockArgument>(producer->getOperand(0)))
        work.push_back({producer->getOperand(0), parameter});
      continue;
    }
    if (!producer || !isa<AddOp, MulOp, DivOp, ReshapeOp, WhereOp>(producer))
      continue;
    for (Value operand : producer->getOperands())
      if (operand.getType() == value.getType() && !isa<BlockArgument>(operand))
        work.push_back({operand, parameter});
  }
  return gradients;
}

} // namespace

llvm::DenseMap<Value, std::string> describedValues(func::FuncOp function) {
  llvm::DenseMap<Value, std::string> names;
  for (auto [value, parameter] : gradientsByParameter(function))
    if (parameter)
      names[value] = "gradient of " + parameter.str();
  // A parameter's 16-bit copy (--precision): "NAME as bf16"; a ZeRO stage 3 parameter gathered
  // whole from its shards: "NAME gathered" (or "NAME as bf16 gathered").
  auto parameterName = [&](Value value) {
    auto argument = dyn_cast<BlockArgument>(value);
    auto name = argument ? function.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                                 kParamNameAttr)
                         : StringAttr();
    return name ? name.str() : std::string();
  };
  for (Operation &op : function.getBody().front()) {
    if (auto gather = dyn_cast<AllGatherOp>(op)) {
      Type from = cast<RankedTensorType>(gather.getInput().getType()).getElementType();
      Type to = cast<RankedTensorType>(gather.getType()).getElementType();
      std::string element;
      if (from != to) {
        llvm::raw_string_ostream os(element);
        os << " as " << to;
      }
      if (std::string name = parameterName(gather.getInput()); !name.empty())
        names[gather.getResult()] = name + element + " gathered";
      continue;
    }
    auto narrowing = dyn_cast<CastOp>(op);
    auto source = narrowing ? dyn_cast<BlockArgument>(narrowing.getInput()) : BlockArgument();
    auto parameter = source ? function.getArgAttrOfType<StringAttr>(source.getArgNumber(),
                                                                    kParamNameAttr)
                            : StringAttr();
    if (!parameter)
      continue;
    std::string element;
    llvm::raw_string_ostream os(element);
    os << cast<RankedTensorType>(narrowing.getType()).getElementType();
    names[narrowing.getResult()] = parameter.str() + " as " + os.str();
  }
  return names;
}

llvm::DenseSet<Operation *> lossAncestors(func::FuncOp function) {
  llvm::DenseSet<Operation *> ancestors;
  Operation *terminator = function.getBody().front().getTerminator();
  std::vector<Value> work;
  for (unsigned i = 0; i < function.getNumResults(); ++i)
    if (isLossResult(function, i))
      work.push_back(terminator->getOperand(i));
  while (!work.empty()) {
    Operation *op = work.back().getDefiningOp();
    work.pop_back();
    if (op && ancestors.insert(op).second)
      llvm::append_range(work, op->getOperands());
  }
  return ancestors;
}

Location recomputedLocation(Location original) {
  return FusedLoc::get(original.getContext(), {original},
                       StringAttr::get(original.getContext(), kRecomputedTag));
}

bool isRecomputed(Operation *op) {
  auto fused = dyn_cast<FusedLoc>(op->getLoc());
  auto tag = fused ? dyn_cast_or_null<StringAttr>(fused.getMetadata()) : StringAttr();
  return tag && tag.getValue() == kRecomputedTag;
}

llvm::DenseMap<Value, plan::Category> classifyValues(func::FuncOp function) {
  llvm::DenseMap<Value, plan::Category> category;
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();

  for (BlockArgument argument : function.getArguments()) {
    category[argument] =
        plan::bindingKindInfo(argumentKind(function, argument.getArgNumber())).category;
    // A quantized frozen weight and its scales (LowRankAdapters.h): what matmul_nf4 reads
    // besides its lhs.
    if (category[argument] == plan::PARAMETERS && !argument.use_empty() &&
        llvm::all_of(argument.getUses(), [](OpOperand &use) {
          return isa<MatMulNf4Op>(use.getOwner()) && use.getOperandNumber() > 0;
        }))
      category[argument] = plan::QUANTIZED_BASE;
  }

  llvm::DenseSet<Operation *> forward = lossAncestors(function);

  llvm::DenseMap<Value, StringAttr> gradients = gradientsByParameter(function);

  // Weights as the step reads them: parameters and buffers, and their views and transposes.
  llvm::DenseSet<Value> weights;
  for (BlockArgument argument : function.getArguments())
    if (category.lookup(argument) == plan::PARAMETERS)
      weights.insert(argument);
  for (Operation &op : body)
    if (isa<AllGatherOp>(op) ||
        (isa<ReshapeOp, TransposeOp>(op) && weights.contains(op.getOperand(0))))
      weights.insert(op.getResult(0));

  for (Operation &op : body.without_terminator()) {
    bool isForward = forward.contains(&op), clone = isRecomputed(&op);
    for (Value result : op.getResults()) {
      plan::Category kind = plan::TEMPORARIES;
      if (isa<ConstantOp>(op))
        kind = plan::CONSTANTS;
      else if (isa<AllGatherOp>(op))
        kind = plan::COMMUNICATION;
      else if (isa<CastOp>(op) && weights.contains(op.getOperand(0)))
        kind = plan::WEIGHT_COPIES;
      else if (gradients.contains(result))
        kind = plan::GRADIENTS;
      else if (clone || isa<OffloadOp, ReloadOp>(op))
        kind = plan::ACTIVATIONS;
      else if (isForward && readOutside(result, forward))
        kind = plan::ACTIVATIONS;
      category[result] = kind;
    }
  }
  // Views share their source's category; updated state keeps its argument's.
  for (Operation &op : body)
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      category[reshape.getResult()] = category.lookup(reshape.getInput());
  for (auto [index, value] : llvm::enumerate(terminator->getOperands()))
    if (auto updated = function.getResultAttrOfType<StringAttr>(index, kUpdatesAttr))
      for (BlockArgument argument : function.getArguments())
        if (auto name =
                function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kParamNameAttr);
            name && name == updated)
          category[value] = category.lookup(argument);
  return category;
}

} // namespace memc
