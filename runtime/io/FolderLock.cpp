//===- FolderLock.cpp - one run per checkpoint folder ---------------------===//
#include "runtime/io/FolderLock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memc::runtime {

std::unique_ptr<FolderLock> FolderLock::acquire(const std::string &dir, const std::string &what,
                                                std::string &error) {
  // A folder that is not there yet is made (its parent must exist), as a first run expects.
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    error = what + " " + dir + ": cannot create the folder (" + std::strerror(errno) + ")";
    return nullptr;
  }
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    error = what + " " + dir + ": cannot open the folder (" + std::strerror(errno) + ")";
    return nullptr;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    error = what + " " + dir +
            (errno == EWOULDBLOCK
                 ? ": another run is using this folder; give each run a folder of its own"
                 : ": cannot lock the folder (" + std::string(std::strerror(errno)) + ")");
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<FolderLock>(new FolderLock(fd));
}

FolderLock::~FolderLock() { ::close(fd); }

} // namespace memc::runtime
