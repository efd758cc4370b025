//===- Zip.cpp - the subset of zip archives .npz files use ----------------===//
#include "runtime/io/Zip.h"

#include "runtime/support/Bytes.h"

#include <algorithm>
#include <set>
#include <zlib.h>

namespace memc::runtime {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kFlagEncrypted = 1;
constexpr uint16_t kFlagDataDescriptor = 1 << 3;
constexpr uint16_t kZip64ExtraId = 1;
constexpr uint16_t kFlagUtf8 = 1 << 11;
/// 1980-01-01, the earliest DOS date: written archives do not depend on the clock.
constexpr uint16_t kDosDate = (1 << 5) | 1;
/// Deflate cannot expand data by more than this factor (RFC 1951 worst case is about 1032:1),
/// which bounds how much memory a corrupted size field can make the reader allocate.
constexpr uint64_t kMaxDeflateRatio = 1032;

template <typename T> T field(std::string_view bytes, size_t at) {
  return readLittleEndian<T>(bytes.data() + at);
}

/// The end-of-central-directory record: the last signature whose comment length reaches exactly
/// to the end of the archive.
bool findEndRecord(std::string_view archive, size_t &at, std::string &error) {
  if (archive.size() < kEndSize) {
    error = "not a zip archive (" + std::to_string(archive.size()) + " bytes)";
    return false;
  }
  size_t lowest = archive.size() - kEndSize > 0xffff ? archive.size() - kEndSize - 0xffff : 0;
  for (size_t i = archive.size() - kEndSize + 1; i-- > lowest;) {
    if (field<uint32_t>(archive, i) == kEndSignature &&
        i + kEndSize + field<uint16_t>(archive, i + 20) == archive.size()) {
      at = i;
      return true;
    }
  }
  error = "not a zip archive or truncated (no end of central directory record)";
  return false;
}

/// Inflates `compressed` into `out`, which has room for exactly the bytes wanted: inflation
/// stops there, so a stream longer than declared never allocates more. `whole` says whether the
/// stream must end exactly there.
bool inflateInto(std::string_view compressed, std::string &out, bool whole, std::string &error) {
  z_stream stream{};
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) {
    error = "cannot initialize zlib";
    return false;
  }
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int status = inflate(&stream, Z_FINISH);
  bool ended = status == Z_STREAM_END && stream.total_out == out.size();
  bool complete = whole ? ended : ended || (status == Z_BUF_ERROR && stream.avail_out == 0);
  inflateEnd(&stream);
  if (!complete) {
    error = status == Z_DATA_ERROR ? "corrupted deflate data"
                                   : "deflate data does not decompress to the recorded size";
    return false;
  }
  return true;
}

/// Checks the fields of the local header at `entry.localOffset` against the central directory's:
/// a reader that trusted either one alone could be told two sizes for one entry. numpy writes
/// zip64 extra fields (sizes 0xffffffff in the header); a data descriptor leaves them zero.
bool checkLocalHeader(std::string_view archive, const ZipEntryInfo &entry, std::string &error) {
  size_t at = entry.localOffset;
  uint16_t flags = field<uint16_t>(archive, at + 6);
  uint64_t compressedSize = field<uint32_t>(archive, at + 18);
  uint64_t size = field<uint32_t>(archive, at + 22);
  std::string_view extra = archive.substr(at + kLocalHeaderSize + field<uint16_t>(archive, at + 26),
                                          field<uint16_t>(archive, at + 28));
  while (extra.size() >= 4 && (size == 0xffffffff || compressedSize == 0xffffffff)) {
    uint16_t id = field<uint16_t>(extra, 0), length = field<uint16_t>(extra, 2);
    std::string_view payload = extra.substr(4, length);
    if (id == kZip64ExtraId) {
      size_t next = 0;
      for (uint64_t *value : {&size, &compressedSize})
        if (*value == 0xffffffff && payload.size() >= next + 8) {
          *value = field<uint64_t>(payload, next);
          next += 8;
        }
      break;
    }
    extra.remove_prefix(std::min<size_t>(extra.size(), 4 + size_t(length)));
  }
  bool described = flags & kFlagDataDescriptor;
  if (field<uint16_t>(archive, at + 8) != entry.method ||
      (!described && (field<uint32_t>(archive, at + 14) != entry.crc ||
                      compressedSize != entry.compressedSize || size != entry.size))) {
    error = "the local header disagrees with the central directory (method, CRC or sizes)";
    return false;
  }
  return true;
}

/// Reads the central directory header at `at`; advances `at` past it.
bool readCentralRecord(std::string_view archive, size_t centralEnd, size_t &at, ZipEntryInfo &entry,
                       std::string &error) {
  if (centralEnd - at < kCentralHeaderSize ||
      field<uint32_t>(archive, at) != kCentralHeaderSignature) {
    error = "corrupted central directory";
    return false;
  }
  uint16_t flags = field<uint16_t>(archive, at + 8);
  entry.method = field<uint16_t>(archive, at + 10);
  entry.crc = field<uint32_t>(archive, at + 16);
  entry.compressedSize = field<uint32_t>(archive, at + 20);
  entry.size = field<uint32_t>(archive, at + 24);
  size_t nameLength = field<uint16_t>(archive, at + 28);
  size_t recordLength = kCentralHeaderSize + nameLength + field<uint16_t>(archive, at + 30) +
                        field<uint16_t>(archive, at + 32);
  entry.localOffset = field<uint32_t>(archive, at + 42);
  if (centralEnd - at < recordLength) {
    error = "corrupted central directory";
    return false;
  }
  entry.name = std::string(archive.substr(at + kCentralHeaderSize, nameLength));
  at += recordLength;
  std::string where = "entry '" + entry.name + "': ";
  if (entry.compressedSize == 0xffffffff || entry.size == 0xffffffff ||
      entry.localOffset == 0xffffffff) {
    error = where + "zip64 archives are not supported";
    return false;
  }
  if (flags & kFlagEncrypted) {
    error = where + "encrypted entries are not supported";
    return false;
  }
  if (entry.method != kMethodStored && entry.method != kMethodDeflate) {
    error = where + "compression method " + std::to_string(entry.method) +
            " is not supported (only stored and deflate)";
    return false;
  }
  if (entry.method == kMethodStored && entry.compressedSize != entry.size) {
    error = where + "stored entry with different compressed and uncompressed sizes";
    return false;
  }
  if (entry.method == kMethodDeflate && entry.size > entry.compressedSize * kMaxDeflateRatio + 64) {
    error = where + "claims " + std::to_string(entry.size) + " bytes from " +
            std::to_string(entry.compressedSize) +
            " compressed bytes, more than deflate can encode";
    return false;
  }
  return true;
}

/// Finds the entry's local header and data within the archive's data area (before the central
/// directory at `dataEnd`).
bool locateEntryData(std::string_view archive, size_t dataEnd, ZipEntryInfo &entry,
                     std::string &error) {
  std::string where = "entry '" + entry.name + "': ";
  if (dataEnd < kLocalHeaderSize || entry.localOffset > dataEnd - kLocalHeaderSize ||
      field<uint32_t>(archive, entry.localOffset) != kLocalHeaderSignature) {
    error = where + "local header is missing or out of range";
    return false;
  }
  size_t localNameLength = field<uint16_t>(archive, entry.localOffset + 26);
  entry.dataStart = entry.localOffset + kLocalHeaderSize + localNameLength +
                    field<uint16_t>(archive, entry.localOffset + 28);
  if (!rangeWithin(entry.dataStart, entry.compressedSize, dataEnd) ||
      archive.substr(entry.localOffset + kLocalHeaderSize, localNameLength) != entry.name) {
    error = where + "data is out of range or the local header disagrees with the directory";
    return false;
  }
  if (!checkLocalHeader(archive, entry, error)) {
    error = where + error;
    return false;
  }
  return true;
}

/// Refuses entries whose bytes (local header to end of data) overlap: sharing one deflate stream
/// among entries is how a small archive claims gigabytes many times over.
bool checkNoOverlap(const std::vector<ZipEntryInfo> &entries, std::string &error) {
  std::vector<const ZipEntryInfo *> byOffset;
  for (const ZipEntryInfo &entry : entries)
    byOffset.push_back(&entry);
  std::sort(byOffset.begin(), byOffset.end(),
            [](auto *a, auto *b) { return a->localOffset < b->localOffset; });
  for (size_t i = 1; i < byOffset.size(); ++i)
    if (byOffset[i - 1]->dataStart + byOffset[i - 1]->compressedSize > byOffset[i]->localOffset) {
      error = "entries '" + byOffset[i - 1]->name + "' and '" + byOffset[i]->name +
              "' overlap (a zip bomb's trick; a real archive never shares bytes between entries)";
      return false;
    }
  return true;
}

bool deflateData(std::string_view data, std::string &out) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return false;
  out.resize(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  bool ok = deflate(&stream, Z_FINISH) == Z_STREAM_END;
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return ok;
}

/// The fields local and central headers share, from "version needed" to the extra length.
void appendCommonFields(std::string &out, uint16_t flags, uint16_t method, uint32_t crc,
                        uint32_t compressedSize, uint32_t size, uint16_t nameLength) {
  appendLittleEndian<uint16_t>(out, 20); // version needed: 2.0 (deflate)
  appendLittleEndian<uint16_t>(out, flags);
  appendLittleEndian<uint16_t>(out, method);
  appendLittleEndian<uint16_t>(out, 0); // time
  appendLittleEndian<uint16_t>(out, kDosDate);
  appendLittleEndian<uint32_t>(out, crc);
  appendLittleEndian<uint32_t>(out, compressedSize);
  appendLittleEndian<uint32_t>(out, size);
  appendLittleEndian<uint16_t>(out, nameLength);
  appendLittleEndian<uint16_t>(out, 0); // extra length
}

} // namespace

bool listZip(std::string_view archive, std::vector<ZipEntryInfo> &entries, std::string &error) {
  entries.clear();
  size_t end;
  if (!findEndRecord(archive, end, error))
    return false;
  uint16_t disk = field<uint16_t>(archive, end + 4);
  uint16_t centralDisk = field<uint16_t>(archive, end + 6);
  uint16_t count = field<uint16_t>(archive, end + 10);
  uint32_t centralSize = field<uint32_t>(archive, end + 12);
  uint32_t centralOffset = field<uint32_t>(archive, end + 16);
  bool zip64Locator = end >= kZip64LocatorSize &&
                      field<uint32_t>(archive, end - kZip64LocatorSize) == kZip64LocatorSignature;
  if (zip64Locator || count == 0xffff || centralSize == 0xffffffff ||
      centralOffset == 0xffffffff) {
    error = "zip64 archives are not supported";
    return false;
  }
  if (disk != 0 || centralDisk != 0 || field<uint16_t>(archive, end + 8) != count) {
    error = "multi-part zip archives are not supported";
    return false;
  }
  if (!rangeWithin(centralOffset, centralSize, end)) {
    error = "central directory is out of range (truncated archive?)";
    return false;
  }
  size_t at = centralOffset;
  size_t centralEnd = size_t(centralOffset) + centralSize;
  entries.resize(count);
  std::set<std::string> names;
  for (ZipEntryInfo &entry : entries) {
    if (!readCentralRecord(archive, centralEnd, at, entry, error))
      return false;
    if (!names.insert(entry.name).second) {
      error = "entry '" + entry.name + "' appears twice";
      return false;
    }
  }
  for (ZipEntryInfo &entry : entries)
    if (!locateEntryData(archive, centralOffset, entry, error))
      return false;
  return checkNoOverlap(entries, error);
}

bool readZipEntryPrefix(std::string_view archive, const ZipEntryInfo &entry, size_t limit,
                        std::string &out, std::string &error) {
  std::string_view stored = archive.substr(entry.dataStart, entry.compressedSize);
  out.assign(std::min<uint64_t>(limit, entry.size), '\0');
  if (entry.method == kMethodStored) {
    out.assign(stored.substr(0, out.size()));
    return true;
  }
  if (!inflateInto(stored, out, /*whole=*/out.size() == entry.size, error)) {
    error = "entry '" + entry.name + "': " + error;
    return false;
  }
  return true;
}

namespace {

/// zlib's CRC-32 over `bytes` of any size (its length argument is 32 bits).
uLong crc32Of(std::string_view bytes) {
  uLong crc = crc32(0, nullptr, 0);
  constexpr size_t kChunk = size_t(1) << 30;
  for (size_t at = 0; at < bytes.size(); at += kChunk)
    crc = crc32(crc, reinterpret_cast<const Bytef *>(bytes.data() + at),
                static_cast<uInt>(std::min(kChunk, bytes.size() - at)));
  return crc;
}

bool checkCrc(const ZipEntryInfo &entry, std::string_view bytes, std::string &error) {
  if (crc32Of(bytes) == entry.crc)
    return true;
  error = "entry '" + entry.name + "': CRC-32 mismatch (corrupted data)";
  return false;
}

} // namespace

bool readZipEntry(std::string_view archive, const ZipEntryInfo &entry, std::string &out,
                  std::string &error) {
  return readZipEntryPrefix(archive, entry, entry.size, out, error) &&
         checkCrc(entry, out, error);
}

bool checkStoredZipEntry(std::string_view archive, const ZipEntryInfo &entry,
                         std::string &error) {
  return checkCrc(entry, archive.substr(entry.dataStart, entry.compressedSize), error);
}

bool writeZip(const std::vector<ZipEntryRef> &entries, bool compress, std::string &out,
              std::string &error) {
  out.clear();
  std::string central;
  if (entries.size() >= 0xffff) {
    error = "too many entries for a zip archive without zip64";
    return false;
  }
  for (const ZipEntryRef &entry : entries) {
    std::string deflated;
    if (compress && !deflateData(entry.data, deflated)) {
      error = "zlib failed to compress '" + entry.name + "'";
      return false;
    }
    std::string_view payload = compress ? std::string_view(deflated) : entry.data;
    uint64_t offset = out.size();
    if (entry.data.size() >= 0xffffffff || offset + kLocalHeaderSize + entry.name.size() +
                                                   payload.size() >= 0xffffffff ||
        entry.name.size() > 0xffff) {
      error = "'" + entry.name + "' makes the archive too large for zip without zip64";
      return false;
    }
    uint32_t crc = crc32(0, reinterpret_cast<const Bytef *>(entry.data.data()),
                         static_cast<uInt>(entry.data.size()));
    bool ascii = std::all_of(entry.name.begin(), entry.name.end(),
                             [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    uint16_t flags = ascii ? 0 : kFlagUtf8;
    uint16_t method = compress ? kMethodDeflate : kMethodStored;
    auto nameLength = static_cast<uint16_t>(entry.name.size());

    appendLittleEndian<uint32_t>(out, kLocalHeaderSignature);
    appendCommonFields(out, flags, method, crc, static_cast<uint32_t>(payload.size()),
                       static_cast<uint32_t>(entry.data.size()), nameLength);
    out += entry.name;
    out += payload;

    appendLittleEndian<uint32_t>(central, kCentralHeaderSignature);
    appendLittleEndian<uint16_t>(central, 20); // version made by: 2.0, MS-DOS attributes
    appendCommonFields(central, flags, method, crc, static_cast<uint32_t>(payload.size()),
                       static_cast<uint32_t>(entry.data.size()), nameLength);
    appendLittleEndian<uint16_t>(central, 0); // comment length
    appendLittleEndian<uint16_t>(central, 0); // disk
    appendLittleEndian<uint16_t>(central, 0); // internal attributes
    appendLittleEndian<uint32_t>(central, 0); // external attributes
    appendLittleEndian<uint32_t>(central, static_cast<uint32_t>(offset));
    central += entry.name;
  }
  if (out.size() + central.size() >= 0xffffffff) {
    error = "archive too large for zip without zip64";
    return false;
  }
  uint64_t centralOffset = out.size();
  out += central;
  appendLittleEndian<uint32_t>(out, kEndSignature);
  appendLittleEndian<uint16_t>(out, 0);
  appendLittleEndian<uint16_t>(out, 0);
  appendLittleEndian<uint16_t>(out, static_cast<uint16_t>(entries.size()));
  appendLittleEndian<uint16_t>(out, static_cast<uint16_t>(entries.size()));
  appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(central.size()));
  appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(centralOffset));
  appendLittleEndian<uint16_t>(out, 0); // comment length
  return true;
}

} // namespace memc::runtime
