//===- OnnxWriter.h - ONNX models with trained initializers ------*- C++ -*-===//
//
// A training program saves the model it trained as ONNX, for any ONNX consumer, without the
// runtime depending on the ONNX protobuf library: memc stores the source model without the
// trained initializers (a "template", a serialized ModelProto), and the writer adds each
// initializer back as a TensorProto it encodes itself. Only a handful of wire-format fields are
// involved:
//
//   ModelProto.graph = 7                 GraphProto.initializer = 5
//   TensorProto: dims = 1 (varint, repeated), data_type = 2, name = 8, raw_data = 9,
//                external_data = 13 (StringStringEntryProto {key = 1, value = 2}),
//                data_location = 14 (EXTERNAL = 1)
//
// The template's one graph field is rewritten with the initializers appended to its contents,
// so the result is a plain ModelProto with a single graph (readers that replace rather than
// merge repeated embedded messages see all of it).
//
// A protobuf cannot exceed 2 GiB. A model that would is written with its initializers as ONNX
// external data: PATH.data beside PATH holds their bytes, one after another, and each
// TensorProto names it (the file name, relative to the model's directory), its offset and length.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_ONNXWRITER_H
#define MEMC_RUNTIME_IO_ONNXWRITER_H

#include "runtime/support/DTypes.h"

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memc::runtime {

/// An initializer to write: a view of little-endian, row-major bytes the caller owns.
struct OnnxTensor {
  std::string name;
  /// onnx.TensorProto.DataType.
  int32_t dataType = 0;
  std::vector<int64_t> dims;
  std::string_view bytes;
};

/// The onnx.TensorProto.DataType of a memc element type (the dtype table's column); 0 for nf4,
/// which ONNX has no type for.
int32_t onnxDataType(DType dtype);
/// The memc element type of an ONNX data type; false for the types memc does not store.
bool dtypeFromOnnx(int32_t dataType, DType &out);

/// The largest protobuf ONNX readers parse: 2 GiB - 1 bytes.
constexpr uint64_t kMaxOnnxProtobufBytes = INT32_MAX;

struct OnnxWriteOptions {
  /// A model larger than this as one protobuf keeps its initializers in PATH.data instead.
  uint64_t maxEmbeddedBytes = kMaxOnnxProtobufBytes;
};

/// The file beside model `path` that holds its initializers when they do not fit in it.
inline std::string onnxExternalDataPath(const std::string &path) { return path + ".data"; }

/// Writes PATH: the ModelProto `templateBytes` with `initializers` added to its graph, each
/// checked (a name, a memc data type, bytes matching its dims). Written atomically; with
/// external data, PATH.data is written (atomically) first. False with a message.
bool writeOnnxModel(const std::string &path, std::string_view templateBytes,
                    const std::vector<OnnxTensor> &initializers, const OnnxWriteOptions &options,
                    std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_ONNXWRITER_H
