//===- BuildTrainStep.cpp - the memc-build-train-step pass ----------------===//
#include "compiler/training/TrainStep.h"
#include "passes/Passes.h"

namespace memc {
#define GEN_PASS_DEF_BUILDTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

struct BuildTrainStepPass : memc::impl::BuildTrainStepBase<BuildTrainStepPass> {
  using BuildTrainStepBase::BuildTrainStepBase;

  void runOnOperation() override {
    TrainStepOptions options;
    std::optional<LossKind> lossKind = parseLossKind(loss);
    if (!lossKind) {
      getOperation().emitError("unknown loss '") << loss << "' (losses: cross_entropy, mse)";
      return signalPassFailure();
    }
    options.loss = *lossKind;
    options.lossInput = lossInput;
    options.labelsName = labels;
    options.ignoreIndex = ignoreIndex;
    options.freeze.assign(freeze.begin(), freeze.end());
    options.trainable.assign(trainable.begin(), trainable.end());
    OptimizerOptions &opt = options.optimizer;
    opt.name = optimizer;
    opt.momentum = momentum;
    opt.nesterov = nesterov;
    opt.weightDecay = weightDecay;
    opt.beta1 = beta1;
    opt.beta2 = beta2;
    opt.eps = eps;
    opt.clipGradNorm = clipGradNorm;
    if (failed(buildTrainStep(getOperation(), options)))
      signalPassFailure();
  }
};

} // namespace
