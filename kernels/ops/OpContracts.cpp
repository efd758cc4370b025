//===- OpContracts.cpp - every op's check ---------------------------------===//
#include "kernels/ops/OpContracts.h"

#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {

const OpChecks &opChecks() {
  static const OpChecks checks = [] {
    OpChecks table;
    addUnaryChecks(table);
    addBinaryChecks(table);
    addMatMulChecks(table);
    addNormalizationChecks(table);
    addReductionChecks(table);
    addScanChecks(table);
    addSelectionChecks(table);
    addLayoutChecks(table);
    addConvolutionChecks(table);
    addPoolingChecks(table);
    addAttentionChecks(table);
    addActivationBackwardChecks(table);
    addNormalizationBackwardChecks(table);
    addIndexingBackwardChecks(table);
    addConvolutionBackwardChecks(table);
    addPoolingBackwardChecks(table);
    addLossChecks(table);
    addOptimizerChecks(table);
    addLossScaleChecks(table);
    addCollectiveChecks(table);
    return table;
  }();
  return checks;
}

} // namespace memc::kernels
