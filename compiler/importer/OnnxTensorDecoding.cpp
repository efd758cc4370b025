//===- OnnxTensorDecoding.cpp - ONNX element types and tensor decoding ----===//
#include "compiler/importer/NodeImporter.h"
#include "compiler/importer/OnnxTypes.h"
#include "dialects/memc/ElementTypes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Endian.h"

#include <limits>

using namespace mlir;

namespace memc {

Type elementTypeFor(MLIRContext *context, int32_t onnxDataType) {
  const kernels::DTypeInfo *row = kernels::findOnnxDType(onnxDataType);
  return row && row->computed ? elementTypeOf(row->dtype, context) : nullptr;
}

namespace {

double halfToDouble(uint16_t bits, const llvm::fltSemantics &semantics) {
  llvm::APFloat value(semantics, llvm::APInt(16, bits));
  return value.convertToDouble();
}

FailureOr<int64_t> checkedElementCount(ArrayRef<int64_t> shape, std::string &error) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && count > std::numeric_limits<int64_t>::max() / dim)) {
      error = "invalid tensor shape";
      return failure();
    }
    count *= dim;
  }
  if (count > kMaxHostElements) {
    error = "constant has " + std::to_string(count) + " elements, more than memc folds";
    return failure();
  }
  return count;
}

} // namespace

FailureOr<HostTensor> decodeRawTensor(int32_t dataType, ArrayRef<int64_t> shape,
                                      ArrayRef<char> bytes, std::string &error) {
  FailureOr<int64_t> count = checkedElementCount(shape, error);
  if (failed(count))
    return failure();
  size_t size = onnxElementSize(dataType);
  if (size == 0) {
    error = "cannot decode a constant of type " + onnxDataTypeName(dataType);
    return failure();
  }
  if (bytes.size() != size * static_cast<size_t>(*count)) {
    error = "constant holds " + std::to_string(bytes.size()) + " bytes, its shape needs " +
            std::to_string(size * *count);
    return failure();
  }
  using namespace llvm::support;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  const char *data = bytes.data();
  for (int64_t i = 0; i < *count; ++i) {
    const char *p = data + i * size;
    switch (dataType) {
    case onnx::TensorProto::FLOAT:
      floats.push_back(llvm::bit_cast<float>(endian::read32le(p)));
      break;
    case onnx::TensorProto::DOUBLE:
      floats.push_back(llvm::bit_cast<double>(endian::read64le(p)));
      break;
    case onnx::TensorProto::FLOAT16:
      floats.push_back(halfToDouble(endian::read16le(p), llvm::APFloat::IEEEhalf()));
      break;
    case onnx::TensorProto::BFLOAT16:
      floats.push_back(halfToDouble(endian::read16le(p), llvm::APFloat::BFloat()));
      break;
    case onnx::TensorProto::INT64:
      ints.push_back(static_cast<int64_t>(endian::read64le(p)));
      break;
    case onnx::TensorProto::INT32:
      ints.push_back(static_cast<int32_t>(endian::read32le(p)));
      break;
    case onnx::TensorProto::INT16:
      ints.push_back(static_cast<int16_t>(endian::read16le(p)));
      break;
    case onnx::TensorProto::INT8:
      ints.push_back(static_cast<int8_t>(*p));
      break;
    default: // BOOL, UINT8
      ints.push_back(static_cast<uint8_t>(*p));
      break;
    }
  }
  std::vector<int64_t> dims(shape.begin(), shape.end());
  if (dataType == onnx::TensorProto::FLOAT || dataType == onnx::TensorProto::DOUBLE ||
      dataType == onnx::TensorProto::FLOAT16 || dataType == onnx::TensorProto::BFLOAT16)
    return HostTensor::ofFloats(dataType, std::move(dims), std::move(floats));
  return HostTensor::ofInts(dataType, std::move(dims), std::move(ints));
}

FailureOr<HostTensor> decodeTensorProto(const onnx::TensorProto &tensor, std::string &error) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    error = "constants with external data are not supported";
    return failure();
  }
  std::vector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    return decodeRawTensor(tensor.data_type(), shape, ArrayRef<char>(raw.data(), raw.size()),
                           error);
  }
  // Typed fields: widen into the host tensor's storage directly.
  FailureOr<int64_t> count = checkedElementCount(shape, error);
  if (failed(count))
    return failure();
  auto sizeMismatch = [&](int fieldSize) {
    if (fieldSize == *count)
      return false;
    error = "constant holds " + std::to_string(fieldSize) + " values, its shape needs " +
            std::to_string(*count);
    return true;
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (sizeMismatch(tensor.float_data_size()))
      return failure();
    return HostTensor::ofFloats(tensor.data_type(), shape,
                                {tensor.float_data().begin(), tensor.float_data().end()});
  case onnx::TensorProto::DOUBLE:
    if (sizeMismatch(tensor.double_data_size()))
      return failure();
    return HostTensor::ofFloats(tensor.data_type(), shape,
                                {tensor.double_data().begin(), tensor.double_data().end()});
  case onnx::TensorProto::INT64:
    if (sizeMismatch(tensor.int64_data_size()))
      return failure();
    return HostTensor::ofInts(tensor.data_type(), shape,
                              {tensor.int64_data().begin(), tensor.int64_data().end()});
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    if (sizeMismatch(tensor.int32_data_size()))
      return failure();
    return HostTensor::ofInts(tensor.data_type(), shape,
                              {tensor.int32_data().begin(), tensor.int32_data().end()});
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    if (sizeMismatch(tensor.int32_data_size()))
      return failure();
    const auto &semantics = tensor.data_type() == onnx::TensorProto::FLOAT16
                                ? llvm::APFloat::IEEEhalf()
                                : llvm::APFloat::BFloat();
    std::vector<double> values;
    for (int32_t bits : tensor.int32_data())
      values.push_back(halfToDouble(static_cast<uint16_t>(bits), semantics));
    return HostTensor::ofFloats(tensor.data_type(), shape, std::move(values));
  }
  default:
    error = "cannot decode a constant of type " + onnxDataTypeName(tensor.data_type());
    return failure();
  }
}

} // namespace memc
