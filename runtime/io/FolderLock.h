//===- FolderLock.h - one run per checkpoint folder -------------*- C++ -*-===//
//
// Two runs writing checkpoints into one folder destroyed each other's work: each write sweeps
// the temporaries a killed write left (Files.h), and so deleted the other run's file mid-write.
// A run holds an exclusive flock on its checkpoint folder for as long as it uses it; the kernel
// drops the lock when the process ends, however it ends, so a killed run leaves none behind.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_FOLDERLOCK_H
#define MEMC_RUNTIME_IO_FOLDERLOCK_H

#include <memory>
#include <string>

namespace memc::runtime {

class FolderLock {
public:
  /// Locks the folder `dir` without waiting, first creating it when it does not exist (its parent
  /// must); null with a message naming it (`what`, e.g.
  /// "--checkpoint") when it cannot be opened or another process holds the lock.
  static std::unique_ptr<FolderLock> acquire(const std::string &dir, const std::string &what,
                                             std::string &error);
  ~FolderLock();
  FolderLock(const FolderLock &) = delete;
  FolderLock &operator=(const FolderLock &) = delete;

private:
  explicit FolderLock(int fd) : fd(fd) {}
  int fd;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_FOLDERLOCK_H
