//===- Files.cpp - reading, mapping and atomically writing files ----------===//
#include "runtime/io/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memc::runtime {
namespace {

std::string systemError(const std::string &what, const std::string &path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

/// Opens `path` for reading and checks it is a regular file; returns -1 with a message.
int openRegularFile(const std::string &path, struct stat &info, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = systemError("cannot open", path);
    return -1;
  }
  if (fstat(fd, &info) != 0) {
    error = systemError("cannot stat", path);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(info.st_mode)) {
    error = "'" + path + "' is not a regular file";
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The process's umask, read without changing it (umask(2) can only set it, which would race with
/// other threads creating files); /proc/self/status has it since Linux 4.7.
mode_t currentUmask() {
  mode_t mask = 022;
  if (FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof(line), status))
      if (std::strncmp(line, "Umask:", 6) == 0)
        mask = static_cast<mode_t>(std::strtoul(line + 6, nullptr, 8));
    std::fclose(status);
  }
  return mask;
}

bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

} // namespace

std::unique_ptr<MappedFile> MappedFile::open(const std::string &path, std::string &error) {
  struct stat info;
  int fd = openRegularFile(path, info, error);
  if (fd < 0)
    return nullptr;
  std::unique_ptr<MappedFile> file(new MappedFile());
  file->filePath = path;
  file->size = static_cast<size_t>(info.st_size);
  if (file->size != 0) {
    file->data = mmap(nullptr, file->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (file->data == MAP_FAILED) {
      file->data = nullptr;
      error = systemError("cannot map", path);
      ::close(fd);
      return nullptr;
    }
  }
  ::close(fd);
  return file;
}

MappedFile::~MappedFile() {
  if (data)
    munmap(data, size);
}

bool readFile(const std::string &path, std::string &out, std::string &error) {
  struct stat info;
  int fd = openRegularFile(path, info, error);
  if (fd < 0)
    return false;
  out.resize(static_cast<size_t>(info.st_size));
  size_t done = 0;
  while (done < out.size()) {
    ssize_t got = ::read(fd, out.data() + done, out.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      error = got == 0 ? "'" + path + "' shrank while being read" : systemError("cannot read", path);
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  return true;
}

bool writeFileAtomically(const std::string &path, std::initializer_list<std::string_view> parts,
                         unsigned mode, std::string &error) {
  return writeFileAtomically(path, std::vector<std::string_view>(parts), mode, error);
}

bool writeFileAtomically(const std::string &path, const std::vector<std::string_view> &parts,
                         unsigned mode, std::string &error) {
  std::string temp = path + ".tmp.XXXXXX";
  int fd = mkstemp(temp.data());
  if (fd < 0) {
    error = systemError("cannot create a file in", directoryOf(path));
    return false;
  }
  bool ok = fchmod(fd, static_cast<mode_t>(mode) & ~currentUmask()) == 0;
  for (std::string_view part : parts)
    ok = ok && writeAll(fd, part);
  if (!ok)
    error = systemError("cannot write", path);
  if (::close(fd) != 0 && ok) {
    error = systemError("cannot write", path);
    ok = false;
  }
  if (ok && std::rename(temp.c_str(), path.c_str()) != 0) {
    error = systemError("cannot replace", path);
    ok = false;
  }
  if (!ok)
    ::unlink(temp.c_str());
  return ok;
}

bool checkWritable(const std::string &path, std::string &error) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    error = "cannot write '" + path + "': it is a directory";
    return false;
  }
  std::string directory = directoryOf(path);
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    error = systemError("cannot write into the directory", directory);
    return false;
  }
  return true;
}

} // namespace memc::runtime
