//===- Gemm.h - f32 matrix products through OpenBLAS -------------*- C++ -*-===//
//
// All CPU parallelism comes from the kernels' ThreadPool: OpenBLAS is set to one thread and
// large products are split into row (or column) blocks over the pool. This keeps a product
// inside a parallel loop (batched matmul, grouped conv) from oversubscribing the cores, and
// MEMC_NUM_THREADS from being two settings.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_GEMM_H
#define MEMC_KERNELS_CPU_GEMM_H

#include "kernels/ops/CallChecks.h"

#include <cstdint>

namespace memc::kernels {

/// Sets OpenBLAS to one thread and stops the server threads its pthread build started when it
/// loaded: each spins about 0.1 s (2^28 cycles) before it sleeps, and on a 2-core machine one of
/// them took the core the pool's worker needed (the ResNet-style bench model's first ~20 steps
/// at 2 threads ran on one thread, 4.7-4.9 ms instead of 3.4-3.6, in 8 of 15 runs). Once per
/// process; the CPU kernel table calls it when it is built, gemmSerial before its first call.
void useSingleThreadedBlas();

/// Largest M, N, K (and leading dimension) one OpenBLAS call takes: its blasint is 32-bit.
constexpr int64_t kMaxGemmDimension = kMaxMatrixDimension;

/// Operands read transposed in place (BLAS's trans flags): a transposed A is stored [K,M] with
/// leading dimension lda >= M, a transposed B [N,K] with ldb >= K.
struct GemmTransposes {
  bool a = false, b = false;
};

/// C[M,N] = op(A)[M,K] * op(B)[K,N] (+ C when `accumulate`), row-major with leading dimensions
/// lda, ldb, ldc, on the calling thread only. Any of M, N, K may be 0 (K == 0 zeroes C).
void gemmSerial(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *c, int64_t ldc, GemmTransposes transposes = {},
                bool accumulate = false);

/// The same, split over the thread pool when the product is large enough.
void gemmParallel(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc, GemmTransposes transposes = {});

/// Multiply-adds below which a product is not worth splitting over threads.
constexpr int64_t kGemmParallelWork = int64_t{1} << 20;

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_GEMM_H
