//===- ExternalDataFile.cpp - writing the zoo's external-data file ---------===//

#include "ExternalDataFile.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fcntl.h>
#include <unistd.h>

namespace memc::zoo {
namespace {

/// xorshift64*: one 64-bit draw per float keeps ~500 MB of weights to well under a second of compute.
class XorShift64Star {
public:
  explicit XorShift64Star(uint64_t seed) : state(splitMix64(seed)) {}
  uint64_t next() {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
  }

private:
  // Spreads similar seeds (names differing in one character) apart and never yields the forbidden 0.
  static uint64_t splitMix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x ? x : 1;
  }
  uint64_t state;
};

/// Seeding by name makes every tensor's values independent of layout and of the other tensors, so a
/// model regenerated with more layers keeps the weights it had.
uint64_t fnv1a(const std::string &text) {
  uint64_t hash = 0xCBF29CE484222325ULL;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001B3ULL;
  return hash;
}

/// Irwin-Hall with four 16-bit uniforms from one draw: mean 0, the requested standard deviation, tails
/// cut at ±3.46 sigma. Close enough to normal for initial weights, and branch-free.
void fillNormal(XorShift64Star &rng, float stddev, float *out, size_t count) {
  const float scale = stddev * std::sqrt(3.0f) / 65536.0f;
  for (size_t i = 0; i < count; ++i) {
    uint64_t r = rng.next();
    int64_t sum = int64_t(r & 0xFFFF) + int64_t((r >> 16) & 0xFFFF) + int64_t((r >> 32) & 0xFFFF) +
                  int64_t(r >> 48);
    out[i] = float(sum - 131070) * scale;
  }
}

bool writeAll(int fd, const void *data, size_t size, uint64_t offset, std::string &error) {
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::pwrite(fd, bytes, size, off_t(offset));
    if (written < 0) {
      if (errno == EINTR)
        continue;
      error = std::string("write failed: ") + std::strerror(errno);
      return false;
    }
    bytes += written;
    offset += uint64_t(written);
    size -= size_t(written);
  }
  return true;
}

/// Generated floats go out in chunks of this many bytes: large enough that syscalls don't matter,
/// small enough to stay in memory for a 7B model's 500 MB embedding tables.
constexpr size_t kChunkBytes = size_t(32) << 20;

bool writeGenerated(int fd, const ExternalTensor &tensor, std::vector<float> &chunk,
                    std::string &error) {
  XorShift64Star rng(fnv1a(tensor.name));
  const size_t total = tensor.byteSize / sizeof(float);
  for (size_t done = 0; done < total;) {
    size_t count = std::min(chunk.size(), total - done);
    if (tensor.init.kind == WeightInit::Kind::Normal)
      fillNormal(rng, tensor.init.stddev, chunk.data(), count);
    else
      std::fill_n(chunk.data(), count, 1.0f);
    if (!writeAll(fd, chunk.data(), count * sizeof(float), tensor.offset + done * sizeof(float),
                  error))
      return false;
    done += count;
  }
  return true;
}

/// A region left untouched reads back as zeros, so zero content costs nothing but the ftruncate.
bool needsWrite(const ExternalTensor &tensor, WeightsMode mode) {
  if (mode == WeightsMode::None || tensor.init.kind == WeightInit::Kind::Zeros)
    return false;
  return !(tensor.trainable && mode == WeightsMode::Zeros);
}

} // namespace

bool writeExternalDataFile(const std::string &path, const std::vector<ExternalTensor> &tensors,
                           uint64_t fileSize, WeightsMode mode, std::string &error) {
  // O_TRUNC first so that an older, larger model's bytes don't show through the holes.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    error = "cannot create '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = ::ftruncate(fd, off_t(fileSize)) == 0;
  if (!ok)
    error = "cannot size '" + path + "': " + std::strerror(errno);

  std::vector<float> chunk;
  for (size_t i = 0; ok && i < tensors.size(); ++i) {
    const ExternalTensor &tensor = tensors[i];
    if (!needsWrite(tensor, mode))
      continue;
    if (tensor.init.kind == WeightInit::Kind::Bytes) {
      ok = writeAll(fd, tensor.init.bytes.data(), tensor.init.bytes.size(), tensor.offset, error);
    } else {
      if (chunk.empty())
        chunk.resize(kChunkBytes / sizeof(float));
      ok = writeGenerated(fd, tensor, chunk, error);
    }
  }
  if (::close(fd) != 0 && ok) {
    error = "cannot close '" + path + "': " + std::strerror(errno);
    ok = false;
  }
  return ok;
}

} // namespace memc::zoo
