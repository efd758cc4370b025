//===- WeightStore.cpp - where a model's initializers live ------*- C++ -*-===//
//
// The parsed ModelProto tells us each initializer's type, shape and data, but not where in the
// .onnx file its raw_data bytes lie. To read weights lazily we re-walk the file's protobuf wire
// format along ModelProto.graph (7) -> GraphProto.initializer (5) -> TensorProto.name (8) /
// raw_data (9), skipping every payload by seeking, and match what we find to the parsed
// initializers by position and name. External data is resolved and checked against its file;
// the rare tensors stored in typed fields are converted to little-endian bytes up front.
//
//===----------------------------------------------------------------------===//

#include "compiler/importer/WeightStore.h"
#include "compiler/importer/OnnxTypes.h"
#include "kernels/DTypeTable.h"
#include "runtime/io/Files.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

namespace fs = std::filesystem;

namespace memc {

namespace {

//===----------------------------------------------------------------------===//
// Reading the file's wire format
//===----------------------------------------------------------------------===//

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
enum WireType : uint64_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kGroupStart = 3,
  kGroupEnd = 4,
  kFixed32 = 5,
};

// Field numbers on the path from ModelProto to an initializer's bytes (onnx.proto).
constexpr uint64_t kModelGraph = 7;
constexpr uint64_t kGraphInitializer = 5;
constexpr uint64_t kTensorName = 8;
constexpr uint64_t kTensorRawData = 9;

constexpr uint64_t kMaxFieldNumber = (uint64_t(1) << 29) - 1;

/// Where one initializer's raw_data lies in the model file.
struct ScannedInitializer {
  std::string name;
  bool hasRawData = false;
  uint64_t rawOffset = 0;
  uint64_t rawLength = 0;
};

/// Reads a file forward through a small window. Skipping only moves the position, so payloads
/// the scanner is not interested in (all the weights) are never read.
class FileCursor {
public:
  ~FileCursor() {
    if (fd >= 0)
      ::close(fd);
  }

  bool open(const std::string &path, std::string &error) {
    fd = runtime::openRegularFileForReading(path, error);
    struct stat info;
    if (fd < 0 || fstat(fd, &info) != 0)
      return false;
    fileSize = static_cast<uint64_t>(info.st_size);
    return true;
  }

  uint64_t size() const { return fileSize; }
  uint64_t position() const { return pos; }
  void skipTo(uint64_t newPos) { pos = newPos; }

  /// False past the end of the file or on a read error.
  bool readByte(uint8_t &byte) {
    if (pos < windowStart || pos >= windowStart + windowLength) {
      if (!fill())
        return false;
    }
    byte = static_cast<uint8_t>(window[pos - windowStart]);
    ++pos;
    return true;
  }

private:
  bool fill() {
    if (pos >= fileSize)
      return false;
    uint64_t want = std::min<uint64_t>(window.size(), fileSize - pos);
    windowStart = pos;
    windowLength = runtime::readAt(fd, pos, window.data(), want);
    return windowLength > 0;
  }

  int fd = -1;
  uint64_t fileSize = 0;
  uint64_t pos = 0;
  uint64_t windowStart = 0;
  uint64_t windowLength = 0;
  std::vector<char> window = std::vector<char>(64 * 1024);
};

/// Walks ModelProto -> graph -> initializer -> {name, raw_data}. Every read is bounded by the
/// end of the enclosing message, and every loop iteration consumes at least one byte, so a
/// malformed file ends in an error, never in a crash or a hang. Like protobuf's parser, a
/// repeated `graph` field merges (its initializers append), a repeated name or raw_data keeps
/// the last one, and a known field with an unexpected wire type is skipped as unknown.
class InitializerScanner {
public:
  explicit InitializerScanner(FileCursor &source) : cursor(source) {}

  bool scan(std::vector<ScannedInitializer> &out) {
    return forEachField(cursor.size(), [&](uint64_t field, uint64_t wireType, uint64_t end) {
      if (field != kModelGraph || wireType != kLengthDelimited)
        return skipField(wireType, end);
      return enterMessage(end, [&](uint64_t graphEnd) { return scanGraph(graphEnd, out); });
    });
  }

  const std::string &failure() const { return why; }
  uint64_t failureOffset() const { return whereFailed; }

private:
  bool scanGraph(uint64_t end, std::vector<ScannedInitializer> &out) {
    return forEachField(end, [&](uint64_t field, uint64_t wireType, uint64_t graphEnd) {
      if (field != kGraphInitializer || wireType != kLengthDelimited)
        return skipField(wireType, graphEnd);
      out.emplace_back();
      return enterMessage(graphEnd,
                          [&](uint64_t tensorEnd) { return scanTensor(tensorEnd, out.back()); });
    });
  }

  bool scanTensor(uint64_t end, ScannedInitializer &tensor) {
    return forEachField(end, [&](uint64_t field, uint64_t wireType, uint64_t tensorEnd) {
      if (wireType != kLengthDelimited || (field != kTensorName && field != kTensorRawData))
        return skipField(wireType, tensorEnd);
      uint64_t length = 0;
      if (!readLength(tensorEnd, length))
        return false;
      if (field == kTensorName)
        return readString(length, tensor.name);
      tensor.hasRawData = true;
      tensor.rawOffset = cursor.position();
      tensor.rawLength = length;
      cursor.skipTo(cursor.position() + length);
      return true;
    });
  }

  /// Calls `onField(field, wireType, end)` for each field until `end`; `onField` must consume
  /// the field's payload.
  template <typename OnField> bool forEachField(uint64_t end, OnField onField) {
    while (cursor.position() < end) {
      uint64_t tag = 0;
      if (!readVarint(end, tag))
        return false;
      uint64_t field = tag >> 3;
      if (field == 0 || field > kMaxFieldNumber)
        return fail("invalid field number " + std::to_string(field));
      if (!onField(field, tag & 7, end))
        return false;
    }
    return true;
  }

  /// Reads a length prefix and runs `body(messageEnd)` over the embedded message.
  template <typename Body> bool enterMessage(uint64_t end, Body body) {
    uint64_t length = 0;
    if (!readLength(end, length))
      return false;
    return body(cursor.position() + length);
  }

  bool skipField(uint64_t wireType, uint64_t end) {
    uint64_t ignored = 0;
    switch (wireType) {
    case kVarint:
      return readVarint(end, ignored);
    case kFixed64:
      return skipBytes(8, end);
    case kFixed32:
      return skipBytes(4, end);
    case kLengthDelimited:
      if (!readLength(end, ignored))
        return false;
      cursor.skipTo(cursor.position() + ignored);
      return true;
    case kGroupStart:
    case kGroupEnd:
      // ONNX has no groups; accepting them would mean tracking nesting for no benefit.
      return fail("group fields (wire types 3/4) are not supported");
    default:
      return fail("invalid wire type " + std::to_string(wireType));
    }
  }

  bool readVarint(uint64_t end, uint64_t &value) {
    value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t byte = 0;
      if (cursor.position() >= end || !cursor.readByte(byte))
        return fail("varint runs past the end of its message");
      // The 10th byte may only carry the top bit of a 64-bit value.
      if (shift == 63 && byte > 1)
        return fail("varint overflows 64 bits");
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return fail("varint overflows 64 bits");
  }

  bool readLength(uint64_t end, uint64_t &length) {
    if (!readVarint(end, length))
      return false;
    if (length > end - cursor.position())
      return fail("length " + std::to_string(length) + " runs past the end of its message");
    return true;
  }

  bool skipBytes(uint64_t count, uint64_t end) {
    if (count > end - cursor.position())
      return fail("fixed-width field runs past the end of its message");
    cursor.skipTo(cursor.position() + count);
    return true;
  }

  bool readString(uint64_t length, std::string &out) {
    out.clear();
    out.reserve(length);
    for (uint64_t i = 0; i < length; ++i) {
      uint8_t byte = 0;
      if (!cursor.readByte(byte))
        return fail("read error");
      out.push_back(static_cast<char>(byte));
    }
    return true;
  }

  bool fail(const std::string &reason) {
    if (why.empty()) {
      why = reason;
      whereFailed = cursor.position();
    }
    return false;
  }

  FileCursor &cursor;
  std::string why;
  uint64_t whereFailed = 0;
};

bool scanModelFile(const std::string &modelPath, std::vector<ScannedInitializer> &out,
                   std::string &error) {
  FileCursor cursor;
  if (!cursor.open(modelPath, error)) {
    error = "cannot open model file '" + modelPath + "' to locate raw_data: " + error;
    return false;
  }
  InitializerScanner scanner(cursor);
  if (scanner.scan(out))
    return true;
  error = "model file '" + modelPath + "' is malformed at byte " +
          std::to_string(scanner.failureOffset()) + ": " + scanner.failure();
  return false;
}

//===----------------------------------------------------------------------===//
// Describing and validating one initializer
//===----------------------------------------------------------------------===//

std::string subject(const std::string &name) { return "initializer '" + name + "': "; }

std::string dataTypeName(int32_t dataType) {
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Fills name, type, shape and the byte length the shape requires.
bool describe(const onnx::TensorProto &proto, StoredTensor &tensor, std::string &error) {
  tensor.name = proto.name();
  tensor.dataType = proto.data_type();
  tensor.modelDataType = proto.data_type();
  uint64_t elementSize = onnxElementSize(tensor.dataType);
  if (elementSize == 0) {
    error = subject(tensor.name) + "unsupported data type " + dataTypeName(tensor.dataType);
    return false;
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t elements = 1;
  for (int64_t dim : proto.dims()) {
    tensor.shape.push_back(dim);
    if (dim < 0) {
      error = subject(tensor.name) + "negative dimension " + std::to_string(dim);
      return false;
    }
    if (dim != 0 && elements > kMax / dim) {
      error = subject(tensor.name) + "element count of shape overflows int64";
      return false;
    }
    elements *= dim;
  }
  if (uint64_t(elements) > uint64_t(kMax) / elementSize) {
    error = subject(tensor.name) + "byte size of shape overflows int64";
    return false;
  }
  tensor.length = uint64_t(elements) * elementSize;
  return true;
}

std::string sizeMismatch(const StoredTensor &tensor, const std::string &what, uint64_t have) {
  return subject(tensor.name) + what + " is " + std::to_string(have) + " bytes, shape " +
         shapeString(tensor.shape) + " of " + dataTypeName(tensor.dataType) + " needs " +
         std::to_string(tensor.length);
}

/// Number of typed value fields that hold anything; ONNX allows data in exactly one place.
int valueFieldsInUse(const onnx::TensorProto &proto) {
  return (proto.float_data_size() > 0) + (proto.int32_data_size() > 0) +
         (proto.string_data_size() > 0) + (proto.int64_data_size() > 0) +
         (proto.double_data_size() > 0) + (proto.uint64_data_size() > 0);
}

//===----------------------------------------------------------------------===//
// raw_data inside the model file
//===----------------------------------------------------------------------===//

bool locateEmbedded(const onnx::TensorProto &proto, const ScannedInitializer &scanned,
                    const std::string &modelPath, StoredTensor &tensor, std::string &error) {
  // The scan and the parse read the same file; disagreement means it changed in between.
  if (!scanned.hasRawData || scanned.rawLength != proto.raw_data().size()) {
    error = subject(tensor.name) + "raw_data in model file '" + modelPath +
            "' does not match the parsed model";
    return false;
  }
  if (scanned.rawLength != tensor.length) {
    error = sizeMismatch(tensor, "raw_data", scanned.rawLength);
    return false;
  }
  tensor.file = modelPath;
  tensor.offset = scanned.rawOffset;
  return true;
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

bool parseDecimal(const std::string &text, uint64_t &value) {
  if (text.empty())
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    uint64_t digit = uint64_t(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  return true;
}

/// ONNX's rule: the location is relative and, once normalized, stays inside the model's
/// directory, so a model cannot make us read arbitrary files.
bool resolveLocation(const std::string &modelPath, const std::string &location, fs::path &out,
                     std::string &why) {
  fs::path relative(location);
  if (location.empty()) {
    why = "external data has no location";
    return false;
  }
  if (relative.is_absolute() || relative.has_root_path()) {
    why = "external data location '" + location + "' must be a relative path";
    return false;
  }
  fs::path normal = relative.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") {
    why = "external data location '" + location + "' escapes the model's directory";
    return false;
  }
  out = fs::path(modelPath).parent_path() / normal;
  return true;
}

struct ExternalInfo {
  std::string location;
  uint64_t offset = 0;
  bool hasLength = false;
  uint64_t length = 0;
};

bool readExternalInfo(const onnx::TensorProto &proto, ExternalInfo &info, std::string &why) {
  // Keys other than location/offset/length (checksum, ...) do not affect where the bytes are.
  for (const onnx::StringStringEntryProto &entry : proto.external_data()) {
    if (entry.key() == "location") {
      info.location = entry.value();
    } else if (entry.key() == "offset") {
      if (!parseDecimal(entry.value(), info.offset)) {
        why = "external data offset '" + entry.value() + "' is not a byte count";
        return false;
      }
    } else if (entry.key() == "length") {
      info.hasLength = true;
      if (!parseDecimal(entry.value(), info.length)) {
        why = "external data length '" + entry.value() + "' is not a byte count";
        return false;
      }
    }
  }
  return true;
}

/// The real path of the existing `path`, which must lie inside the real directory of the model:
/// the last component is no symlink (checked before), but a folder on the way may be one, and
/// one pointing elsewhere (`linkdir -> /etc`) would let a model read any file as its weights.
bool resolveConfined(const std::string &modelPath, const fs::path &path, const ExternalInfo &info,
                     fs::path &real, std::string &why) {
  std::error_code ec;
  fs::path directory = fs::canonical(fs::absolute(modelPath, ec).parent_path(), ec);
  if (!ec)
    real = fs::canonical(path, ec);
  if (ec) {
    why = "cannot resolve the real path of external data file '" + info.location +
          "': " + ec.message();
    return false;
  }
  if (std::mismatch(directory.begin(), directory.end(), real.begin(), real.end()).first !=
      directory.end()) {
    why = "external data file '" + info.location + "' is '" + real.string() +
          "', outside the model's directory '" + directory.string() + "'";
    return false;
  }
  return true;
}

/// Checks that `path` is an existing regular file inside the model's directory holding `length`
/// bytes at `offset`; `real` is its real path.
bool checkExternalFile(const std::string &modelPath, const fs::path &path, const ExternalInfo &info,
                       uint64_t length, fs::path &real, std::string &why) {
  std::error_code ec;
  fs::file_status status = fs::symlink_status(path, ec);
  if (ec || !fs::exists(status)) {
    why = "external data file '" + info.location + "' does not exist";
    return false;
  }
  // Like ONNX, refuse symlinks: they could point outside the model's directory.
  if (!fs::is_regular_file(status)) {
    why = "external data file '" + info.location + "' is not a regular file";
    return false;
  }
  if (!resolveConfined(modelPath, path, info, real, why))
    return false;
  uint64_t size = fs::file_size(real, ec);
  if (ec) {
    why = "cannot read the size of external data file '" + info.location + "'";
    return false;
  }
  if (info.offset > size || length > size - info.offset) {
    why = "external data file '" + info.location + "' is " + std::to_string(size) +
          " bytes, needs " + std::to_string(length) + " at offset " + std::to_string(info.offset);
    return false;
  }
  return true;
}

bool locateExternal(const onnx::TensorProto &proto, const std::string &modelPath,
                    StoredTensor &tensor, std::string &error) {
  if (proto.has_raw_data()) {
    error = subject(tensor.name) + "data is external but raw_data is also set";
    return false;
  }
  ExternalInfo info;
  fs::path path, real;
  std::string why;
  if (!readExternalInfo(proto, info, why) ||
      !resolveLocation(modelPath, info.location, path, why) ||
      !checkExternalFile(modelPath, path, info, tensor.length, real, why)) {
    error = subject(tensor.name) + why;
    return false;
  }
  if (info.hasLength && info.length != tensor.length) {
    error = sizeMismatch(tensor, "external data length", info.length);
    return false;
  }
  tensor.file = real.string();
  tensor.offset = info.offset;
  return true;
}

//===----------------------------------------------------------------------===//
// Typed value fields
//===----------------------------------------------------------------------===//

void appendLittleEndian(uint64_t bits, uint64_t width, std::vector<char> &out) {
  for (uint64_t i = 0; i < width; ++i)
    out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

template <typename T> uint64_t bitsOf(T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "wider than 64 bits");
  std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t> bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

/// Appends each value's low `width` bytes; int32_data carries f16/bf16 bit patterns and the
/// narrow integer types that way.
template <typename Values>
void appendAll(const Values &values, uint64_t width, std::vector<char> &out) {
  for (auto value : values)
    appendLittleEndian(bitsOf(value), width, out);
}

/// The typed field that holds values of the tensor's data type, and how many it holds.
struct TypedValues {
  const char *field;
  int count;
};

TypedValues typedValuesFor(const onnx::TensorProto &proto) {
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT:
    return {"float_data", proto.float_data_size()};
  case onnx::TensorProto::DOUBLE:
    return {"double_data", proto.double_data_size()};
  case onnx::TensorProto::INT64:
    return {"int64_data", proto.int64_data_size()};
  default:
    return {"int32_data", proto.int32_data_size()};
  }
}

bool convertTypedFields(const onnx::TensorProto &proto, StoredTensor &tensor, std::string &error) {
  auto [field, count] = typedValuesFor(proto);
  if (valueFieldsInUse(proto) > (count > 0 ? 1 : 0)) {
    error = subject(tensor.name) + "values are stored in a field that " +
            dataTypeName(tensor.dataType) + " does not use (expected " + field + ")";
    return false;
  }
  uint64_t width = onnxElementSize(tensor.dataType);
  uint64_t have = uint64_t(count) * width;
  if (have != tensor.length) {
    error = count == 0 ? subject(tensor.name) + "has no data" : sizeMismatch(tensor, field, have);
    return false;
  }
  tensor.inlineBytes.reserve(tensor.length);
  if (tensor.dataType == onnx::TensorProto::FLOAT)
    appendAll(proto.float_data(), width, tensor.inlineBytes);
  else if (tensor.dataType == onnx::TensorProto::DOUBLE)
    appendAll(proto.double_data(), width, tensor.inlineBytes);
  else if (tensor.dataType == onnx::TensorProto::INT64)
    appendAll(proto.int64_data(), width, tensor.inlineBytes);
  else
    appendAll(proto.int32_data(), width, tensor.inlineBytes);
  return true;
}

//===----------------------------------------------------------------------===//
// The whole graph
//===----------------------------------------------------------------------===//

bool locateData(const onnx::TensorProto &proto, const ScannedInitializer *scanned,
                const std::string &modelPath, StoredTensor &tensor, std::string &error) {
  if (proto.has_segment()) {
    error = subject(tensor.name) + "segmented tensors are not supported";
    return false;
  }
  bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  if ((external || proto.has_raw_data()) && valueFieldsInUse(proto) > 0) {
    error = subject(tensor.name) + "data is stored in more than one field";
    return false;
  }
  if (external)
    return locateExternal(proto, modelPath, tensor, error);
  if (proto.has_raw_data())
    return locateEmbedded(proto, *scanned, modelPath, tensor, error);
  return convertTypedFields(proto, tensor, error);
}

bool hasEmbeddedRawData(const onnx::GraphProto &graph) {
  for (const onnx::TensorProto &proto : graph.initializer())
    if (proto.has_raw_data() && proto.data_location() != onnx::TensorProto::EXTERNAL)
      return true;
  return false;
}

/// Pairs scanned initializers with parsed ones; both list the graph's initializers in order.
bool matchScan(const onnx::GraphProto &graph, const std::vector<ScannedInitializer> &scanned,
               const std::string &modelPath, std::string &error) {
  if (scanned.size() != size_t(graph.initializer_size())) {
    error = "model file '" + modelPath + "' holds " + std::to_string(scanned.size()) +
            " initializers, the parsed model " + std::to_string(graph.initializer_size());
    return false;
  }
  for (int i = 0; i < graph.initializer_size(); ++i) {
    if (scanned[i].name != graph.initializer(i).name()) {
      error = subject(graph.initializer(i).name()) + "model file '" + modelPath + "' has '" +
              scanned[i].name + "' in its place";
      return false;
    }
  }
  return true;
}

bool indexInitializers(const onnx::GraphProto &graph, const std::string &modelPath,
                       std::vector<StoredTensor> &tensors, std::string &error) {
  if (graph.sparse_initializer_size() > 0) {
    error = subject(graph.sparse_initializer(0).values().name()) +
            "sparse initializers are not supported";
    return false;
  }
  std::vector<ScannedInitializer> scanned;
  if (hasEmbeddedRawData(graph) &&
      (!scanModelFile(modelPath, scanned, error) || !matchScan(graph, scanned, modelPath, error)))
    return false;
  std::set<std::string> seen;
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const onnx::TensorProto &proto = graph.initializer(i);
    if (proto.name().empty()) {
      error = "initializer #" + std::to_string(i) + " has no name";
      return false;
    }
    if (!seen.insert(proto.name()).second) {
      error = subject(proto.name()) + "defined more than once";
      return false;
    }
    StoredTensor tensor;
    const ScannedInitializer *position = scanned.empty() ? nullptr : &scanned[i];
    if (!describe(proto, tensor, error) || !locateData(proto, position, modelPath, tensor, error))
      return false;
    tensors.push_back(std::move(tensor));
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// WeightStore
//===----------------------------------------------------------------------===//

bool WeightStore::index(const onnx::ModelProto &model, const std::string &modelPath,
                        std::string &error) {
  ordered.clear();
  byName.clear();
  std::vector<StoredTensor> tensors;
  if (!indexInitializers(model.graph(), modelPath, tensors, error))
    return false;
  ordered = std::move(tensors);
  for (size_t i = 0; i < ordered.size(); ++i)
    byName.emplace(ordered[i].name, i);
  return true;
}

const StoredTensor *WeightStore::find(const std::string &name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &ordered[it->second];
}

void WeightStore::add(StoredTensor tensor) {
  auto [it, inserted] = byName.emplace(tensor.name, ordered.size());
  if (inserted)
    ordered.push_back(std::move(tensor));
  else
    ordered[it->second] = std::move(tensor);
}

bool WeightStore::read(const StoredTensor &tensor, std::vector<char> &out,
                       std::string &error) const {
  return readRange(tensor, 0, tensor.byteSize(), out, error);
}

bool WeightStore::readRange(const StoredTensor &tensor, uint64_t offset, uint64_t length,
                            std::vector<char> &out, std::string &error) const {
  uint64_t size = tensor.byteSize();
  if (offset > size || length > size - offset) {
    error = subject(tensor.name) + "bytes " + std::to_string(offset) + "+" +
            std::to_string(length) + " are past its " + std::to_string(size) + " bytes";
    return false;
  }
  if (tensor.make) {
    std::vector<char> made;
    if (!tensor.make(made, error))
      return false;
    if (made.size() != size) {
      error = subject(tensor.name) + "made " + std::to_string(made.size()) + " bytes, not " +
              std::to_string(size);
      return false;
    }
    if (offset == 0 && length == size)
      out = std::move(made);
    else
      out.assign(made.begin() + offset, made.begin() + offset + length);
    return true;
  }
  if (tensor.file.empty()) {
    out.assign(tensor.inlineBytes.begin() + offset, tensor.inlineBytes.begin() + offset + length);
    return true;
  }
  constexpr uint64_t kMax = uint64_t(std::numeric_limits<int64_t>::max());
  if (tensor.offset > kMax || tensor.length > kMax - tensor.offset) {
    error = subject(tensor.name) + "byte range overflows a file offset";
    return false;
  }
  out.resize(length);
  if (length == 0)
    return true;
  std::string why;
  int fd = runtime::openRegularFileForReading(tensor.file, why);
  bool complete =
      fd >= 0 && runtime::readAt(fd, tensor.offset + offset, out.data(), length) == length;
  if (fd >= 0)
    ::close(fd);
  if (!complete) {
    error = subject(tensor.name) + "cannot read " + std::to_string(length) + " bytes at offset " +
            std::to_string(tensor.offset + offset) + " of '" + tensor.file + "'" +
            (why.empty() ? "" : ": " + why);
    return false;
  }
  return true;
}

} // namespace memc
