//===- Bytes.h - little-endian fields and overflow-checked sizes -*- C++ -*-===//
//
// Every file format the runtime reads (plans, bundles, safetensors, zip, npy) is untrusted: sizes
// and offsets come from disk. These helpers read fixed-width little-endian fields from byte
// ranges without alignment assumptions, and do size arithmetic that reports overflow instead of
// wrapping around. It also formats and parses byte counts for people.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_BYTES_H
#define MEMC_RUNTIME_SUPPORT_BYTES_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace memc::runtime {

/// Reads an unsigned little-endian integer of sizeof(T) bytes at `at` (the caller checked bounds).
template <typename T> T readLittleEndian(const void *at) {
  const auto *bytes = static_cast<const uint8_t *>(at);
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(bytes[i]) << (8 * i);
  return value;
}

/// Appends `value` as sizeof(T) little-endian bytes.
template <typename T> void appendLittleEndian(std::string &out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((static_cast<uint64_t>(value) >> (8 * i)) & 0xff));
}

/// a * b and a + b; false on overflow.
inline bool checkedMul(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_mul_overflow(a, b, &out);
}
inline bool checkedAdd(uint64_t a, uint64_t b, uint64_t &out) {
  return !__builtin_add_overflow(a, b, &out);
}

/// True when [offset, offset + size) lies within [0, limit), without overflow.
inline bool rangeWithin(uint64_t offset, uint64_t size, uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

inline bool isPowerOfTwo(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

/// A human-readable byte count: "512 B", "1.50 KiB", "3.25 MiB", "1.00 GiB". The compiler's
/// reports and messages print sizes with it too.
std::string formatBytes(uint64_t bytes);

/// Parses "24GiB", "1.5GB", "512MiB", "1000000" (bytes): what users write for a memory budget.
/// Units: B, KB, MB, GB, TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024),
/// case-insensitive; blanks around the text and before the unit are allowed.
std::optional<uint64_t> parseByteSize(std::string_view text);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_BYTES_H
