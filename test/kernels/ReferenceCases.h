//===- ReferenceCases.h - the PyTorch reference cases ------------*- C++ -*-===//
#ifndef MEMC_TEST_KERNELS_REFERENCECASES_H
#define MEMC_TEST_KERNELS_REFERENCECASES_H

#include "KernelTestSupport.h"

#include <ostream>

namespace memc::kernels::testing {

/// One kernel call with PyTorch's outputs, as make_references.py wrote it.
struct ReferenceCase {
  std::string name, kernel;
  Attributes attributes;
  std::vector<OwnedTensor> inputs, outputs;
  double rtol = -1, atol = -1; // negative: the default for the output's dtype
};

inline void PrintTo(const ReferenceCase &c, std::ostream *os) { *os << c.name; }

/// Every case of references.txt, read once.
const std::vector<ReferenceCase> &references();

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_REFERENCECASES_H
