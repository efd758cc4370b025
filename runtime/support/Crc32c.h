//===- Crc32c.h - the CRC-32C checksum of programs and checkpoints -*- C++ -*-===//
//
// Programs and checkpoints carry a CRC-32C (Castagnoli, the iSCSI/ext4 polynomial) of each of
// their sections, so that a flipped byte is an error at load time instead of a silently wrong
// model. CRC-32C because x86-64 computes it in hardware (SSE4.2), fast enough to check gigabytes
// of weights on every start; a table-driven version computes the same values elsewhere.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_CRC32C_H
#define MEMC_RUNTIME_SUPPORT_CRC32C_H

#include <cstdint>
#include <string>
#include <string_view>

namespace memc::runtime {

/// The CRC-32C of `bytes`, continuing from `crc` (the CRC of the bytes before them; 0 to
/// start): crc32c(b, crc32c(a)) == crc32c(a + b). Uses SSE4.2 when the CPU has it.
uint32_t crc32c(std::string_view bytes, uint32_t crc = 0);

/// The same without hardware support, one byte at a time from a table (tests compare the two).
uint32_t crc32cPortable(std::string_view bytes, uint32_t crc = 0);

/// `crc` as 8 lowercase hex digits, and back (false unless exactly 8 hex digits): how
/// checkpoints store their checksums in safetensors metadata.
std::string crc32cHex(uint32_t crc);
bool parseCrc32cHex(std::string_view text, uint32_t &crc);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_CRC32C_H
