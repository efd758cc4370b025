//===- ExternalDataFile.h - the one weights file beside a zoo model --------===//
//
// Every initializer of a zoo model lives in one external-data file (OUT.onnx.data), at a 64-byte
// aligned offset. This file owns what goes into that file: how each tensor is initialised and how the
// bytes get onto disk fast (sparse where the content is zero, large sequential writes otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_BENCH_ZOO_EXTERNALDATAFILE_H
#define MEMC_BENCH_ZOO_EXTERNALDATAFILE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace memc::zoo {

/// Offsets in the data file are multiples of this, so a loader can mmap the file and hand out aligned
/// pointers (64 bytes covers AVX-512 loads and a cache line).
constexpr uint64_t kExternalDataAlignment = 64;

/// What an initializer holds when it is written for real.
struct WeightInit {
  enum class Kind { Normal, Ones, Zeros, Bytes };
  Kind kind = Kind::Zeros;
  float stddev = 0.0f;        ///< Normal only: N(0, stddev^2), float32.
  std::vector<uint8_t> bytes; ///< Bytes only: the exact little-endian contents.

  static WeightInit normal(float stddev) { return {Kind::Normal, stddev, {}}; }
  static WeightInit ones() { return {Kind::Ones, 0.0f, {}}; }
  static WeightInit zeros() { return {Kind::Zeros, 0.0f, {}}; }
  template <typename T> static WeightInit values(const std::vector<T> &values) {
    WeightInit init{Kind::Bytes, 0.0f, std::vector<uint8_t>(values.size() * sizeof(T))};
    if (!values.empty())
      std::memcpy(init.bytes.data(), values.data(), init.bytes.size());
    return init;
  }
};

/// One initializer's place in the data file.
struct ExternalTensor {
  std::string name;
  uint64_t offset = 0;
  uint64_t byteSize = 0;
  /// Trainable parameters follow --weights; buffers (masks, position ids, RoPE tables, BatchNorm running
  /// statistics) keep their real contents unless --weights none, so a zeros model still runs correctly.
  bool trainable = true;
  WeightInit init;
};

/// The --weights option.
enum class WeightsMode {
  Random, ///< Parameters drawn from their WeightInit (deterministic per tensor name).
  Zeros,  ///< Parameters all zero (sparse holes); buffers written for real.
  None    ///< Nothing written: a sparse file of the right size, for compile-only benchmarks.
};

/// Creates `path` of `fileSize` bytes and writes the tensors' contents per `mode`. Returns false with
/// `error` set on an I/O failure.
bool writeExternalDataFile(const std::string &path, const std::vector<ExternalTensor> &tensors,
                           uint64_t fileSize, WeightsMode mode, std::string &error);

} // namespace memc::zoo

#endif // MEMC_BENCH_ZOO_EXTERNALDATAFILE_H
