//===- Npz.cpp - numpy's .npz archives of arrays --------------------------===//
#include "runtime/io/Npz.h"

#include "runtime/io/Files.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Zip.h"

#include "runtime/support/Bytes.h"
#include "runtime/support/MemoryLimit.h"

#include <algorithm>
#include <set>
#include <unistd.h>

namespace memc::runtime {
namespace {

constexpr std::string_view kSuffix = ".npy";

std::string arrayName(const std::string &entryName) {
  if (entryName.size() >= kSuffix.size() &&
      entryName.compare(entryName.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
    return entryName.substr(0, entryName.size() - kSuffix.size());
  return entryName;
}

/// Enough of an entry to hold any .npy header numpy writes.
constexpr size_t kNpyHeaderProbe = 64 * 1024;

/// Before anything is inflated: array names are unique, each entry's size is what its .npy
/// header's dtype and shape need, and all arrays together fit in the memory this process may
/// take (the least of RAM, RLIMIT_AS and its cgroup's limit, MemoryLimit.h). A
/// corrupted or hostile archive is refused here instead of by a failed allocation.
/// Whether an entry can be read in place: stored, and its bytes are its dtype's (no float64
/// to narrow).
bool readsInPlace(const ZipEntryInfo &entry, const NpyLayout &layout) {
  return entry.method == 0 && layout.fileType != FileType::Float64;
}

bool checkDeclaredSizes(std::string_view archive, const std::vector<ZipEntryInfo> &entries,
                        bool inPlace, std::string &error) {
  std::set<std::string> names;
  uint64_t total = 0, largest = 0;
  for (const ZipEntryInfo &entry : entries) {
    std::string name = arrayName(entry.name), header;
    if (!names.insert(name).second) {
      error = "array '" + name + "' appears twice";
      return false;
    }
    NpyLayout layout;
    if (!readZipEntryPrefix(archive, entry, kNpyHeaderProbe, header, error) ||
        !parseNpyLayout(header, layout, error)) {
      error = "array '" + name + "': " + error;
      return false;
    }
    if (layout.dataOffset + layout.dataBytes != entry.size) {
      error = "array '" + name + "': the entry holds " + std::to_string(entry.size) +
              " bytes, but its .npy header's '" + layout.descr + "' " + shapeString(layout.shape) +
              " needs " + std::to_string(layout.dataOffset + layout.dataBytes);
      return false;
    }
    if (inPlace && readsInPlace(entry, layout))
      continue; // read from the mapping a page at a time, never held whole
    total += layout.memoryBytes;
    largest = std::max(largest, entry.size);
  }
  // While the last array is parsed, its inflated entry is held beside all the arrays.
  MemoryLimit limit = processMemoryLimit();
  if (total + largest > limit.bytes) {
    error = "the arrays need " + formatBytes(total + largest) + " while they are read, more than " +
            limit.what + " of " + formatBytes(limit.bytes);
    return false;
  }
  return true;
}

} // namespace

bool parseNpz(std::string_view archive, NamedArrays &out, std::string &error) {
  out.clear();
  std::vector<ZipEntryInfo> entries;
  if (!listZip(archive, entries, error) ||
      !checkDeclaredSizes(archive, entries, /*inPlace=*/false, error)) {
    error = "npz: " + error;
    return false;
  }
  // One entry inflated at a time, its bytes dropped once parsed.
  for (const ZipEntryInfo &entry : entries) {
    std::string name = arrayName(entry.name), bytes;
    HostArray array;
    if (!readZipEntry(archive, entry, bytes, error) || !parseNpy(bytes, array, error)) {
      error = "npz: array '" + name + "': " + error;
      return false;
    }
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

bool mapNpz(const std::string &path, NpzView &out, std::string &error) {
  out = NpzView();
  if (!(out.file = MappedFile::open(path, error)))
    return false;
  std::string_view archive = out.file->bytes();
  std::vector<ZipEntryInfo> entries;
  if (!listZip(archive, entries, error) ||
      !checkDeclaredSizes(archive, entries, /*inPlace=*/true, error)) {
    error = path + ": npz: " + error;
    return false;
  }
  out.owned.reserve(entries.size()); // views of `owned` must not move
  for (const ZipEntryInfo &entry : entries) {
    std::string name = arrayName(entry.name), header;
    NpyLayout layout;
    if (!readZipEntryPrefix(archive, entry, kNpyHeaderProbe, header, error) ||
        !parseNpyLayout(header, layout, error)) {
      error = path + ": npz: array '" + name + "': " + error;
      return false;
    }
    if (readsInPlace(entry, layout)) {
      if (!checkStoredZipEntry(archive, entry, error)) {
        error = path + ": npz: array '" + name + "': " + error;
        return false;
      }
      const uint8_t *start = reinterpret_cast<const uint8_t *>(archive.data()) +
                             entry.dataStart + layout.dataOffset;
      out.arrays.emplace_back(name, ArrayView{layout.dtype, layout.shape, layout.fileType, start,
                                              static_cast<size_t>(layout.dataBytes)});
      continue;
    }
    std::string bytes;
    HostArray array;
    if (!readZipEntry(archive, entry, bytes, error) || !parseNpy(bytes, array, error)) {
      error = path + ": npz: array '" + name + "': " + error;
      return false;
    }
    out.owned.emplace_back(name, std::move(array));
    out.arrays.emplace_back(name, ArrayView::of(out.owned.back().second));
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
