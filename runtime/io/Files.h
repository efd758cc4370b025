//===- Files.h - reading, mapping and atomically writing files ---*- C++ -*-===//
//
// Weights can be many gigabytes and a bundle carries them inside an executable, so files are
// mapped, not read, where the runtime only needs to look at them. Outputs are written to a
// temporary file beside the target and renamed over it, so a failed write never leaves a
// half-written file under the requested name.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_FILES_H
#define MEMC_RUNTIME_IO_FILES_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace memc::runtime {

/// A read-only memory mapping of a whole file.
class MappedFile {
public:
  /// Maps `path`; returns null with a message naming the path in `error`.
  static std::unique_ptr<MappedFile> open(const std::string &path, std::string &error);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  std::string_view bytes() const { return {static_cast<const char *>(data), size}; }
  const std::string &path() const { return filePath; }

private:
  MappedFile() = default;
  void *data = nullptr;
  size_t size = 0;
  std::string filePath;
};

/// Reads all of `path` into `out`.
bool readFile(const std::string &path, std::string &out, std::string &error);

/// Writes `parts` (concatenated) to `path` through a temporary file in the same directory and a
/// rename, with permissions `mode` (before the umask).
bool writeFileAtomically(const std::string &path, std::initializer_list<std::string_view> parts,
                         unsigned mode, std::string &error);
/// The same for a number of parts known only at run time (tensors written where they lie).
bool writeFileAtomically(const std::string &path, const std::vector<std::string_view> &parts,
                         unsigned mode, std::string &error);

/// Checks that `path` could be created or replaced by writeFileAtomically, so that a long run
/// does not end in an unwritable output.
bool checkWritable(const std::string &path, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_FILES_H
