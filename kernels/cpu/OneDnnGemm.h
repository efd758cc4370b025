//===- OneDnnGemm.h - one bf16 product into f32 through oneDNN ---*- C++ -*-===//
//
// The fused LM-head loss (LinearCrossEntropy.cpp) multiplies tiles of bf16 operands into f32
// logits and f32 gradient sums on each pool thread; this runs one such product as a
// single-threaded oneDNN matmul (AVX512-BF16/AMX kernels, f32 accumulation) with the caller's
// scratchpad, so what it needs is planned. Operands keep their layouts: transposes and leading
// dimensions are the memory descriptors' strides.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNGEMM_H
#define MEMC_KERNELS_CPU_ONEDNNGEMM_H

#include <cstdint>
#include <optional>
#include <vector>

namespace memc::kernels {

/// C[M,N] (+)= op(A)[M,K] * op(B)[K,N]: A and B bf16 (row-major, a transposed A stored [K,M]
/// with leading dimension lda, a transposed B [N,K] with ldb), C f32 with leading dimension ldc,
/// added to when `accumulate`.
struct Bf16GemmShape {
  int64_t m, n, k, lda, ldb, ldc;
  bool transposeA, transposeB, accumulate;

  std::vector<int64_t> key() const {
    return {m, n, k, lda, ldb, ldc, transposeA, transposeB, accumulate};
  }
};

/// The scratchpad bytes oneDNN's product of `shape` needs on one thread; nullopt where oneDNN
/// has no optimized implementation for it (the caller computes in f32 then).
std::optional<uint64_t> bf16GemmScratchpad(const Bf16GemmShape &shape);

/// Runs the product on the calling thread; `shape` must have a scratchpad size (above).
void bf16GemmSerial(const Bf16GemmShape &shape, const uint16_t *a, const uint16_t *b, float *c,
                    uint8_t *scratchpad);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNGEMM_H
