//===- BuildTrainStepPass.cpp - the memc-build-train-step pass ------------===//
#include "compiler/pipeline/Passes.h"
#include "dialects/memc/MemcDialect.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

namespace memc {
#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "compiler/pipeline/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

struct BuildTrainStepPass : memc::impl::BuildTrainStepBase<BuildTrainStepPass> {
  using BuildTrainStepBase::BuildTrainStepBase;
  explicit BuildTrainStepPass(const TrainStepOptions &options) : given(options) {}

  void runOnOperation() override {
    std::optional<TrainStepOptions> options = given ? given : fromPassOptions();
    if (!options)
      return signalPassFailure();
    if (failed(buildTrainStep(getOperation(), *options)))
      signalPassFailure();
  }

  /// The textual options (memc-opt's), or nothing after reporting a bad spelling.
  std::optional<TrainStepOptions> fromPassOptions() {
    TrainStepOptions options;
    std::optional<LossKind> lossKind = parseLossKind(loss);
    if (!lossKind) {
      getOperation().emitError("unknown loss '") << loss << "' (losses: cross_entropy, mse)";
      return std::nullopt;
    }
    options.loss = *lossKind;
    options.lossInput = lossInput;
    options.labelsName = labels;
    options.ignoreIndex = ignoreIndex;
    options.fuseLoss = fuseLoss;
    options.worldSize = worldSize;
    options.zeroStage = zeroStage;
    options.bucketCapMb = bucketCapMb;
    options.freeze.assign(freeze.begin(), freeze.end());
    options.noDecay.assign(noDecay.begin(), noDecay.end());
    options.noDecayNormsAndBiases = noDecayNormsAndBiases;
    options.trainable.assign(trainable.begin(), trainable.end());
    // The hyperparameters given; the others keep OptimizerOptions' defaults, the ones memc's
    // flags keep (AdamW's weight decay is 0.01 there, as torch.optim.AdamW's).
    OptimizerOptions &opt = options.optimizer;
    opt.name = optimizer;
    auto given = [](const auto &option, auto &field) {
      if (option.hasValue())
        field = option;
    };
    given(momentum, opt.momentum);
    given(nesterov, opt.nesterov);
    if (weightDecay.hasValue())
      opt.weightDecay = weightDecay;
    given(beta1, opt.beta1);
    given(beta2, opt.beta2);
    given(eps, opt.eps);
    opt.clipGradNorm = clipGradNorm;
    opt.logGradNorm = logGradNorm;
    opt.accumulationSteps = accumulationSteps;
    opt.tokenWeightedAccumulation = tokenWeightedAccumulation;
    if (lossScale != "none") {
      opt.lossScale.enabled = true;
      opt.lossScale.window = lossScaleWindow;
      if (lossScale != "dynamic") {
        opt.lossScale.dynamic = false;
        if (!llvm::to_float(lossScale, opt.lossScale.initialScale) ||
            !(opt.lossScale.initialScale > 0) || !std::isfinite(opt.lossScale.initialScale)) {
          getOperation().emitError("loss-scale must be none, dynamic or a positive number, got '")
              << lossScale << "'";
          return std::nullopt;
        }
      }
    }
    return options;
  }

  /// Set when the pipeline creates the pass; the textual options are then unused.
  std::optional<TrainStepOptions> given;
};

} // namespace

std::unique_ptr<Pass> memc::createBuildTrainStepPass(const TrainStepOptions &options) {
  return std::make_unique<BuildTrainStepPass>(options);
}
