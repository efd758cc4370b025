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
/// Bytes per stream in each round of updateHardware.
constexpr size_t kStreamBytes = 8192;

/// The register after kStreamBytes zero bytes follow `state`: a linear map, applied a byte of the
/// state at a time through four tables built once by running each of the 32 basis states
/// through kStreamBytes table steps.
class ZeroBytesShift {
public:
  ZeroBytesShift() {
    uint32_t basis[32];
    for (int bit = 0; bit < 32; ++bit) {
      uint32_t state = uint32_t{1} << bit;
      for (size_t i = 0; i < kStreamBytes; ++i)
        state = (state >> 8) ^ kTable[state & 0xff];
      basis[bit] = state;
    }
    for (int part = 0; part < 4; ++part)
      for (uint32_t byte = 0; byte < 256; ++byte) {
        uint32_t shifted = 0;
        for (int bit = 0; bit < 8; ++bit)
          if (byte >> bit & 1)
            shifted ^= basis[8 * part + bit];
        tables[part][byte] = shifted;
      }
  }
  uint32_t operator()(uint32_t state) const {
    return tables[0][state & 0xff] ^ tables[1][state >> 8 & 0xff] ^
           tables[2][state >> 16 & 0xff] ^ tables[3][state >> 24];
  }

private:
  uint32_t tables[4][256];
};

__attribute__((target("sse4.2"))) uint64_t updateWords(uint64_t state, const unsigned char *data,
                                                         size_t words) {
  for (size_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, data + 8 * i, sizeof(word));
    state = _mm_crc32_u64(state, word);
  }
  return state;
}

/// Eight bytes per instruction. The instruction's latency is three times its throughput, so
/// large inputs go as three interleaved streams of kStreamBytes each, joined by linearity: the
/// state after A B C is shift(shift(state after A) ^ crc(B)) ^ crc(C), with B and C started
/// from zero.
__attribute__((target("sse4.2"))) uint32_t updateHardware(uint32_t state,
                                                            const unsigned char *data,
                                                            size_t size) {
  static const ZeroBytesShift shift;
  constexpr size_t kWords = kStreamBytes / 8;
  for (; size >= 3 * kStreamBytes; data += 3 * kStreamBytes, size -= 3 * kStreamBytes) {
    uint64_t a = state, b = 0, c = 0;
    const unsigned char *second = data + kStreamBytes, *third = data + 2 * kStreamBytes;
    for (size_t i = 0; i < kWords; ++i) {
      uint64_t wa, wb, wc;
      std::memcpy(&wa, data + 8 * i, 8);
      std::memcpy(&wb, second + 8 * i, 8);
      std::memcpy(&wc, third + 8 * i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      c = _mm_crc32_u64(c, wc);
    }
    state = shift(shift(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b)) ^
            static_cast<uint32_t>(c);
  }
  state = static_cast<uint32_t>(updateWords(state, data, size / 8));
  data += size / 8 * 8;
  for (size %= 8; size > 0; --size)
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
