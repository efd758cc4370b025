//===- AdamW8bitOptimizer.cpp - bitsandbytes' AdamW8bit -------------------===//
//
// AdamW with both moments in 8 bits, block-wise (kernels/DynamicQuantization.h): per parameter
// NAME.exp_avg and NAME.exp_avg_sq are u8 code indices of the parameter's shape, and
// NAME.exp_avg.absmax, NAME.exp_avg_sq.absmax one f32 per block of 256, updated by
// memc.adamw8bit_update. As bitsandbytes (min_8bit_size), a tensor of fewer than 4096 elements
// keeps f32 moments and adamw_update. Hyperparameters and defaults are AdamW's (weight decay
// 0.01, as bitsandbytes' AdamW8bit).
//
//===----------------------------------------------------------------------===//
#include "compiler/training/Optimizer.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/DynamicQuantization.h"

using namespace mlir;

namespace memc {
namespace {

/// bitsandbytes' min_8bit_size: smaller tensors keep 32-bit state.
constexpr int64_t kMin8bitElements = 4096;

class AdamW8bitOptimizer : public Optimizer {
public:
  explicit AdamW8bitOptimizer(const OptimizerOptions &options)
      : beta1(options.beta1), beta2(options.beta2), eps(options.eps),
        weightDecay(options.weightDecay.value_or(0.01)),
        fullPrecision(createAdamWOptimizer(options)) {}

  StringRef name() const override { return "adamw8bit"; }

  SmallVector<OptimizerStateSpec> stateSpecs(RankedTensorType param) const override {
    if (param.getNumElements() < kMin8bitElements)
      return fullPrecision->stateSpecs(param);
    MLIRContext *context = param.getContext();
    auto codes = param.clone(IntegerType::get(context, 8, IntegerType::Unsigned));
    int64_t blocks = (param.getNumElements() + kernels::kQuantizationBlock - 1) /
                     kernels::kQuantizationBlock;
    auto absmax = RankedTensorType::get({blocks}, Float32Type::get(context));
    return {{"exp_avg", codes},
            {"exp_avg_sq", codes},
            {"exp_avg.absmax", absmax},
            {"exp_avg_sq.absmax", absmax}};
  }

  SmallVector<plan::ScalarInput> scalarInputs() const override {
    return {plan::ScalarInput::LearningRate, plan::ScalarInput::StepNumber};
  }

  SmallVector<Value> buildUpdate(OpBuilder &b, Location loc,
                                 const ParameterUpdate &update) const override {
    ValueRange state = update.state;
    if (state.size() == 2) // f32 moments: a small tensor
      return fullPrecision->buildUpdate(b, loc, update);
    Value lr = update.scalar(plan::ScalarInput::LearningRate);
    Value step = update.scalar(plan::ScalarInput::StepNumber);
    FloatAttr decay = b.getF64FloatAttr(update.decays ? weightDecay : 0.0);
    auto op = b.create<AdamW8bitUpdateOp>(
        loc,
        TypeRange{update.param.getType(), state[0].getType(), state[1].getType(),
                  state[2].getType(), state[3].getType()},
        update.param, update.gradient, state[0], state[1], state[2], state[3], lr, step,
        update.gate, b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2), b.getF64FloatAttr(eps),
        decay);
    return {op.getNewParam(), op.getNewFirstMoment(), op.getNewSecondMoment(),
            op.getNewFirstAbsmax(), op.getNewSecondAbsmax()};
  }

private:
  double beta1, beta2, eps, weightDecay;
  /// AdamW itself, for tensors under kMin8bitElements.
  std::unique_ptr<Optimizer> fullPrecision;
};

} // namespace

std::unique_ptr<Optimizer> createAdamW8bitOptimizer(const OptimizerOptions &options) {
  return std::make_unique<AdamW8bitOptimizer>(options);
}

} // namespace memc
