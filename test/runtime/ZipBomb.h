//===- ZipBomb.h - hostile .npz archives for the reader's tests --*- C++ -*-===//
//
// A small archive whose entries claim gigabytes: one deflate stream of a .npy file of zeros
// (2 GiB inflated from about 2 MB, within what deflate can honestly encode), shared by several
// entries whose local headers hide the headers after them in their extra fields, so every entry's
// data is the same stream. A reader that inflates what the entries claim allocates gigabytes per
// entry; a correct one refuses the archive before inflating anything.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_RUNTIME_ZIPBOMB_H
#define MEMC_TEST_RUNTIME_ZIPBOMB_H

#include "runtime/support/Bytes.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>
#include <zlib.h>

namespace memc::testing {

/// Raw deflate of a .npy f32 array of `elements` zeros, built from repeated fully flushed blocks
/// (identical bytes each, since a full flush resets the compressor) instead of compressing
/// gigabytes; `npyBytes` is what it inflates to.
inline std::string deflatedZerosNpy(uint64_t elements, uint64_t &npyBytes, uint32_t &crc) {
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(elements) + ",), }";
  header.resize(128 - 10 - 1, ' ');
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  runtime::appendLittleEndian<uint16_t>(npy, static_cast<uint16_t>(header.size()));
  npy += header;
  const std::string chunk(64 * 1024, '\0');
  if ((elements * 4) % chunk.size() != 0)
    throw std::invalid_argument("elements must fill whole 64 KiB chunks");
  uint64_t chunks = elements * 4 / chunk.size();

  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  auto deflateSome = [&](const std::string &in, int flush) {
    std::string out(deflateBound(&stream, in.size()) + 64, '\0');
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
    stream.avail_in = static_cast<uInt>(in.size());
    stream.next_out = reinterpret_cast<Bytef *>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    deflate(&stream, flush);
    out.resize(out.size() - stream.avail_out);
    return out;
  };
  std::string result = deflateSome(npy, Z_FULL_FLUSH);
  std::string first = deflateSome(chunk, Z_FULL_FLUSH), again = deflateSome(chunk, Z_FULL_FLUSH);
  if (first != again)
    throw std::logic_error("fully flushed blocks of zeros differ");
  result.reserve(result.size() + first.size() * chunks + 16);
  for (uint64_t i = 0; i < chunks; ++i)
    result += first;
  result += deflateSome("", Z_FINISH);
  deflateEnd(&stream);

  npyBytes = npy.size() + elements * 4;
  crc = crc32(0, reinterpret_cast<const Bytef *>(npy.data()), static_cast<uInt>(npy.size()));
  uLong chunkCrc =
      crc32(0, reinterpret_cast<const Bytef *>(chunk.data()), static_cast<uInt>(chunk.size()));
  for (uint64_t i = 0; i < chunks; ++i)
    crc = crc32_combine(crc, chunkCrc, static_cast<z_off_t>(chunk.size()));
  return result;
}

/// f32 zeros of 2 GiB less 64 KiB: the largest whole number of 64 KiB chunks under 2 GiB.
constexpr uint64_t kBombElements = ((uint64_t(2) << 30) - 64 * 1024) / 4;

/// An archive of `names.size()` entries that all point at one stream inflating to a .npy of
/// `elements` f32 zeros (a multiple of 16384). With `sameLocalHeader`, every central record
/// points at the first local header (the names must then all be the first one's for the local
/// header to agree).
inline std::string zipBomb(const std::vector<std::string> &names, bool sameLocalHeader = false,
                           uint64_t elements = kBombElements) {
  uint64_t npyBytes;
  uint32_t crc;
  std::string stream = deflatedZerosNpy(elements, npyBytes, crc);
  auto common = [&](std::string &out, const std::string &name, uint16_t extra) {
    runtime::appendLittleEndian<uint16_t>(out, 20);
    runtime::appendLittleEndian<uint16_t>(out, 0);
    runtime::appendLittleEndian<uint16_t>(out, 8); // deflate
    runtime::appendLittleEndian<uint32_t>(out, 0); // time and date
    runtime::appendLittleEndian<uint32_t>(out, crc);
    runtime::appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(stream.size()));
    runtime::appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(npyBytes));
    runtime::appendLittleEndian<uint16_t>(out, static_cast<uint16_t>(name.size()));
    runtime::appendLittleEndian<uint16_t>(out, extra);
  };
  size_t headers = sameLocalHeader ? 1 : names.size();
  std::vector<size_t> offsets(headers);
  size_t total = 0;
  for (size_t i = 0; i < headers; ++i)
    total += 30 + names[i].size();
  std::string out;
  for (size_t i = 0; i < headers; ++i) {
    offsets[i] = out.size();
    // The extra field runs to the stream: it hides the local headers after this one.
    size_t rest = total - (out.size() + 30 + names[i].size());
    runtime::appendLittleEndian<uint32_t>(out, 0x04034b50);
    common(out, names[i], static_cast<uint16_t>(rest));
    out += names[i];
  }
  out += stream;
  size_t central = out.size();
  for (size_t i = 0; i < names.size(); ++i) {
    runtime::appendLittleEndian<uint32_t>(out, 0x02014b50);
    runtime::appendLittleEndian<uint16_t>(out, 20);
    common(out, names[i], 0);
    runtime::appendLittleEndian<uint16_t>(out, 0); // comment
    runtime::appendLittleEndian<uint16_t>(out, 0); // disk
    runtime::appendLittleEndian<uint16_t>(out, 0); // internal attributes
    runtime::appendLittleEndian<uint32_t>(out, 0); // external attributes
    runtime::appendLittleEndian<uint32_t>(out,
                                          static_cast<uint32_t>(offsets[sameLocalHeader ? 0 : i]));
    out += names[i];
  }
  size_t centralSize = out.size() - central;
  runtime::appendLittleEndian<uint32_t>(out, 0x06054b50);
  runtime::appendLittleEndian<uint32_t>(out, 0);
  runtime::appendLittleEndian<uint16_t>(out, static_cast<uint16_t>(names.size()));
  runtime::appendLittleEndian<uint16_t>(out, static_cast<uint16_t>(names.size()));
  runtime::appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(centralSize));
  runtime::appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(central));
  runtime::appendLittleEndian<uint16_t>(out, 0);
  return out;
}

} // namespace memc::testing

#endif // MEMC_TEST_RUNTIME_ZIPBOMB_H
