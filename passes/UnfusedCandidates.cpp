//===- UnfusedCandidates.cpp - why a fusion left a candidate as it was ----===//
#include "passes/UnfusedCandidates.h"

using namespace mlir;

namespace memc {

ArrayAttr unfusedCandidatesAttr(Builder &b, const std::vector<UnfusedCandidate> &candidates) {
  SmallVector<Attribute> pairs;
  for (const UnfusedCandidate &candidate : candidates)
    pairs.push_back(b.getStrArrayAttr({StringRef(candidate.node), StringRef(candidate.reason)}));
  return b.getArrayAttr(pairs);
}

std::optional<std::vector<UnfusedCandidate>> readUnfusedCandidates(ArrayAttr pairs) {
  std::vector<UnfusedCandidate> candidates;
  for (Attribute entry : pairs) {
    auto pair = dyn_cast<ArrayAttr>(entry);
    if (!pair || pair.size() != 2 || !isa<StringAttr>(pair[0]) || !isa<StringAttr>(pair[1]))
      return std::nullopt;
    candidates.push_back({cast<StringAttr>(pair[0]).str(), cast<StringAttr>(pair[1]).str()});
  }
  return candidates;
}

} // namespace memc
