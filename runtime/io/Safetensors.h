//===- Safetensors.h - the safetensors weights format ------------*- C++ -*-===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"key": "value", ...},
//    "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// and the tensors' bytes, with data_offsets relative to the end of the header. As the format
// specifies, the tensors must cover the data exactly: no overlaps, no holes, nothing after the
// last one. The reader validates all of it up front and then hands out views into the file.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_SAFETENSORS_H
#define MEMC_RUNTIME_IO_SAFETENSORS_H

#include "runtime/io/Files.h"
#include "runtime/io/HostArray.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memc::runtime {

/// One tensor of a parsed file.
struct SafetensorsTensor {
  std::string name;
  /// As the file names it: "F32", "BF16", "F64", ...
  std::string dtypeName;
  /// False for dtypes the format has but memc does not store (F64, U16, ...): such tensors
  /// are listed, and an error to use.
  bool supported = false;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// The tensor's bytes inside the file.
  std::string_view bytes;
};

class SafetensorsFile {
public:
  /// Parses and validates `bytes`, which must outlive this object.
  bool parse(std::string_view bytes, std::string &error);
  /// Maps `path` and parses it.
  bool open(const std::string &path, std::string &error);

  const SafetensorsTensor *find(std::string_view name) const;
  /// In file data order.
  const std::vector<SafetensorsTensor> &tensors() const { return entries; }
  const std::map<std::string, std::string> &metadata() const { return meta; }

private:
  std::unique_ptr<MappedFile> file;
  std::vector<SafetensorsTensor> entries;
  std::map<std::string, size_t, std::less<>> byName;
  std::map<std::string, std::string> meta;
};

/// A tensor to write: a view of bytes the caller owns.
struct TensorRef {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

/// What a file's header says of a tensor: its name, type, shape and byte count.
struct TensorHeader {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// Views `array` as a TensorRef named `name`.
TensorRef tensorRef(const std::string &name, const HostArray &array);

/// Whether a safetensors file can hold tensors of these names: none empty, none
/// "__metadata__" (the header's own key), none twice; false with the first bad name.
bool checkTensorNames(const std::vector<std::string_view> &names, std::string &error);

/// Serializes `tensors` (in order) and `metadata`; false if checkTensorNames refuses a name, or
/// if a tensor's byte count does not match its dtype and shape. A packed
/// tensor (nf4), which the format has no dtype for, is written as U8 [its bytes] and reads back
/// as such: its element shape lives in the plan.
/// What precedes the tensors' data in their safetensors file (the header's length and the
/// header): with each tensor's bytes after it, in order, the file, which a writer can then
/// write from wherever the bytes lie without copying them together.
bool safetensorsPrefix(const std::vector<TensorRef> &tensors,
                       const std::map<std::string, std::string> &metadata, std::string &out,
                       std::string &error);
/// The same from the tensors' headers, for a writer that makes their bytes as it writes them.
bool safetensorsPrefix(const std::vector<TensorHeader> &tensors,
                       const std::map<std::string, std::string> &metadata, std::string &out,
                       std::string &error);
bool serializeSafetensors(const std::vector<TensorRef> &tensors,
                          const std::map<std::string, std::string> &metadata, std::string &out,
                          std::string &error);
/// serializeSafetensors, then an atomic write to `path`.
bool writeSafetensors(const std::string &path, const std::vector<TensorRef> &tensors,
                      const std::map<std::string, std::string> &metadata, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_SAFETENSORS_H
