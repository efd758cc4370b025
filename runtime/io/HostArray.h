//===- HostArray.h - a dense array in host memory ---------------*- C++ -*-===//
//
// What the runtime exchanges with the outside world: graph inputs and outputs read from and
// written to .npz files, and tensors written to safetensors. Row-major, little-endian bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_HOSTARRAY_H
#define MEMC_RUNTIME_IO_HOSTARRAY_H

#include "runtime/support/DTypes.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memc::runtime {

/// How an array's file stored it, where that is not its dtype's own type: numpy's float64,
/// which the reader narrows to f32, and uint16, which carries bf16 bits (numpy has no bfloat16).
enum class FileType : uint8_t { Same, Float64, Uint16 };

struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Storage bytes of dtype and shape (checkedSizeBytes: packed types round up).
  std::vector<uint8_t> bytes;
  /// Float64: read from '<f8' data, narrowed to f32; the runner notes the conversion where an f32
  /// input takes it. Uint16: read from '<u2' data as bf16 bits, for bf16 inputs only. Other
  /// inputs refuse both, naming the file's type (inputTypeProblem, Npy.h).
  FileType fileType = FileType::Same;

  template <typename T> T *as() { return reinterpret_cast<T *>(bytes.data()); }
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(bytes.data()); }
};

/// Arrays with their names, in file order.
using NamedArrays = std::vector<std::pair<std::string, HostArray>>;

/// An array's description and bytes, wherever they live: a HostArray's, or an uncompressed npz
/// entry read in place from a memory-mapped file (NpzView, Npz.h).
struct ArrayView {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  FileType fileType = FileType::Same;
  const uint8_t *data = nullptr;
  size_t size = 0;

  static ArrayView of(const HostArray &array) {
    return {array.dtype, array.shape, array.fileType, array.bytes.data(), array.bytes.size()};
  }
};

using NamedViews = std::vector<std::pair<std::string, ArrayView>>;

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_HOSTARRAY_H
