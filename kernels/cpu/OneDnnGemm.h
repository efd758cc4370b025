//===- OneDnnGemm.h - one bf16 product through oneDNN ------------*- C++ -*-===//
//
// One product of bf16 operands as a single-threaded oneDNN matmul (AVX512-BF16/AMX kernels, f32
// accumulation) on the calling pool thread, with the caller's scratchpad, so what it needs is
// planned: the blocks of a bf16 matmul (OneDnnMatMul.h, a bf16 result) and the tiles of the
// fused LM-head loss (LinearCrossEntropy.cpp, f32 logits and gradient sums). Operands keep their
// layouts: transposes and leading dimensions are the memory descriptors' strides.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNGEMM_H
#define MEMC_KERNELS_CPU_ONEDNNGEMM_H

#include <cstdint>
#include <optional>
#include <vector>

namespace memc::kernels {

/// C[M,N] (+)= op(A)[M,K] * op(B)[K,N]: A and B bf16 (row-major, a transposed A stored [K,M]
/// with leading dimension lda, a transposed B [N,K] with ldb), C with leading dimension ldc, f32
/// (added to when `accumulate`) or, with `bf16Result`, bf16 rounded once.
struct Bf16GemmShape {
  int64_t m, n, k, lda, ldb, ldc;
  bool transposeA, transposeB, accumulate;
  bool bf16Result = false;

  std::vector<int64_t> key() const {
    return {m, n, k, lda, ldb, ldc, transposeA, transposeB, accumulate, bf16Result};
  }
};

/// The scratchpad bytes oneDNN's product of `shape` needs on one thread; nullopt where oneDNN
/// has no optimized implementation for it (the caller computes in f32 then).
std::optional<uint64_t> bf16GemmScratchpad(const Bf16GemmShape &shape);

/// Runs the product on the calling thread; `shape` must have a scratchpad size (above). `c` is
/// f32, or bf16 for a `bf16Result` shape.
void bf16GemmSerial(const Bf16GemmShape &shape, const uint16_t *a, const uint16_t *b, float *c,
                    uint8_t *scratchpad);
void bf16GemmSerial(const Bf16GemmShape &shape, const uint16_t *a, const uint16_t *b, uint16_t *c,
                    uint8_t *scratchpad);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNGEMM_H
