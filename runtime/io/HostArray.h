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

struct HostArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Storage bytes of dtype and shape (checkedSizeBytes: packed types round up).
  std::vector<uint8_t> bytes;
  /// Read from float64 data ('<f8' in a .npy), which the reader narrows to f32: the runner notes
  /// the conversion where an f32 input takes it and names f64 where another type is expected.
  bool fromFloat64 = false;

  template <typename T> T *as() { return reinterpret_cast<T *>(bytes.data()); }
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(bytes.data()); }
};

/// Arrays with their names, in file order.
using NamedArrays = std::vector<std::pair<std::string, HostArray>>;

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_HOSTARRAY_H
