//===- Files.h - reading, mapping and atomically writing files ---*- C++ -*-===//
//
// Weights can be many gigabytes and a bundle carries them inside an executable, so files are
// mapped, not read, where the runtime only needs to look at them. Outputs are written to a
// temporary file beside the target and renamed over it, so a failed write never leaves a
// half-written file under the requested name.
//
// Only regular files are read or replaced: a FIFO, a directory or a device given as an input
// would block or misbehave, and renaming over /dev/null would turn a device into a file, so
// every reader and writer goes through the checks here.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_FILES_H
#define MEMC_RUNTIME_IO_FILES_H

#include <cstddef>
#include <cstdint>
#include <functional>
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

/// Opens `path` read-only (close-on-exec) if it is a regular file; returns -1 with a message
/// naming the path otherwise. A FIFO is refused without waiting for a writer.
int openRegularFileForReading(const std::string &path, std::string &error);

/// Reads up to `length` bytes at `offset` of `fd` into `out` (retrying short reads); returns how
/// many it read, fewer at the end of the file or on an error (errno says which).
size_t readAt(int fd, uint64_t offset, char *out, size_t length);

/// Writes `parts` (concatenated) to `path` through a temporary file in the same directory and a
/// rename, with permissions `mode` (before the umask). A `path` that exists and is not a regular
/// file is refused, and the temporaries a killed write of `path` left behind are removed.
bool writeFileAtomically(const std::string &path, std::initializer_list<std::string_view> parts,
                         unsigned mode, std::string &error);
/// The same for a number of parts known only at run time (tensors written where they lie).
bool writeFileAtomically(const std::string &path, const std::vector<std::string_view> &parts,
                         unsigned mode, std::string &error);
/// Appends bytes to the file being written; false when the write failed.
using WriteBytes = std::function<bool(std::string_view)>;
/// The same with the bytes made while writing: `produce` hands them to its WriteBytes piece by
/// piece (so a piece can be made, written and dropped before the next), and returns false with
/// `error` set when it cannot make one.
bool writeFileAtomically(const std::string &path, unsigned mode,
                         const std::function<bool(const WriteBytes &, std::string &)> &produce,
                         std::string &error);

/// Makes SIGINT, SIGTERM and SIGHUP remove the temporary a writeFileAtomically is writing, then
/// end the process as the signal would: a run stopped mid-checkpoint leaves the last checkpoint
/// and no temporary beside it.
void removeTemporariesOnSignals();

/// Before a long run: checks that `path` could be created or replaced by writeFileAtomically (it
/// does not exist or is a regular file, in a writable directory), so that the run does not end in
/// an unwritable output, and removes the temporaries (`path`.tmp.XXXXXX) that a killed write of
/// `path` left behind.
bool prepareOutputFile(const std::string &path, std::string &error);

/// An output written as it goes, such as a training log: a new file renamed onto `path` when it
/// is created (an existing regular file or symlink there is replaced, anything else refused),
/// every write and the close checked, so that a full disk is an error, not a short file.
class StreamedFile {
public:
  static std::unique_ptr<StreamedFile> create(const std::string &path, std::string &error);
  /// Writes to `fd`, already open, which the StreamedFile then owns; `path` names it in errors.
  static std::unique_ptr<StreamedFile> adopt(int fd, const std::string &path);
  ~StreamedFile();
  StreamedFile(const StreamedFile &) = delete;
  StreamedFile &operator=(const StreamedFile &) = delete;

  bool write(std::string_view bytes, std::string &error);
  /// Closes the file; false with the reason if the data may not have reached it.
  bool close(std::string &error);

private:
  StreamedFile(int fd, const std::string &path) : fd(fd), filePath(path) {}
  int fd;
  std::string filePath;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_FILES_H
