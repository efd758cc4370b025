//===- Tensor.h - what a kernel computes on --------------------*- C++ -*-===//
//
// Kernels see dense, row-major tensors: a pointer into device memory (the arena, a persistent
// region or a constant), an element type and a static shape. No strides: memc's planner gives
// every value its own contiguous buffer, and layout changes are explicit transposes.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_TENSOR_H
#define MEMC_KERNELS_TENSOR_H

#include "kernels/DTypeTable.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memc::kernels {

struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// The same value in host memory, where the host knows it when the kernel is launched: the
  /// executor sets it for the plan's scalar graph inputs (the learning rate, the micro-batch's
  /// apply flag, ...), valid while the run function runs (the next run's binding rewrites it);
  /// null elsewhere. A GPU kernel that must decide on the host (whether a gated collective
  /// communicates) reads it instead of waiting for the device.
  const void *hostData = nullptr;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numElements() const;
  /// Storage bytes (packed types round up); 0 if they overflow, which check() rejects first.
  size_t sizeBytes() const;
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

std::string formatShape(const std::vector<int64_t> &shape);

} // namespace memc::kernels

#endif // MEMC_KERNELS_TENSOR_H
