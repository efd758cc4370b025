//===- Zip.cpp - the subset of zip archives .npz files use ----------------===//
#include "runtime/io/Zip.h"

#include "runtime/support/Bytes.h"

#include <algorithm>
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

bool inflateEntry(std::string_view compressed, uint64_t size, std::string &out,
                  std::string &error) {
  if (size > compressed.size() * kMaxDeflateRatio + 64) {
    error = "claims " + std::to_string(size) + " bytes from " +
            std::to_string(compressed.size()) + " compressed bytes, more than deflate can encode";
    return false;
  }
  out.resize(size);
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
  bool complete = status == Z_STREAM_END && stream.total_out == size;
  inflateEnd(&stream);
  if (!complete) {
    error = status == Z_DATA_ERROR ? "corrupted deflate data"
                                   : "deflate data does not decompress to the recorded size";
    return false;
  }
  return true;
}

/// Reads the entry whose central directory header starts at `at`; advances `at` past it.
bool readEntry(std::string_view archive, size_t centralEnd, size_t dataEnd, size_t &at,
               ZipEntry &entry, std::string &error) {
  if (centralEnd - at < kCentralHeaderSize ||
      field<uint32_t>(archive, at) != kCentralHeaderSignature) {
    error = "corrupted central directory";
    return false;
  }
  uint16_t flags = field<uint16_t>(archive, at + 8);
  uint16_t method = field<uint16_t>(archive, at + 10);
  uint32_t crc = field<uint32_t>(archive, at + 16);
  uint32_t compressedSize = field<uint32_t>(archive, at + 20);
  uint32_t size = field<uint32_t>(archive, at + 24);
  size_t nameLength = field<uint16_t>(archive, at + 28);
  size_t recordLength = kCentralHeaderSize + nameLength + field<uint16_t>(archive, at + 30) +
                        field<uint16_t>(archive, at + 32);
  uint32_t localOffset = field<uint32_t>(archive, at + 42);
  if (centralEnd - at < recordLength) {
    error = "corrupted central directory";
    return false;
  }
  entry.name = std::string(archive.substr(at + kCentralHeaderSize, nameLength));
  at += recordLength;
  std::string where = "entry '" + entry.name + "': ";
  if (compressedSize == 0xffffffff || size == 0xffffffff || localOffset == 0xffffffff) {
    error = where + "zip64 archives are not supported";
    return false;
  }
  if (flags & kFlagEncrypted) {
    error = where + "encrypted entries are not supported";
    return false;
  }
  if (method != kMethodStored && method != kMethodDeflate) {
    error = where + "compression method " + std::to_string(method) +
            " is not supported (only stored and deflate)";
    return false;
  }
  if (dataEnd < kLocalHeaderSize || localOffset > dataEnd - kLocalHeaderSize ||
      field<uint32_t>(archive, localOffset) != kLocalHeaderSignature) {
    error = where + "local header is missing or out of range";
    return false;
  }
  uint64_t dataStart = uint64_t(localOffset) + kLocalHeaderSize +
                       field<uint16_t>(archive, localOffset + 26) +
                       field<uint16_t>(archive, localOffset + 28);
  if (!rangeWithin(dataStart, compressedSize, dataEnd) ||
      archive.substr(localOffset + kLocalHeaderSize, nameLength) != entry.name) {
    error = where + "data is out of range or the local header disagrees with the directory";
    return false;
  }
  std::string_view stored = archive.substr(dataStart, compressedSize);
  if (method == kMethodStored) {
    if (compressedSize != size) {
      error = where + "stored entry with different compressed and uncompressed sizes";
      return false;
    }
    entry.data = std::string(stored);
  } else if (!inflateEntry(stored, size, entry.data, error)) {
    error = where + error;
    return false;
  }
  uLong actual = crc32(0, reinterpret_cast<const Bytef *>(entry.data.data()),
                       static_cast<uInt>(entry.data.size()));
  if (actual != crc) {
    error = where + "CRC-32 mismatch (corrupted data)";
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

bool readZip(std::string_view archive, std::vector<ZipEntry> &entries, std::string &error) {
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
  for (uint16_t i = 0; i < count; ++i) {
    ZipEntry entry;
    if (!readEntry(archive, centralEnd, centralOffset, at, entry, error))
      return false;
    entries.push_back(std::move(entry));
  }
  return true;
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
