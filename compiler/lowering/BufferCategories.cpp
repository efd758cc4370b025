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

} // namespace

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

  for (BlockArgument argument : function.getArguments())
    category[argument] =
        plan::bindingKindInfo(argumentKind(function, argument.getArgNumber())).category;

  llvm::DenseSet<Operation *> forward = lossAncestors(function);

  // Gradients: what updates read as gradients and the step returns as gradients, and the
  // same-typed adds, scalings and views producing them.
  llvm::DenseSet<Value> gradients;
  std::vector<Value> gradientWork;
  for (Operation &op : body)
    if (Value gradient = gradientOfUpdate(&op))
      gradientWork.push_back(gradient);
  llvm::StringSet<> accumulators;
  for (BlockArgument argument : function.getArguments())
    if (argumentKind(function, argument.getArgNumber()) == plan::KIND_GRADIENT_ACCUMULATOR)
      accumulators.insert(
          function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kParamNameAttr));
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    if (function.getResultAttr(index, kGradientOfAttr))
      gradientWork.push_back(value);
    // A new gradient accumulator is a gradient too.
    if (auto updated = function.getResultAttrOfType<StringAttr>(index, kUpdatesAttr);
        updated && accumulators.contains(updated.getValue()))
      gradientWork.push_back(value);
  }
  while (!gradientWork.empty()) {
    Value value = gradientWork.back();
    gradientWork.pop_back();
    if (!gradients.insert(value).second)
      continue;
    Operation *producer = value.getDefiningOp();
    // A 16-bit gradient cast to its f32 parameter's type is a gradient too.
    if (auto widened = dyn_cast_if_present<CastOp>(producer)) {
      if (!isa<BlockArgument>(widened.getInput()))
        gradientWork.push_back(widened.getInput());
      continue;
    }
    if (!producer || !isa<AddOp, MulOp, DivOp, ReshapeOp, WhereOp>(producer))
      continue;
    for (Value operand : producer->getOperands())
      if (operand.getType() == value.getType() && !isa<BlockArgument>(operand))
        gradientWork.push_back(operand);
  }

  // Weights as the step reads them: parameters and buffers, and their views and transposes.
  llvm::DenseSet<Value> weights;
  for (BlockArgument argument : function.getArguments())
    if (category.lookup(argument) == plan::PARAMETERS)
      weights.insert(argument);
  for (Operation &op : body)
    if (isa<ReshapeOp, TransposeOp>(op) && weights.contains(op.getOperand(0)))
      weights.insert(op.getResult(0));

  for (Operation &op : body.without_terminator()) {
    bool isForward = forward.contains(&op), clone = isRecomputed(&op);
    for (Value result : op.getResults()) {
      plan::Category kind = plan::TEMPORARIES;
      if (isa<ConstantOp>(op))
        kind = plan::CONSTANTS;
      else if (isa<CastOp>(op) && weights.contains(op.getOperand(0)))
        kind = plan::WEIGHT_COPIES;
      else if (gradients.contains(result))
        kind = plan::GRADIENTS;
      else if (clone)
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
