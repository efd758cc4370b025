//===- MasterWeightsPass.cpp - the memc-master-weights pass ---------------===//
#include "compiler/pipeline/Passes.h"
#include "compiler/training/MasterWeights.h"
#include "compiler/training/TrainStep.h"
#include "dialects/memc/MemcDialect.h"

namespace memc {
#define GEN_PASS_DEF_MASTERWEIGHTS
#include "compiler/pipeline/Passes.h.inc"
} // namespace memc

namespace {

struct MasterWeightsPass : memc::impl::MasterWeightsBase<MasterWeightsPass> {
  using MasterWeightsBase::MasterWeightsBase;

  void runOnOperation() override {
    memc::TrainStepOptions selection;
    selection.freeze.assign(freeze.begin(), freeze.end());
    selection.trainable.assign(trainable.begin(), trainable.end());
    // The training step reports globs that match nothing.
    mlir::FailureOr<llvm::SmallVector<bool>> trained =
        memc::selectTrainable(getOperation(), selection, /*reportUnmatched=*/false);
    if (mlir::failed(trained))
      return signalPassFailure();
    memc::holdParametersInFloat32(getOperation(), *trained);
  }
};

} // namespace
