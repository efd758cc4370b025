//===- MasterWeightsPass.cpp - the memc-master-weights pass ---------------===//
#include "compiler/pipeline/Passes.h"
#include "compiler/training/MasterWeights.h"
#include "dialects/memc/MemcDialect.h"

namespace memc {
#define GEN_PASS_DEF_MASTERWEIGHTS
#include "compiler/pipeline/Passes.h.inc"
} // namespace memc

namespace {

struct MasterWeightsPass : memc::impl::MasterWeightsBase<MasterWeightsPass> {
  void runOnOperation() override { memc::holdParametersInFloat32(getOperation()); }
};

} // namespace
