//===- NonFiniteScan.h - whether a stored tensor holds inf or NaN -*- C++ -*-===//
//
// The importer refuses parameters that hold an inf or a NaN (training from them goes nowhere),
// and the export checks skip such tensors as evidence. Both read the tensor through the weight
// index in chunks, so a multi-GB weight is never in memory whole.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_NONFINITESCAN_H
#define MEMC_COMPILER_IMPORTER_NONFINITESCAN_H

#include <string>

namespace memc {

class WeightStore;
struct StoredTensor;

/// Sets `result` to whether a floating-point tensor holds an inf or a NaN, reading it in chunks
/// (false for other types). Returns false with a message in `error` when it cannot be read.
bool holdsNonFiniteValue(const WeightStore &weights, const StoredTensor &tensor, bool &result,
                         std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_NONFINITESCAN_H
