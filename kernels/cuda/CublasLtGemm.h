//===- CublasLtGemm.h - row-major matrix products on cuBLASLt ---*- C++ -*-===//
//
// Every product of the matmul group (matmul, matmul_nf4, linear_cross_entropy, the
// convolutions' im2col products) is one call here: D = alpha * op(A) @ op(B) + beta * D on
// row-major matrices, as numpy lays them out, optionally a strided batch whose operands may be
// shared (stride 0). cuBLASLt is column-major, so the call hands it the transposed problem,
// D^T = op(B)^T @ op(A)^T, which reads the same bytes without copying them (columnMajorOf).
//
// Computed in f32 (CUBLAS_COMPUTE_32F), or on TF32 tensor cores where the step allows it and the
// inputs are f32 (--allow-tf32, kernels/Tf32.h); 16-bit results rounded once. The
// heuristic is told the operands' real alignment (plans give element alignment only) and the
// workspace the call planned (MatMulWorkspaces.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUBLASLTGEMM_H
#define MEMC_KERNELS_CUDA_CUBLASLTGEMM_H

#include "kernels/KernelContext.h"
#include "kernels/Tensor.h"

#include <cstdint>

namespace memc::kernels::cuda {

/// An operand of a product as it is stored.
struct GemmOperand {
  const void *data = nullptr;
  /// Elements between consecutive stored rows.
  int64_t ld = 0;
  /// Elements between the matrices of a batch; 0 when all products share one.
  int64_t batchStride = 0;
  /// Stored as the transpose of what enters the product (BLAS's trans flag).
  bool transposed = false;
};

/// D[m, n] = alpha * op(A)[m, k] @ op(B)[k, n] + beta * D, `batch` times.
struct RowMajorGemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  GemmOperand a, b;
  /// A's and B's type, and D's (f32 D with 16-bit A and B keeps f32 sums).
  DType inputType = DType::F32, outputType = DType::F32;
  void *d = nullptr;
  int64_t ldd = 0, batchStrideD = 0;
  float alpha = 1.0f;
  /// 0 (D is overwritten) or 1 (D accumulates).
  float beta = 0.0f;
  /// The step allows TF32 products (kernels/Tf32.h); only f32 inputs are affected.
  bool tf32 = false;
};

/// Whether cuBLASLt computes `gemm` on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32) rather
/// than in full f32 (CUBLAS_COMPUTE_32F).
inline bool usesTf32(const RowMajorGemm &gemm) { return gemm.tf32 && gemm.inputType == DType::F32; }

/// A column-major matrix as cuBLASLt describes it: rows x cols, `ld` elements between columns.
struct ColumnMajorMatrix {
  int64_t rows = 0, cols = 0, ld = 0;
  /// Read transposed by the product.
  bool transposed = false;
};

/// The problem cuBLASLt is given for `gemm`: D^T = op(B)^T @ op(A)^T, column-major. A row-major
/// matrix stored [r, c] is a column-major [c, r] one with the same ld, so cuBLASLt's A is the
/// gemm's B and its B the gemm's A, each with its own transpose flag, and D^T is [n, m].
struct ColumnMajorProblem {
  ColumnMajorMatrix a, b, d;
};

inline ColumnMajorProblem columnMajorOf(const RowMajorGemm &gemm) {
  ColumnMajorProblem problem;
  problem.a = gemm.b.transposed ? ColumnMajorMatrix{gemm.k, gemm.n, gemm.b.ld, true}
                                : ColumnMajorMatrix{gemm.n, gemm.k, gemm.b.ld, false};
  problem.b = gemm.a.transposed ? ColumnMajorMatrix{gemm.m, gemm.k, gemm.a.ld, true}
                                : ColumnMajorMatrix{gemm.k, gemm.m, gemm.a.ld, false};
  problem.d = ColumnMajorMatrix{gemm.n, gemm.m, gemm.ldd, false};
  return problem;
}

/// The scratch cuBLASLt may use, kCublasLtWorkspaceAlignment-aligned.
struct GemmWorkspace {
  void *data = nullptr;
  uint64_t bytes = 0;
};

/// Launches `gemm` on the context's stream with its cuBLASLt handle; false, with a message
/// naming `kernel`, when cuBLASLt refuses it. An empty product (k = 0) writes zeros (beta 0) or
/// leaves D (beta 1).
bool runGemm(KernelContext &context, const RowMajorGemm &gemm, const GemmWorkspace &workspace,
             const char *kernel);

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_CUBLASLTGEMM_H
