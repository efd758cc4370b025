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
    if (loss == "mse") {
      options.loss = LossKind::MeanSquaredError;
    } else if (loss != "cross_entropy") {
      getOperation().emitError("unknown loss '") << loss << "' (cross_entropy or mse)";
      return signalPassFailure();
    }
    options.lossInput = lossInput;
    options.labelsName = labels;
    options.ignoreIndex = ignoreIndex;
    options.freeze.assign(freeze.begin(), freeze.end());
    options.trainable.assign(trainable.begin(), trainable.end());
    if (failed(buildTrainStep(getOperation(), options)))
      signalPassFailure();
  }
};

} // namespace
