//===- OpContracts.h - what every device's kernel of an op shares -*- C++ -*-===//
//
// An op's contract is the check of its calls: the operand and result counts, dtypes and shapes
// (the ODS constraints and shape rules of the memc dialect, kernels/ShapeRules.h) and its
// attributes. It is the op's, not a device's, so a plan that one device's loader accepts every
// device's accepts, and a new device writes no checks. Checks are plain C++ without any
// kernel library, grouped in files as the kernels are (CheckGroups.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_OPS_OPCONTRACTS_H
#define MEMC_KERNELS_OPS_OPCONTRACTS_H

#include "kernels/Kernel.h"

#include <map>
#include <string>

namespace memc::kernels {

/// Every op's check, by kernel name.
using OpChecks = std::map<std::string, KernelCheck>;
const OpChecks &opChecks();

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_OPCONTRACTS_H
