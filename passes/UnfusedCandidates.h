//===- UnfusedCandidates.h - why a fusion left a candidate as it was -*- C++ -*-===//
//
// The fusion passes (attention, loss) record on the function which candidates they left
// unfused and why, as an array of [node, reason] string pairs, where the pipeline finds it for
// the memory report and lit tests see it. One encoding for both.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_UNFUSEDCANDIDATES_H
#define MEMC_PASSES_UNFUSEDCANDIDATES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <optional>
#include <string>
#include <vector>

namespace memc {

/// A candidate a fusion left as it was, and why.
struct UnfusedCandidate {
  std::string node;
  std::string reason;
};

/// The candidates as an array of [node, reason] pairs.
mlir::ArrayAttr unfusedCandidatesAttr(mlir::Builder &b,
                                      const std::vector<UnfusedCandidate> &candidates);

/// What unfusedCandidatesAttr wrote, or nothing where `pairs` is not such an array.
std::optional<std::vector<UnfusedCandidate>> readUnfusedCandidates(mlir::ArrayAttr pairs);

} // namespace memc

#endif // MEMC_PASSES_UNFUSEDCANDIDATES_H
