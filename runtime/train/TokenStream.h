//===- TokenStream.h - language-model windows from a flat token file -*- C++ -*-===//
//
// Language-model users keep their data as one flat file of token ids (nanoGPT's train.bin:
// little-endian uint16, or uint32 for vocabularies past 65536), often larger than memory. The
// file is memory-mapped, and each sample is a window of T + 1 tokens at a position drawn from
// the run's seed: the program's token input takes its first T tokens, the labels the T tokens
// one further. Row r of micro-batch i starts at
//
//   splitmix64(splitmix64(seed) ^ (i * batch + r)) mod (tokens - T)
//
// so a run, and a resumed run, draws the same windows (test/training/make_token_reference.py
// draws them the same way for its PyTorch reference).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_TOKENSTREAM_H
#define MEMC_RUNTIME_TRAIN_TOKENSTREAM_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace memc::runtime {

class TokenStream {
public:
  enum class Width { U16, U32 };

  /// Maps `path`; null with a message when it cannot be read, is empty or its size is not a
  /// multiple of the token width.
  static std::unique_ptr<TokenStream> open(const std::string &path, Width width,
                                           std::string &error);
  ~TokenStream();
  TokenStream(const TokenStream &) = delete;
  TokenStream &operator=(const TokenStream &) = delete;

  int64_t size() const { return tokens; }
  int64_t at(int64_t position) const;
  /// The first token of row `row` of micro-batch `index` (of `batch` rows), for windows of
  /// `length` + 1 tokens (the file holds more than `length`).
  int64_t windowStart(uint64_t seed, int64_t index, int64_t batch, int64_t row,
                      int64_t length) const;
  /// What identifies the file for checkpoints: "N uint16 tokens, crc32c XXXXXXXX" over its first
  /// and last MiB (the whole of a large file would take seconds to read).
  std::string fingerprint() const;
  const char *widthName() const { return width == Width::U16 ? "uint16" : "uint32"; }

private:
  TokenStream() = default;
  const uint8_t *data = nullptr;
  size_t bytes = 0;
  int64_t tokens = 0;
  Width width = Width::U16;
};

/// "uint16" or "uint32".
std::optional<TokenStream::Width> parseTokenWidth(const std::string &name);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_TOKENSTREAM_H
