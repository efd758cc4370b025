//===- OnnxTypes.h - facts about ONNX data types and domains ----*- C++ -*-===//
//
// What the weight index, the host-side constant folder, the export checks and the importer all
// ask of an ONNX data type number, answered from kernels' dtype table (plus DOUBLE and INT16,
// which memc reads and narrows on the host but does not compute in). No MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_ONNXTYPES_H
#define MEMC_COMPILER_IMPORTER_ONNXTYPES_H

#include <cstdint>
#include <string>

namespace memc {

/// Size in bytes of one element of an ONNX data type (the dtype table's, and DOUBLE and INT16,
/// which the importer reads); 0 if memc cannot store it.
uint64_t onnxElementSize(int32_t dataType);
/// Whether an ONNX data type is a floating-point one (the dtype table's, and DOUBLE).
bool isFloatingOnnxType(int32_t dataType);
/// The name of an ONNX data type for messages ("INT64"; "data type N" when it has none).
std::string onnxDataTypeName(int32_t dataType);
/// Whether an operator-set domain is ONNX's own ("" or "ai.onnx").
inline bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_ONNXTYPES_H
