//===- Zip.h - the subset of zip archives .npz files use ---------*- C++ -*-===//
//
// Reads and writes zip archives whose entries are stored or deflated (zlib), as numpy's
// savez and savez_compressed write them. Zip64 archives (more than 65535 entries or 4 GiB) are
// refused with a clear message; numpy's zip64 extra fields in local headers are tolerated, since
// their sizes are checked against the central directory's. Every size and offset is checked
// against the archive and every entry's CRC-32 is verified.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_ZIP_H
#define MEMC_RUNTIME_IO_ZIP_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memc::runtime {

/// Where one entry's data lies in an archive, as its central directory header says and its local
/// header confirms.
struct ZipEntryInfo {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0;
  /// The uncompressed size: what reading the entry allocates.
  uint64_t size = 0;
  uint64_t localOffset = 0;
  uint64_t dataStart = 0;
};

/// The entries of `archive` in central-directory order, checked without inflating anything: every
/// size and offset lies within the archive, local and central headers agree, no size exceeds what
/// deflate can encode from its compressed bytes, and (in that order) no name appears twice and no
/// two entries share bytes. What the entries hold is read one at a time with readZipEntry.
bool listZip(std::string_view archive, std::vector<ZipEntryInfo> &entries, std::string &error);

/// The first min(`limit`, entry.size) bytes of the entry (not CRC-checked): enough to read a
/// header before committing to the whole entry.
bool readZipEntryPrefix(std::string_view archive, const ZipEntryInfo &entry, size_t limit,
                        std::string &out, std::string &error);

/// The entry's data: exactly entry.size bytes (inflation stops there), CRC-32 verified.
bool readZipEntry(std::string_view archive, const ZipEntryInfo &entry, std::string &out,
                  std::string &error);
/// Checks a stored entry's CRC-32 in place, reading its bytes once without copying them (for
/// entries read from the mapping, NpzView).
bool checkStoredZipEntry(std::string_view archive, const ZipEntryInfo &entry,
                         std::string &error);

/// An entry to write; the data is the caller's.
struct ZipEntryRef {
  std::string name;
  std::string_view data;
};

/// Builds an archive of `entries`, deflated when `compress` is set; false if it would need zip64.
bool writeZip(const std::vector<ZipEntryRef> &entries, bool compress, std::string &out,
              std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_ZIP_H
