//===- Tf32.h - f32 products on TF32 tensor cores, when allowed --*- C++ -*-===//
//
// `memc --allow-tf32` lets a GPU multiply f32 operands on its TF32 tensor cores (products of
// 10-bit mantissas, sums in f32), as torch.backends.cuda.matmul.allow_tf32 = True does: about
// 8x the f32 throughput on Hopper for results within ~1e-3 relative. Off by default, like
// PyTorch's. The compiler marks the steps of the kernels built on matrix products with the
// attribute; the CUDA kernels read it; the CPU computes f32 whatever it says.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_TF32_H
#define MEMC_KERNELS_TF32_H

#include "kernels/Kernel.h"

#include <string>

namespace memc::kernels {

/// The step attribute (integer 1) that allows TF32 products.
inline constexpr const char *kAllowTf32Attribute = "allow_tf32";

/// Whether `kernel` is built on matrix products TF32 could speed up.
inline bool takesTf32(const std::string &kernel) {
  for (const char *name :
       {"matmul", "matmul_nf4", "linear_cross_entropy", "linear_cross_entropy_grad", "conv",
        "conv_grad_input", "conv_grad_weight"})
    if (kernel == name)
      return true;
  return false;
}

/// Whether the call's step allows TF32 products.
inline bool allowsTf32(const KernelCall &call) {
  return attributesOf(call).intOr(kAllowTf32Attribute, 0) == 1;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_TF32_H
