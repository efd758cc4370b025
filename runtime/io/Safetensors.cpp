//===- Safetensors.cpp - the safetensors weights format -------------------===//
#include "runtime/io/Safetensors.h"

#include "runtime/io/Json.h"
#include "runtime/support/Bytes.h"

#include <algorithm>
#include <set>

namespace memc::runtime {
namespace {

/// Headers larger than this are refused, as the reference implementation does.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

/// The format's dtypes memc does not store, with their bytes per element: such tensors parse,
/// and are an error to use. memc's own are the dtype table's safetensors names.
struct ForeignDType {
  const char *name;
  uint64_t size;
};
const ForeignDType kForeignDTypes[] = {
    {"F64", 8}, {"I16", 2}, {"U64", 8}, {"U32", 4}, {"U16", 2}, {"F8_E4M3", 1}, {"F8_E5M2", 1},
};

struct FormatDType {
  const char *name = nullptr;
  bool supported = false;
  DType dtype = DType::F32;
  uint64_t foreignSize = 0;

  /// Bytes of `count` elements; false on overflow.
  bool dataBytes(uint64_t count, uint64_t &out) const {
    return supported ? kernels::checkedStorageBytes(dtype, count, out)
                     : checkedMul(count, foreignSize, out);
  }
};

bool findFormatDType(const std::string &name, FormatDType &out) {
  if (const kernels::DTypeInfo *row = kernels::findSafetensorsDType(name.c_str())) {
    out = {row->safetensorsName, true, row->dtype, 0};
    return true;
  }
  for (const ForeignDType &entry : kForeignDTypes) {
    if (name == entry.name) {
      out = {entry.name, false, DType::F32, entry.size};
      return true;
    }
  }
  return false;
}

bool parseIntArray(const JsonValue &value, std::vector<int64_t> &out) {
  if (!value.isArray())
    return false;
  for (const JsonValue &element : value.elements()) {
    if (!element.isInteger() || element.integer() < 0)
      return false;
    out.push_back(element.integer());
  }
  return true;
}

bool parseMetadata(const JsonValue &value, std::map<std::string, std::string> &out,
                   std::string &error) {
  if (!value.isObject()) {
    error = "__metadata__ must be an object of strings";
    return false;
  }
  for (const auto &[key, entry] : value.members()) {
    if (!entry.isString()) {
      error = "__metadata__ entry \"" + key + "\" is not a string";
      return false;
    }
    out[key] = entry.string();
  }
  return true;
}

/// Fills `tensor` from its header entry; `begin`/`end` are the data offsets.
bool parseTensorEntry(const std::string &name, const JsonValue &value, uint64_t dataSize,
                      SafetensorsTensor &tensor, uint64_t &begin, uint64_t &end,
                      std::string &error) {
  std::string where = "tensor \"" + name + "\": ";
  if (!value.isObject()) {
    error = where + "entry is not an object";
    return false;
  }
  for (const auto &[key, field] : value.members()) {
    if (key != "dtype" && key != "shape" && key != "data_offsets") {
      error = where + "unknown field \"" + key + "\"";
      return false;
    }
  }
  const JsonValue *dtype = value.find("dtype");
  const JsonValue *shape = value.find("shape");
  const JsonValue *offsets = value.find("data_offsets");
  if (!dtype || !shape || !offsets) {
    error = where + "needs dtype, shape and data_offsets";
    return false;
  }
  FormatDType format;
  if (!dtype->isString() || !findFormatDType(dtype->string(), format)) {
    error = where + "unknown dtype" + (dtype->isString() ? " \"" + dtype->string() + "\"" : "");
    return false;
  }
  std::vector<int64_t> range;
  if (!parseIntArray(*shape, tensor.shape)) {
    error = where + "shape must be an array of non-negative integers";
    return false;
  }
  if (!parseIntArray(*offsets, range) || range.size() != 2) {
    error = where + "data_offsets must be two non-negative integers";
    return false;
  }
  begin = static_cast<uint64_t>(range[0]);
  end = static_cast<uint64_t>(range[1]);
  uint64_t count, bytes;
  if (!checkedNumElements(tensor.shape, count) || !format.dataBytes(count, bytes)) {
    error = where + "shape " + shapeString(tensor.shape) + " is too large";
    return false;
  }
  if (begin > end || end > dataSize) {
    error = where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
            "] are outside the " + std::to_string(dataSize) + " data bytes";
    return false;
  }
  if (end - begin != bytes) {
    error = where + "data_offsets cover " + std::to_string(end - begin) + " bytes but " +
            format.name + " " + shapeString(tensor.shape) + " needs " + std::to_string(bytes);
    return false;
  }
  tensor.name = name;
  tensor.dtypeName = format.name;
  tensor.supported = format.supported;
  tensor.dtype = format.dtype;
  return true;
}

} // namespace

bool SafetensorsFile::parse(std::string_view bytes, std::string &error) {
  entries.clear();
  byName.clear();
  meta.clear();
  if (bytes.size() < 8) {
    error = "safetensors: file is truncated (" + std::to_string(bytes.size()) +
            " bytes; the header length alone takes 8)";
    return false;
  }
  uint64_t headerSize = readLittleEndian<uint64_t>(bytes.data());
  if (headerSize > kMaxHeaderBytes || headerSize > bytes.size() - 8) {
    error = "safetensors: header length " + std::to_string(headerSize) + " exceeds the " +
            (headerSize > kMaxHeaderBytes ? "limit of " + std::to_string(kMaxHeaderBytes)
                                          : std::to_string(bytes.size() - 8) + " bytes left") +
            " (truncated or not a safetensors file)";
    return false;
  }
  std::string_view data = bytes.substr(8 + headerSize);
  JsonValue header;
  std::string jsonError;
  if (!parseJson(bytes.substr(8, headerSize), header, jsonError)) {
    error = "safetensors: header: " + jsonError;
    return false;
  }
  if (!header.isObject()) {
    error = "safetensors: header is not a JSON object";
    return false;
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto &[name, value] : header.members()) {
    if (name == "__metadata__") {
      if (!parseMetadata(value, meta, error))
        return (error = "safetensors: " + error), false;
      continue;
    }
    SafetensorsTensor tensor;
    uint64_t begin, end;
    if (!parseTensorEntry(name, value, data.size(), tensor, begin, end, error)) {
      error = "safetensors: " + error;
      return false;
    }
    tensor.bytes = data.substr(begin, end - begin);
    entries.push_back(std::move(tensor));
    ranges.emplace_back(begin, end);
  }

  // The format requires the tensors to tile the data: sorted by offset, each starts where the
  // previous ended, and the last ends at the end of the file.
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return ranges[a] < ranges[b]; });
  uint64_t covered = 0;
  for (size_t i : order) {
    if (ranges[i].first != covered) {
      error = "safetensors: tensor \"" + entries[i].name + "\" starts at data byte " +
              std::to_string(ranges[i].first) + " but the previous tensor ends at " +
              std::to_string(covered) + (ranges[i].first < covered ? " (overlap)" : " (a hole)");
      return false;
    }
    covered = ranges[i].second;
  }
  if (covered != data.size()) {
    error = "safetensors: the tensors cover " + std::to_string(covered) + " of the " +
            std::to_string(data.size()) + " data bytes";
    return false;
  }
  std::vector<SafetensorsTensor> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(entries[i]));
  entries = std::move(sorted);
  for (size_t i = 0; i < entries.size(); ++i)
    byName.emplace(entries[i].name, i);
  return true;
}

bool SafetensorsFile::open(const std::string &path, std::string &error) {
  file = MappedFile::open(path, error);
  if (!file)
    return false;
  if (!parse(file->bytes(), error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

const SafetensorsTensor *SafetensorsFile::find(std::string_view name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &entries[it->second];
}

TensorRef tensorRef(const std::string &name, const HostArray &array) {
  return {name, array.dtype, array.shape,
          std::string_view(reinterpret_cast<const char *>(array.bytes.data()), array.bytes.size())};
}

bool checkTensorNames(const std::vector<std::string_view> &names, std::string &error) {
  std::set<std::string_view> seen;
  for (std::string_view name : names)
    if (name.empty() || name == "__metadata__" || !seen.insert(name).second) {
      error = "safetensors: cannot write a tensor named \"" + std::string(name) + "\"" +
              (!name.empty() && name != "__metadata__" ? " twice" : "");
      return false;
    }
  return true;
}

bool safetensorsPrefix(const std::vector<TensorRef> &tensors,
                       const std::map<std::string, std::string> &metadata, std::string &out,
                       std::string &error) {
  std::vector<TensorHeader> headers;
  for (const TensorRef &tensor : tensors)
    headers.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.bytes.size()});
  return safetensorsPrefix(headers, metadata, out, error);
}

bool safetensorsPrefix(const std::vector<TensorHeader> &tensors,
                       const std::map<std::string, std::string> &metadata, std::string &out,
                       std::string &error) {
  std::vector<std::string_view> names;
  for (const TensorHeader &tensor : tensors)
    names.push_back(tensor.name);
  if (!checkTensorNames(names, error))
    return false;
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto &[key, value] : metadata) {
      header += (first ? "" : ",") + jsonQuote(key) + ":" + jsonQuote(value);
      first = false;
    }
    header += "}";
  }
  uint64_t offset = 0;
  for (const TensorHeader &tensor : tensors) {
    uint64_t expected;
    if (!checkedSizeBytes(tensor.dtype, tensor.shape, expected) ||
        expected != tensor.bytes) {
      error = "safetensors: tensor \"" + tensor.name + "\" has " +
              std::to_string(tensor.bytes) + " bytes, not what " +
              dtypeString(tensor.dtype) + " " + shapeString(tensor.shape) + " needs";
      return false;
    }
    const kernels::DTypeInfo &row = *kernels::findDType(tensor.dtype);
    // A packed tensor has no safetensors dtype of its own: it is stored as its bytes.
    std::vector<int64_t> storedShape = row.kind == kernels::DTypeKind::Packed
                                           ? std::vector<int64_t>{static_cast<int64_t>(expected)}
                                           : tensor.shape;
    std::string shape;
    for (int64_t dim : storedShape)
      shape += (shape.empty() ? "" : ",") + std::to_string(dim);
    header += (header.size() > 1 ? "," : "") + jsonQuote(tensor.name) + ":{\"dtype\":\"" +
              row.safetensorsName + "\",\"shape\":[" + shape + "],\"data_offsets\":[" +
              std::to_string(offset) + "," + std::to_string(offset + expected) + "]}";
    offset += expected;
  }
  header += "}";
  // Pad with spaces so the data starts 8-byte aligned, as the reference writer does.
  header.append((8 - header.size() % 8) % 8, ' ');
  out.clear();
  appendLittleEndian<uint64_t>(out, header.size());
  out += header;
  return true;
}

bool serializeSafetensors(const std::vector<TensorRef> &tensors,
                          const std::map<std::string, std::string> &metadata, std::string &out,
                          std::string &error) {
  if (!safetensorsPrefix(tensors, metadata, out, error))
    return false;
  for (const TensorRef &tensor : tensors)
    out += tensor.bytes;
  return true;
}

bool writeSafetensors(const std::string &path, const std::vector<TensorRef> &tensors,
                      const std::map<std::string, std::string> &metadata, std::string &error) {
  std::string bytes;
  return serializeSafetensors(tensors, metadata, bytes, error) &&
         writeFileAtomically(path, {bytes}, 0644, error);
}

} // namespace memc::runtime
