//===- LowRankAdaptersPass.cpp - the memc-lora pass -----------------------===//
#include "compiler/pipeline/Passes.h"
#include "compiler/training/LowRankAdapters.h"
#include "dialects/memc/MemcDialect.h"

namespace memc {
#define GEN_PASS_DEF_LOWRANKADAPTERS
#include "compiler/pipeline/Passes.h.inc"
} // namespace memc

namespace {

struct LowRankAdaptersPass : memc::impl::LowRankAdaptersBase<LowRankAdaptersPass> {
  using LowRankAdaptersBase::LowRankAdaptersBase;

  void runOnOperation() override {
    if (getOperation().getSymName() != "forward")
      return;
    if (quantizeBase != "none" && quantizeBase != "nf4") {
      getOperation().emitError() << "quantize-base must be none or nf4, got '" << quantizeBase
                                 << "'";
      return signalPassFailure();
    }
    memc::LoraOptions options;
    options.rank = rank;
    options.alpha = alpha;
    options.dropout = dropout;
    options.targets.assign(targets.begin(), targets.end());
    options.quantizeNf4 = quantizeBase == "nf4";
    options.doubleQuantization = doubleQuantization;
    options.alsoTrainable.assign(trainable.begin(), trainable.end());
    if (mlir::failed(memc::addLowRankAdapters(getOperation(), options)))
      signalPassFailure();
  }
};

} // namespace
