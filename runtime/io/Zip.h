//===- Zip.h - the subset of zip archives .npz files use ---------*- C++ -*-===//
//
// Reads and writes zip archives whose entries are stored or deflated (zlib), as numpy's
// savez and savez_compressed write them. Zip64 archives (more than 65535 entries or 4 GiB) are
// refused with a clear message; numpy's zip64 extra fields in local headers are tolerated, since
// the reader takes sizes from the central directory. Every size and offset is checked against
// the archive and every entry's CRC-32 is verified.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_ZIP_H
#define MEMC_RUNTIME_IO_ZIP_H

#include <string>
#include <string_view>
#include <vector>

namespace memc::runtime {

struct ZipEntry {
  std::string name;
  std::string data;
};

/// Extracts every entry of `archive`, in central-directory order.
bool readZip(std::string_view archive, std::vector<ZipEntry> &entries, std::string &error);

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
