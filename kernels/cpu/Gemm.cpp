//===- Gemm.cpp - f32 matrix products through OpenBLAS --------------------===//
#include "kernels/cpu/Gemm.h"

#include "kernels/cpu/ThreadPool.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>

// OpenBLAS's pthread build's own teardown of its server threads (what it runs before a fork);
// weak, as other builds (serial, OpenMP) have no such threads and no such symbol.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace memc::kernels {

void useSingleThreadedBlas() {
  static const bool configured = [] {
    openblas_set_num_threads(1);
    if (blas_thread_shutdown_)
      blas_thread_shutdown_();
    return true;
  }();
  (void)configured;
}

void gemmSerial(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                int64_t ldb, float *c, int64_t ldc, GemmTransposes transposes, bool accumulate) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    if (accumulate)
      return;
    for (int64_t i = 0; i < m; ++i)
      std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  useSingleThreadedBlas();
  cblas_sgemm(CblasRowMajor, transposes.a ? CblasTrans : CblasNoTrans,
              transposes.b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(lda),
              b, static_cast<blasint>(ldb), accumulate ? 1.0f : 0.0f, c, static_cast<blasint>(ldc));
}

void gemmParallel(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc, GemmTransposes transposes) {
  // In f64: M, N and K are each below 2^31, their product need not fit in 64 bits.
  double work = static_cast<double>(m) * static_cast<double>(n) * std::max<double>(k, 1);
  if (work < 2.0 * kGemmParallelWork || ThreadPool::global().numThreads() == 1) {
    gemmSerial(m, n, k, a, lda, b, ldb, c, ldc, transposes);
    return;
  }
  // Split the longer side of C; each block re-packs the other operand, which is cheap next to
  // its share of the product. Rows of op(A) are columns of a transposed A, and columns of
  // op(B) rows of a transposed B.
  if (m >= n) {
    int64_t grain = std::max<int64_t>(16, kGemmParallelWork / (n * std::max<int64_t>(k, 1) + 1));
    parallelFor(0, m, grain, [&](int64_t begin, int64_t end) {
      const float *rows = transposes.a ? a + begin : a + begin * lda;
      gemmSerial(end - begin, n, k, rows, lda, b, ldb, c + begin * ldc, ldc, transposes);
    });
  } else {
    int64_t grain = std::max<int64_t>(16, kGemmParallelWork / (m * std::max<int64_t>(k, 1) + 1));
    parallelFor(0, n, grain, [&](int64_t begin, int64_t end) {
      const float *columns = transposes.b ? b + begin * ldb : b + begin;
      gemmSerial(m, end - begin, k, a, lda, columns, ldb, c + begin, ldc, transposes);
    });
  }
}

} // namespace memc::kernels
