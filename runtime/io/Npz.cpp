//===- Npz.cpp - numpy's .npz archives of arrays --------------------------===//
#include "runtime/io/Npz.h"

#include "runtime/io/Files.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Zip.h"

#include <set>

namespace memc::runtime {
namespace {

constexpr std::string_view kSuffix = ".npy";

std::string arrayName(const std::string &entryName) {
  if (entryName.size() >= kSuffix.size() &&
      entryName.compare(entryName.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
    return entryName.substr(0, entryName.size() - kSuffix.size());
  return entryName;
}

} // namespace

bool parseNpz(std::string_view archive, NamedArrays &out, std::string &error) {
  out.clear();
  std::vector<ZipEntry> entries;
  if (!readZip(archive, entries, error)) {
    error = "npz: " + error;
    return false;
  }
  std::set<std::string> names;
  for (ZipEntry &entry : entries) {
    std::string name = arrayName(entry.name);
    if (!names.insert(name).second) {
      error = "npz: array '" + name + "' appears twice";
      return false;
    }
    HostArray array;
    if (!parseNpy(entry.data, array, error)) {
      error = "npz: array '" + name + "': " + error;
      return false;
    }
    entry.data.clear();
    entry.data.shrink_to_fit();
    out.emplace_back(std::move(name), std::move(array));
  }
  return true;
}

bool readNpz(const std::string &path, NamedArrays &out, std::string &error) {
  std::unique_ptr<MappedFile> file = MappedFile::open(path, error);
  if (!file)
    return false;
  if (!parseNpz(file->bytes(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

bool serializeNpz(const NamedArrays &arrays, bool compress, std::string &out, std::string &error) {
  std::vector<std::string> encoded;
  encoded.reserve(arrays.size());
  std::vector<ZipEntryRef> entries;
  std::set<std::string> names;
  for (const auto &[name, array] : arrays) {
    if (name.empty() || !names.insert(name).second) {
      error = "npz: cannot write an array named '" + name + "'" + (name.empty() ? "" : " twice");
      return false;
    }
    uint64_t expected;
    if (!checkedSizeBytes(array.dtype, array.shape, expected) || expected != array.bytes.size()) {
      error = "npz: array '" + name + "' has " + std::to_string(array.bytes.size()) +
              " bytes, not what " + dtypeString(array.dtype) + " " + shapeString(array.shape) +
              " needs";
      return false;
    }
    encoded.push_back(serializeNpy(array));
    entries.push_back({name + std::string(kSuffix), encoded.back()});
  }
  if (!writeZip(entries, compress, out, error)) {
    error = "npz: " + error;
    return false;
  }
  return true;
}

bool writeNpz(const std::string &path, const NamedArrays &arrays, bool compress,
              std::string &error) {
  std::string bytes;
  return serializeNpz(arrays, compress, bytes, error) &&
         writeFileAtomically(path, {bytes}, 0644, error);
}

} // namespace memc::runtime
