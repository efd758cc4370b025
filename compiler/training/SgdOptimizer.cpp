//===- SgdOptimizer.cpp - torch.optim.SGD ---------------------------------===//
//
// With momentum: one velocity per parameter (NAME.momentum_buffer, the parameter's type) and
// memc.sgd_update. Without: no state, and the update is plain memc arithmetic,
// param - lr * (grad + weight_decay * param).
//
//===----------------------------------------------------------------------===//
#include "compiler/training/Optimizer.h"
#include "dialects/memc/MemcDialect.h"

using namespace mlir;

namespace memc {
namespace {

class SgdOptimizer : public Optimizer {
public:
  explicit SgdOptimizer(const OptimizerOptions &options)
      : momentum(options.momentum), weightDecay(options.weightDecay.value_or(0.0)),
        nesterov(options.nesterov) {}

  StringRef name() const override { return "sgd"; }

  SmallVector<OptimizerStateSpec> stateSpecs(RankedTensorType param) const override {
    if (momentum == 0.0)
      return {};
    return {{"momentum_buffer", param}};
  }

  SmallVector<plan::ScalarInput> scalarInputs() const override {
    return {plan::ScalarInput::LearningRate};
  }

  SmallVector<Value> buildUpdate(OpBuilder &b, Location loc,
                                 const ParameterUpdate &update) const override {
    Value lr = update.scalar(plan::ScalarInput::LearningRate);
    const double weightDecay = update.decays ? this->weightDecay : 0.0;
    if (momentum != 0.0) {
      Type type = update.param.getType();
      auto op = b.create<SgdUpdateOp>(loc, TypeRange{type, type}, update.param, update.gradient,
                                      update.state[0], lr, update.gate, b.getF64FloatAttr(momentum),
                                      b.getF64FloatAttr(weightDecay), b.getBoolAttr(nesterov));
      return {op.getNewParam(), op.getNewVelocity()};
    }
    Type element = cast<RankedTensorType>(update.param.getType()).getElementType();
    Value rate = lr;
    if (!element.isF32())
      rate = b.create<CastOp>(loc, RankedTensorType::get({}, element), lr);
    Value direction = update.gradient;
    if (weightDecay != 0.0) {
      auto decay =
          b.create<ConstantOp>(loc, DenseElementsAttr::get(RankedTensorType::get({}, element),
                                                           b.getFloatAttr(element, weightDecay)));
      direction = b.create<AddOp>(loc, update.gradient, b.create<MulOp>(loc, update.param, decay));
    }
    Value updated = b.create<SubOp>(loc, update.param, b.create<MulOp>(loc, direction, rate));
    // Plain SGD is elementwise ops, which have no gate: it selects.
    if (update.gate) {
      Value gate = update.gate;
      Value on = b.create<GreaterOp>(
          loc, gate,
          b.create<ConstantOp>(loc, DenseElementsAttr::get(cast<RankedTensorType>(gate.getType()),
                                                           b.getF32FloatAttr(0.5f))));
      updated = b.create<WhereOp>(loc, on, updated, update.param);
    }
    return {updated};
  }

private:
  double momentum, weightDecay;
  bool nesterov;
};

} // namespace

std::unique_ptr<Optimizer> createSgdOptimizer(const OptimizerOptions &options) {
  return std::make_unique<SgdOptimizer>(options);
}

} // namespace memc
