//===- ScalarOperand.h - reading a 0-d operand inside a kernel --*- C++ -*-===//
//
// Run-time scalars (learning rate, step number, dropout salt, the apply flag of gradient
// accumulation, later the loss scale) are 0-d tensors in device memory like any other value, so
// the graph can compute them on the device (dynamic loss scaling changes its scale from an
// overflow check without a round trip to the host). The contract for every kernel: a scalar
// operand is never read on the host before a launch; the kernel passes its address into the
// kernel body and reads it there, on its own device, as torch's capturable fused AdamW computes
// its bias corrections from the step tensor on the GPU. ScalarOperand is that address and get()
// the one read, callable from CUDA device code as well (MEMC_HOST_DEVICE).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_SCALAROPERAND_H
#define MEMC_KERNELS_SCALAROPERAND_H

#include "kernels/HostDevice.h"
#include "kernels/Tensor.h"

namespace memc::kernels {

/// A 0-d operand of storage type T (its check made sure of dtype and shape).
template <typename T> class ScalarOperand {
public:
  explicit ScalarOperand(const TensorView &tensor) : data(static_cast<const T *>(tensor.data)) {}
  /// The value, read where the kernel body runs.
  MEMC_HOST_DEVICE T get() const { return *data; }

private:
  const T *data;
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_SCALAROPERAND_H
