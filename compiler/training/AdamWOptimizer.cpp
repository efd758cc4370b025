//===- AdamWOptimizer.cpp - torch.optim.AdamW -----------------------------===//
//
// Two f32 moments per parameter (NAME.exp_avg, NAME.exp_avg_sq) whatever the parameter's type,
// the step number for the bias correction, and memc.adamw_update.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/Optimizer.h"
#include "dialects/memc/MemcDialect.h"

using namespace mlir;

namespace memc {
namespace {

class AdamWOptimizer : public Optimizer {
public:
  explicit AdamWOptimizer(const OptimizerOptions &options)
      : beta1(options.beta1), beta2(options.beta2), eps(options.eps),
        weightDecay(options.weightDecay.value_or(0.01)) {}

  StringRef name() const override { return "adamw"; }

  SmallVector<OptimizerStateSpec> stateSpecs(RankedTensorType param) const override {
    auto f32 = param.clone(Float32Type::get(param.getContext()));
    return {{"exp_avg", f32}, {"exp_avg_sq", f32}};
  }

  SmallVector<plan::ScalarInput> scalarInputs() const override {
    return {plan::ScalarInput::LearningRate, plan::ScalarInput::StepNumber};
  }

  SmallVector<Value> buildUpdate(OpBuilder &b, Location loc,
                                 const ParameterUpdate &update) const override {
    ValueRange state = update.state;
    auto op = b.create<AdamWUpdateOp>(
        loc, TypeRange{update.param.getType(), state[0].getType(), state[1].getType()},
        update.param, update.gradient, state[0], state[1],
        update.scalar(plan::ScalarInput::LearningRate),
        update.scalar(plan::ScalarInput::StepNumber), update.gate, b.getF64FloatAttr(beta1),
        b.getF64FloatAttr(beta2), b.getF64FloatAttr(eps), b.getF64FloatAttr(update.decays ? weightDecay : 0.0));
    return {op.getNewParam(), op.getNewFirstMoment(), op.getNewSecondMoment()};
  }

private:
  double beta1, beta2, eps, weightDecay;
};

} // namespace

std::unique_ptr<Optimizer> createAdamWOptimizer(const OptimizerOptions &options) {
  return std::make_unique<AdamWOptimizer>(options);
}

} // namespace memc
