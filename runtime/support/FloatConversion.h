//===- FloatConversion.h - f32 <-> f16 / bf16 at the file boundary -*- C++ -*-===//
//
// A 16-bit model trains on f32 master weights: its 16-bit initializers widen into the program's
// weights, and `--save OUT.onnx` narrows the trained f32 values back to the model's types.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_FLOATCONVERSION_H
#define MEMC_RUNTIME_SUPPORT_FLOATCONVERSION_H

#include "runtime/support/DTypes.h"

#include <cstdint>
#include <vector>

namespace memc::runtime {

/// Whether `convertFloats` converts between `from` and `to` (f32, f16 and bf16).
bool convertibleFloats(DType from, DType to);

/// `bytes` (elements of `from`) as elements of `to`: exact when widening, rounded to nearest
/// even when narrowing (kernels/Float16.h). `from` and `to` must be convertibleFloats.
std::vector<uint8_t> convertFloats(DType from, const uint8_t *bytes, uint64_t count, DType to);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_FLOATCONVERSION_H
