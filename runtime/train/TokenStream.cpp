//===- TokenStream.cpp - language-model windows from a flat token file ---===//
#include "runtime/train/TokenStream.h"
#include "runtime/io/Files.h"
#include "runtime/support/Crc32c.h"
#include "runtime/support/SplitMix64.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memc::runtime {

std::unique_ptr<TokenStream> TokenStream::open(const std::string &path, Width width,
                                               std::string &error) {
  int fd = openRegularFileForReading(path, error);
  if (fd < 0)
    return nullptr;
  struct stat info;
  const size_t tokenBytes = width == Width::U16 ? 2 : 4;
  std::unique_ptr<TokenStream> stream(new TokenStream());
  stream->width = width;
  if (::fstat(fd, &info) != 0 || info.st_size <= 0 ||
      static_cast<size_t>(info.st_size) % tokenBytes != 0) {
    error = "--data " + path + ": " +
            (info.st_size <= 0
                 ? std::string("the token file is empty")
                 : "its " + std::to_string(info.st_size) + " bytes are not a whole number of " +
                       stream->widthName() + " tokens");
    ::close(fd);
    return nullptr;
  }
  void *mapped = ::mmap(nullptr, static_cast<size_t>(info.st_size), PROT_READ, MAP_SHARED, fd, 0);
  int mapError = errno;
  ::close(fd);
  if (mapped == MAP_FAILED) {
    error = "--data " + path + ": cannot map the token file (" + std::strerror(mapError) + ")";
    return nullptr;
  }
  // Windows are read at random places: tell the kernel not to read ahead.
  ::madvise(mapped, static_cast<size_t>(info.st_size), MADV_RANDOM);
  stream->data = static_cast<const uint8_t *>(mapped);
  stream->bytes = static_cast<size_t>(info.st_size);
  stream->tokens = static_cast<int64_t>(stream->bytes / tokenBytes);
  return stream;
}

TokenStream::~TokenStream() {
  if (data)
    ::munmap(const_cast<uint8_t *>(data), bytes);
}

int64_t TokenStream::at(int64_t position) const {
  if (width == Width::U16) {
    uint16_t value;
    std::memcpy(&value, data + position * 2, 2);
    return value;
  }
  uint32_t value;
  std::memcpy(&value, data + position * 4, 4);
  return value;
}

int64_t TokenStream::windowStart(uint64_t seed, int64_t index, int64_t batch, int64_t row,
                                 int64_t length) const {
  uint64_t draw =
      splitmix64(splitmix64(seed) ^ (static_cast<uint64_t>(index) * static_cast<uint64_t>(batch) +
                                     static_cast<uint64_t>(row)));
  return static_cast<int64_t>(draw % static_cast<uint64_t>(tokens - length));
}

std::string TokenStream::fingerprint() const {
  const size_t part = std::min<size_t>(bytes, size_t(1) << 20);
  uint32_t crc = crc32c({reinterpret_cast<const char *>(data), part});
  crc = crc32c({reinterpret_cast<const char *>(data + bytes - part), part}, crc);
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", crc);
  return std::to_string(tokens) + " " + widthName() + " tokens, crc32c " + hex;
}

std::optional<TokenStream::Width> parseTokenWidth(const std::string &name) {
  if (name == "uint16")
    return TokenStream::Width::U16;
  if (name == "uint32")
    return TokenStream::Width::U32;
  return std::nullopt;
}

} // namespace memc::runtime
