//===- OnnxTypes.cpp - facts about ONNX data types ------------------------===//
#include "compiler/importer/OnnxTypes.h"
#include "kernels/DTypeTable.h"

#include <onnx/onnx_pb.h>

namespace memc {

uint64_t onnxElementSize(int32_t dataType) {
  if (const kernels::DTypeInfo *row = kernels::findOnnxDType(dataType))
    return kernels::dtypeSize(row->dtype);
  // Not memc types, but read: the importer folds or narrows them on the host.
  if (dataType == onnx::TensorProto::DOUBLE)
    return 8;
  if (dataType == onnx::TensorProto::INT16)
    return 2;
  return 0;
}

std::string onnxDataTypeName(int32_t onnxDataType) {
  if (onnx::TensorProto::DataType_IsValid(onnxDataType))
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnxDataType));
  return "data type " + std::to_string(onnxDataType);
}

bool isFloatingOnnxType(int32_t dataType) {
  const kernels::DTypeInfo *row = kernels::findOnnxDType(dataType);
  return (row && row->kind == kernels::DTypeKind::Float) || dataType == onnx::TensorProto::DOUBLE;
}

} // namespace memc
