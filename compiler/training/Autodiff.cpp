//===- Autodiff.cpp - reverse-mode differentiation of memc IR -------------===//
//
// Classic reverse accumulation on SSA: find the values that depend on the arguments we
// differentiate with respect to (activity analysis), then visit the forward ops backwards,
// asking each active op's gradient rule for its operands' gradients and summing the
// contributions of values with several uses.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/Autodiff.h"
#include "dialects/memc/MemcDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace memc {
namespace {

bool isDifferentiableType(Type type) {
  return isa<FloatType>(getElementTypeOrSelf(type));
}

/// Values that depend on one of `wrt` through floating-point computation.
llvm::DenseSet<Value> activeValues(ArrayRef<Operation *> ops, ValueRange wrt) {
  llvm::DenseSet<Value> active(wrt.begin(), wrt.end());
  for (Operation *op : ops) {
    bool dependsOnWrt =
        llvm::any_of(op->getOperands(), [&](Value operand) { return active.contains(operand); });
    if (!dependsOnWrt)
      continue;
    for (Value result : op->getResults())
      if (isDifferentiableType(result.getType()))
        active.insert(result);
  }
  return active;
}

/// Values the output depends on, so that no gradient is built for dead branches.
llvm::DenseSet<Value> usefulValues(ArrayRef<Operation *> ops, Value output) {
  llvm::DenseSet<Value> useful = {output};
  for (Operation *op : llvm::reverse(ops)) {
    if (llvm::none_of(op->getResults(), [&](Value r) { return useful.contains(r); }))
      continue;
    for (Value operand : op->getOperands())
      useful.insert(operand);
  }
  return useful;
}

} // namespace

FailureOr<SmallVector<Value>> buildReverseSweep(OpBuilder &builder, ArrayRef<Operation *> ops,
                                                Value output, Value seed, ValueRange wrt) {
  llvm::DenseSet<Value> active = activeValues(ops, wrt);
  llvm::DenseSet<Value> useful = usefulValues(ops, output);
  llvm::DenseMap<Value, Value> gradients;
  gradients[output] = seed;

  auto accumulate = [&](Value value, Value gradient, Location loc) {
    Value &slot = gradients[value];
    slot = slot ? builder.create<AddOp>(loc, slot, gradient).getResult() : gradient;
  };

  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGradients;
    bool anyGradient = false;
    for (Value result : op->getResults()) {
      Value gradient = active.contains(result) ? gradients.lookup(result) : Value();
      resultGradients.push_back(gradient);
      anyGradient |= static_cast<bool>(gradient);
    }
    bool needsOperandGradient = llvm::any_of(op->getOperands(), [&](Value operand) {
      return active.contains(operand) && useful.contains(operand);
    });
    if (!anyGradient || !needsOperandGradient)
      continue;
    auto differentiable = dyn_cast<DifferentiableOp>(op);
    if (!differentiable)
      return op->emitError("no gradient rule for '") << op->getName() << "'";
    SmallVector<Value> operandGradients;
    if (failed(differentiable.buildGradients(builder, resultGradients, operandGradients)))
      return failure();
    if (operandGradients.size() != op->getNumOperands())
      return op->emitError("gradient rule returned ")
             << operandGradients.size() << " gradients for " << op->getNumOperands()
             << " operands";
    for (auto [operand, gradient] : llvm::zip(op->getOperands(), operandGradients))
      if (gradient && active.contains(operand))
        accumulate(operand, gradient, op->getLoc());
  }

  SmallVector<Value> result;
  for (Value value : wrt)
    result.push_back(gradients.lookup(value));
  return result;
}

} // namespace memc
