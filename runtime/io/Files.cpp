//===- Files.cpp - reading, mapping and atomically writing files ----------===//
#include "runtime/io/Files.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memc::runtime {
namespace {

/// The temporary an output is filling right now, for the signal handler to remove. Its name is
/// copied into the buffer not in use and then published whole through the pointer (a handler
/// may not allocate, and must never read a half-copied name); it is published before the file
/// exists and withdrawn after it is renamed or removed, so no signal leaves a temporary.
/// Outputs are written from one thread.
char temporaryNames[2][PATH_MAX];
std::atomic<const char *> activeTemporary{nullptr};

void removeActiveTemporaryAndDie(int signal) {
  if (const char *name = activeTemporary.load())
    ::unlink(name);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

/// Marks `temp` as the temporary being written (empty: none), for the signal handler.
void setActiveTemporary(const std::string &temp) {
  if (temp.empty() || temp.size() >= PATH_MAX) {
    activeTemporary.store(nullptr);
    return;
  }
  char *slot = temporaryNames[activeTemporary.load() == temporaryNames[0] ? 1 : 0];
  std::memcpy(slot, temp.c_str(), temp.size() + 1);
  activeTemporary.store(slot);
}

std::string systemError(const std::string &what, const std::string &path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

/// What a file that is not a regular one is, for messages.
const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

/// Opens `path` for reading and checks it is a regular file; returns -1 with a message.
/// O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer; it is cleared
/// once the file is known to be regular (where it would not matter anyway).
int openRegularFile(const std::string &path, struct stat &info, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    error = "'" + path + "' is " + fileKind(info.st_mode) + ", not a regular file";
    ::close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

/// Refuses an existing `path` that is not a regular file: writing would replace a device node
/// (or fail on a directory) instead of making the output.
bool checkReplaceable(const std::string &path, std::string &error) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    error = "cannot write '" + path + "': it exists and is not a regular file (it is " +
            fileKind(info.st_mode) + ")";
    return false;
  }
  return true;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

constexpr std::string_view kTemporaryInfix = ".tmp.";
/// mkstemp's XXXXXX: six letters or digits.
constexpr size_t kTemporarySuffixLength = 6;

/// The temporary file writeFileAtomically makes for `path`.
std::string temporaryTemplate(const std::string &path) {
  return path + std::string(kTemporaryInfix) + std::string(kTemporarySuffixLength, 'X');
}

/// Whether `name` is a temporary of the file named `target` (both without a directory).
bool isTemporaryOf(std::string_view name, std::string_view target) {
  if (name.size() != target.size() + kTemporaryInfix.size() + kTemporarySuffixLength ||
      name.substr(0, target.size()) != target ||
      name.substr(target.size(), kTemporaryInfix.size()) != kTemporaryInfix)
    return false;
  for (char c : name.substr(target.size() + kTemporaryInfix.size()))
    if (!std::isalnum(static_cast<unsigned char>(c)))
      return false;
  return true;
}

/// Removes the regular files a killed writeFileAtomically of `path` left beside it: only
/// memc's own temporary names, only for this target, only in its directory.
void removeStaleTemporaries(const std::string &path) {
  std::string directory = directoryOf(path);
  size_t slash = path.rfind('/');
  std::string target = slash == std::string::npos ? path : path.substr(slash + 1);
  DIR *listing = opendir(directory.c_str());
  if (!listing)
    return;
  while (const dirent *entry = readdir(listing)) {
    if (!isTemporaryOf(entry->d_name, target))
      continue;
    std::string stale = directory + "/" + entry->d_name;
    struct stat info;
    if (lstat(stale.c_str(), &info) == 0 && S_ISREG(info.st_mode))
      ::unlink(stale.c_str());
  }
  closedir(listing);
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

/// Writes all of `bytes`; false with errno set (ENOSPC where a short write gives no reason).
bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = ::write(fd, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0) {
      if (written == 0)
        errno = ENOSPC;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

/// What every output does first: checks that `path` may be replaced (absent, or a regular file),
/// removes the temporaries a killed write of it left, and makes a new temporary beside it with
/// permissions `mode` (before the umask), published for the signal handler before it exists
/// (mkstemp would create it before its name could be): the caller withdraws it
/// (setActiveTemporary("")) once it is renamed or removed. Its descriptor, with its name in
/// `temp`; -1 with a message.
int createTemporaryFor(const std::string &path, unsigned mode, std::string &temp,
                       std::string &error) {
  if (!checkReplaceable(path, error))
    return -1;
  removeStaleTemporaries(path);
  static constexpr char kLetters[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static uint64_t state = static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count() ^ (uint64_t(getpid()) << 32));
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    temp = temporaryTemplate(path);
    for (size_t i = temp.size() - kTemporarySuffixLength; i < temp.size(); ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL; // a 64-bit LCG
      temp[i] = kLetters[(state >> 33) % (sizeof(kLetters) - 1)];
    }
    setActiveTemporary(temp);
    fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    setActiveTemporary("");
    error = systemError("cannot create a file in", directoryOf(path));
    return -1;
  }
  if (fchmod(fd, static_cast<mode_t>(mode) & ~currentUmask()) != 0) {
    error = systemError("cannot create", path);
    ::close(fd);
    ::unlink(temp.c_str());
    setActiveTemporary("");
    return -1;
  }
  return fd;
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
  errno = 0;
  bool complete = readAt(fd, 0, out.data(), out.size()) == out.size();
  if (!complete)
    error =
        errno == 0 ? "'" + path + "' shrank while being read" : systemError("cannot read", path);
  ::close(fd);
  return complete;
}

size_t readAt(int fd, uint64_t offset, char *out, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t got = ::pread(fd, out + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    done += static_cast<size_t>(got);
  }
  return done;
}

bool writeFileAtomically(const std::string &path, std::initializer_list<std::string_view> parts,
                         unsigned mode, std::string &error) {
  return writeFileAtomically(path, std::vector<std::string_view>(parts), mode, error);
}

bool writeFileAtomically(const std::string &path, const std::vector<std::string_view> &parts,
                         unsigned mode, std::string &error) {
  return writeFileAtomically(
      path, mode,
      [&](const WriteBytes &write, std::string &) {
        for (std::string_view part : parts)
          if (!write(part))
            return false;
        return true;
      },
      error);
}

bool writeFileAtomically(const std::string &path, unsigned mode,
                         const std::function<bool(const WriteBytes &, std::string &)> &produce,
                         std::string &error) {
  std::string temp;
  int fd = createTemporaryFor(path, mode, temp, error);
  if (fd < 0)
    return false;
  bool written = true;
  std::string produceError;
  bool ok = produce(
                [&](std::string_view bytes) { return written = written && writeAll(fd, bytes); },
                produceError) &&
            written;
  if (!ok)
    error = written ? produceError : systemError("cannot write", path);
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
  setActiveTemporary("");
  return ok;
}

void removeTemporariesOnSignals() {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action = {};
    action.sa_handler = removeActiveTemporaryAndDie;
    sigemptyset(&action.sa_mask);
    sigaction(signal, &action, nullptr);
  }
}

bool prepareOutputFile(const std::string &path, std::string &error) {
  if (!checkReplaceable(path, error))
    return false;
  std::string directory = directoryOf(path);
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    error = systemError("cannot write into the directory", directory);
    return false;
  }
  removeStaleTemporaries(path);
  return true;
}

int openRegularFileForReading(const std::string &path, std::string &error) {
  struct stat info;
  return openRegularFile(path, info, error);
}

std::unique_ptr<StreamedFile> StreamedFile::create(const std::string &path, std::string &error) {
  // A new file renamed onto `path` at once, as writeFileAtomically's: a symlink there is
  // replaced, never written through (it overwrote the file it pointed at).
  std::string temp;
  int fd = createTemporaryFor(path, 0644, temp, error);
  if (fd < 0)
    return nullptr;
  bool renamed = std::rename(temp.c_str(), path.c_str()) == 0;
  if (!renamed) {
    error = systemError("cannot create", path);
    ::close(fd);
    ::unlink(temp.c_str());
  }
  setActiveTemporary("");
  return renamed ? adopt(fd, path) : nullptr;
}

std::unique_ptr<StreamedFile> StreamedFile::adopt(int fd, const std::string &path) {
  return std::unique_ptr<StreamedFile>(new StreamedFile(fd, path));
}

StreamedFile::~StreamedFile() {
  if (fd >= 0)
    ::close(fd);
}

bool StreamedFile::write(std::string_view bytes, std::string &error) {
  if (fd >= 0 && writeAll(fd, bytes))
    return true;
  error = fd < 0 ? "cannot write '" + filePath + "': it is closed"
                 : systemError("cannot write", filePath);
  return false;
}

bool StreamedFile::close(std::string &error) {
  int closing = fd;
  fd = -1;
  if (closing >= 0 && ::close(closing) != 0) {
    error = systemError("cannot write", filePath);
    return false;
  }
  return true;
}

} // namespace memc::runtime
