//===- ImportBudget.cpp - one bound on an import's work -------------------===//
#include "compiler/importer/ImportBudget.h"

namespace memc {

bool ImportBudget::spendUnrolledNodes(int64_t nodes, std::string &why) {
  unrolledNodes += nodes;
  if (unrolledNodes <= kMaxUnrolledNodes)
    return true;
  why = "unrolling it passes the " + std::to_string(kMaxUnrolledNodes) +
        " body nodes memc unrolls over all the model's Loops (nested Loops multiply their trip "
        "counts)";
  return false;
}

bool ImportBudget::spendFoldedElements(int64_t elements, std::string &why) {
  foldedElements += elements;
  if (foldedElements <= kMaxFoldedElements)
    return true;
  why = "folding it on the host passes the " + std::to_string(kMaxFoldedElements) +
        " constant elements memc computes at import over the whole model";
  return false;
}

} // namespace memc
