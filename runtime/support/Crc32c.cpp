//===- Crc32c.cpp - the CRC-32C checksum of programs and checkpoints ------===//
#include "runtime/support/Crc32c.h"

#include <array>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace memc::runtime {
namespace {

/// The reflected Castagnoli polynomial 0x1EDC6F41.
constexpr uint32_t kPolynomial = 0x82F63B78;

constexpr std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc >> 1) ^ (crc & 1 ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kTable = makeTable();

/// The register form of the CRC (inverted before and after), one byte at a time.
uint32_t updatePortable(uint32_t state, const unsigned char *data, size_t size) {
  for (size_t i = 0; i < size; ++i)
    state = (state >> 8) ^ kTable[(state ^ data[i]) & 0xff];
  return state;
}

#if defined(__x86_64__)
/// Eight bytes per instruction; the bytes before an 8-byte boundary and after the last one go
/// one at a time.
__attribute__((target("sse4.2"))) uint32_t updateHardware(uint32_t state,
                                                            const unsigned char *data,
                                                            size_t size) {
  while (size > 0 && reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    state = _mm_crc32_u8(state, *data++);
    --size;
  }
  uint64_t wide = state;
  for (; size >= 8; data += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, data, sizeof(word));
    wide = _mm_crc32_u64(wide, word);
  }
  state = static_cast<uint32_t>(wide);
  for (; size > 0; --size)
    state = _mm_crc32_u8(state, *data++);
  return state;
}

bool hasHardwareCrc32c() {
  static const bool supported = __builtin_cpu_supports("sse4.2");
  return supported;
}
#endif

const unsigned char *bytesOf(std::string_view bytes) {
  return reinterpret_cast<const unsigned char *>(bytes.data());
}

} // namespace

uint32_t crc32c(std::string_view bytes, uint32_t crc) {
#if defined(__x86_64__)
  if (hasHardwareCrc32c())
    return ~updateHardware(~crc, bytesOf(bytes), bytes.size());
#endif
  return crc32cPortable(bytes, crc);
}

uint32_t crc32cPortable(std::string_view bytes, uint32_t crc) {
  return ~updatePortable(~crc, bytesOf(bytes), bytes.size());
}

std::string crc32cHex(uint32_t crc) {
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", static_cast<unsigned>(crc));
  return text;
}

bool parseCrc32cHex(std::string_view text, uint32_t &crc) {
  if (text.size() != 8)
    return false;
  crc = 0;
  for (char c : text) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0)
      return false;
    crc = crc << 4 | static_cast<uint32_t>(digit);
  }
  return true;
}

} // namespace memc::runtime
