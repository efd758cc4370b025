//===- OnnxWriter.cpp - ONNX models with trained initializers -------------===//
#include "runtime/io/OnnxWriter.h"
#include "runtime/io/Files.h"
#include "runtime/support/Bytes.h"

#include <algorithm>
#include <set>

namespace memc::runtime {
namespace {

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorDims = 1;
constexpr uint32_t kTensorDataType = 2;
constexpr uint32_t kTensorName = 8;
constexpr uint32_t kTensorRawData = 9;
constexpr uint32_t kTensorExternalData = 13;
constexpr uint32_t kTensorDataLocation = 14;
constexpr uint32_t kEntryKey = 1;
constexpr uint32_t kEntryValue = 2;
constexpr uint64_t kDataLocationExternal = 1;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void appendVarint(std::string &out, uint64_t value) {
  for (; value >= 0x80; value >>= 7)
    out.push_back(static_cast<char>(value | 0x80));
  out.push_back(static_cast<char>(value));
}

size_t varintSize(uint64_t value) {
  size_t size = 1;
  for (; value >= 0x80; value >>= 7)
    ++size;
  return size;
}

void appendTag(std::string &out, uint32_t field, WireType type) {
  appendVarint(out, (static_cast<uint64_t>(field) << 3) | type);
}

void appendVarintField(std::string &out, uint32_t field, uint64_t value) {
  appendTag(out, field, kVarint);
  appendVarint(out, value);
}

/// The tag and length of a length-delimited field; its `length` bytes follow.
void appendLengthPrefix(std::string &out, uint32_t field, uint64_t length) {
  appendTag(out, field, kLengthDelimited);
  appendVarint(out, length);
}

void appendBytesField(std::string &out, uint32_t field, std::string_view bytes) {
  appendLengthPrefix(out, field, bytes.size());
  out.append(bytes);
}

bool readVarint(std::string_view bytes, size_t &pos, uint64_t &out) {
  out = 0;
  for (unsigned shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
    auto byte = static_cast<uint8_t>(bytes[pos++]);
    out |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

/// The template's graph field: [begin, end) of the template is the whole field (tag, length,
/// contents); `contents` is the serialized GraphProto.
struct GraphField {
  size_t begin = 0;
  size_t end = 0;
  std::string_view contents;
};

/// Walks the template's top-level fields to its one graph field.
bool findGraphField(std::string_view model, GraphField &graph, std::string &error) {
  bool found = false;
  for (size_t pos = 0; pos < model.size();) {
    size_t begin = pos;
    uint64_t tag = 0, length = 0;
    if (!readVarint(model, pos, tag) || (tag >> 3) == 0) {
      error = "the ONNX template is not a serialized ModelProto (bad field at byte " +
              std::to_string(begin) + ")";
      return false;
    }
    switch (tag & 7) {
    case kVarint:
      if (!readVarint(model, pos, length)) {
        error = "the ONNX template is truncated";
        return false;
      }
      length = 0;
      break;
    case kFixed64:
      length = 8;
      break;
    case kFixed32:
      length = 4;
      break;
    case kLengthDelimited:
      if (!readVarint(model, pos, length)) {
        error = "the ONNX template is truncated";
        return false;
      }
      break;
    default:
      error = "the ONNX template is not a serialized ModelProto (wire type " +
              std::to_string(tag & 7) + " at byte " + std::to_string(begin) + ")";
      return false;
    }
    if (length > model.size() - pos) {
      error = "the ONNX template is truncated";
      return false;
    }
    if ((tag >> 3) == kModelGraph && (tag & 7) == kLengthDelimited) {
      if (found) {
        error = "the ONNX template has more than one graph field";
        return false;
      }
      found = true;
      graph = {begin, pos + length, model.substr(pos, length)};
    }
    pos += length;
  }
  if (!found)
    error = "the ONNX template has no graph";
  return found;
}

bool checkTensors(const std::vector<OnnxTensor> &tensors, std::string &error) {
  std::set<std::string_view> names;
  for (const OnnxTensor &tensor : tensors) {
    DType dtype;
    uint64_t size = 0;
    if (tensor.name.empty() || !names.insert(tensor.name).second) {
      error = tensor.name.empty() ? "an ONNX initializer without a name"
                                  : "the ONNX initializer '" + tensor.name + "' is given twice";
      return false;
    }
    if (!dtypeFromOnnx(tensor.dataType, dtype)) {
      error = "the ONNX initializer '" + tensor.name + "' has data type " +
              std::to_string(tensor.dataType) + ", which memc does not compute with";
      return false;
    }
    if (!checkedSizeBytes(dtype, tensor.dims, size) || size != tensor.bytes.size()) {
      error = "the ONNX initializer '" + tensor.name + "' is " + dtypeString(dtype) +
              shapeString(tensor.dims) + " but has " + std::to_string(tensor.bytes.size()) +
              " bytes";
      return false;
    }
  }
  return true;
}

/// A TensorProto without its data: dims, data type and name.
std::string tensorHeader(const OnnxTensor &tensor) {
  std::string out;
  for (int64_t dim : tensor.dims)
    appendVarintField(out, kTensorDims, static_cast<uint64_t>(dim));
  appendVarintField(out, kTensorDataType, static_cast<uint64_t>(tensor.dataType));
  appendBytesField(out, kTensorName, tensor.name);
  return out;
}

/// The initializer field of a tensor whose bytes follow as raw_data (the last field).
std::string embeddedEntry(const OnnxTensor &tensor) {
  std::string proto = tensorHeader(tensor);
  appendLengthPrefix(proto, kTensorRawData, tensor.bytes.size());
  std::string entry;
  appendLengthPrefix(entry, kGraphInitializer, proto.size() + tensor.bytes.size());
  return entry + proto;
}

void appendStringEntry(std::string &out, std::string_view key, std::string_view value) {
  std::string entry;
  appendBytesField(entry, kEntryKey, key);
  appendBytesField(entry, kEntryValue, value);
  appendBytesField(out, kTensorExternalData, entry);
}

/// The initializer field of a tensor whose bytes lie in the external data file `location`.
std::string externalEntry(const OnnxTensor &tensor, const std::string &location, uint64_t offset) {
  std::string proto = tensorHeader(tensor);
  appendStringEntry(proto, "location", location);
  appendStringEntry(proto, "offset", std::to_string(offset));
  appendStringEntry(proto, "length", std::to_string(tensor.bytes.size()));
  appendVarintField(proto, kTensorDataLocation, kDataLocationExternal);
  std::string entry;
  appendBytesField(entry, kGraphInitializer, proto);
  return entry;
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Writes the tensors' bytes one after another to `path`.
bool writeExternalData(const std::string &path, const std::vector<OnnxTensor> &tensors,
                       std::string &error) {
  std::vector<std::string_view> parts;
  for (const OnnxTensor &tensor : tensors)
    parts.push_back(tensor.bytes);
  return writeFileAtomically(path, parts, 0644, error);
}

} // namespace

int32_t onnxDataType(DType dtype) {
  const kernels::DTypeInfo *row = kernels::findDType(dtype);
  return row ? row->onnxDataType : 0;
}

bool dtypeFromOnnx(int32_t dataType, DType &out) {
  const kernels::DTypeInfo *row = kernels::findOnnxDType(dataType);
  if (row)
    out = row->dtype;
  return row != nullptr;
}

bool writeOnnxModel(const std::string &path, std::string_view templateBytes,
                    const std::vector<OnnxTensor> &initializers, const OnnxWriteOptions &options,
                    std::string &error) {
  GraphField graph;
  if (!findGraphField(templateBytes, graph, error) || !checkTensors(initializers, error))
    return false;

  std::vector<std::string> entries;
  uint64_t graphBytes = graph.contents.size();
  for (const OnnxTensor &tensor : initializers) {
    entries.push_back(embeddedEntry(tensor));
    graphBytes += entries.back().size() + tensor.bytes.size();
  }
  auto modelBytes = [&] {
    return templateBytes.size() - (graph.end - graph.begin) + varintSize(kModelGraph << 3) +
           varintSize(graphBytes) + graphBytes;
  };
  bool external = modelBytes() > std::min(options.maxEmbeddedBytes, kMaxOnnxProtobufBytes);
  if (external) {
    std::string location = baseName(path) + ".data";
    uint64_t offset = 0;
    graphBytes = graph.contents.size();
    for (size_t i = 0; i < initializers.size(); ++i) {
      entries[i] = externalEntry(initializers[i], location, offset);
      offset += initializers[i].bytes.size();
      graphBytes += entries[i].size();
    }
  }
  if (modelBytes() > kMaxOnnxProtobufBytes) {
    // Only the template can be this large: the initializers' bytes are in PATH.data.
    error = "cannot write '" + path + "': even with its initializers in " + path +
            ".data, the ONNX model would be " + formatBytes(modelBytes()) +
            ", more than a protobuf can hold (2 GiB)";
    return false;
  }
  if (external && !writeExternalData(onnxExternalDataPath(path), initializers, error))
    return false;

  std::string graphPrefix;
  appendLengthPrefix(graphPrefix, kModelGraph, graphBytes);
  std::vector<std::string_view> parts = {templateBytes.substr(0, graph.begin), graphPrefix,
                                         graph.contents};
  for (size_t i = 0; i < initializers.size(); ++i) {
    parts.push_back(entries[i]);
    if (!external)
      parts.push_back(initializers[i].bytes);
  }
  parts.push_back(templateBytes.substr(graph.end));
  return writeFileAtomically(path, parts, 0644, error);
}

} // namespace memc::runtime
