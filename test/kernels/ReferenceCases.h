//===- ReferenceCases.h - the PyTorch reference cases ------------*- C++ -*-===//
#ifndef MEMC_TEST_KERNELS_REFERENCECASES_H
#define MEMC_TEST_KERNELS_REFERENCECASES_H

#include "KernelTestSupport.h"

#include <ostream>
#include <set>

namespace memc::kernels::testing {

/// One kernel call with PyTorch's outputs, as make_references.py wrote it.
struct ReferenceCase {
  std::string name, kernel;
  Attributes attributes;
  std::vector<OwnedTensor> inputs, outputs;
  double rtol = -1, atol = -1; // negative: the default for the output's dtype
};

inline void PrintTo(const ReferenceCase &c, std::ostream *os) { *os << c.name; }

/// Every case of references.txt, read once: the file $MEMC_KERNEL_REFERENCES names, or the
/// source tree's (the path compiled in), so that a copy of a test binary on another machine
/// (tools/gpu-check.sh) finds a copy of the file.
const std::vector<ReferenceCase> &references();

/// The CPU kernels' tolerance for an output of `dtype`: the case's own (its `tol` record) for
/// floating types where it has one; exact for integers and booleans.
void referenceTolerance(const ReferenceCase &c, DType dtype, double &rtol, double &atol);

/// Kernels that may run with the output in an input's buffer (elementwise, and row-wise ones
/// that read a whole row or channel before writing it).
const std::set<std::string> &inPlaceKernels();

/// An input the output can share a buffer with: same shape, same element size.
bool canAlias(const OwnedTensor &input, const OwnedTensor &output);

/// The cases of in-place kernels with an input their first output can share a buffer with.
std::vector<ReferenceCase> inPlaceCases();

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_REFERENCECASES_H
