//===- CublasLtGemm.cpp - row-major matrix products on cuBLASLt -----------===//
#include "kernels/cuda/CublasLtGemm.h"

#include "kernels/cuda/CudaLibraries.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <string>

namespace memc::kernels::cuda {
namespace {

/// Products per cuBLASLt call: its batch count is an int32, and a grid's z dimension (where
/// kernels commonly put the batch) stops at 65535.
constexpr int64_t kMaxGemmBatch = 65535;

cudaDataType_t cudaTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  default:
    return CUDA_R_32F;
  }
}

/// The largest power of two (at most 256, cuBLASLt's default assumption) dividing the address
/// of every matrix of a batch: the first's and the stride between them.
uint32_t alignmentOf(const void *pointer, int64_t batchStride, DType dtype, int32_t batch) {
  const uint64_t address = reinterpret_cast<uintptr_t>(pointer);
  const uint64_t stride = batch > 1 ? static_cast<uint64_t>(batchStride) * dtypeSize(dtype) : 0;
  uint32_t alignment = 256;
  while (alignment > 1 && (address % alignment != 0 || stride % alignment != 0))
    alignment /= 2;
  return alignment;
}

/// The descriptors of one call, destroyed with it.
struct Descriptors {
  const CublasLtFunctions &lt;
  cublasLtMatmulDesc_t operation = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;

  explicit Descriptors(const CublasLtFunctions &lt) : lt(lt) {}
  ~Descriptors() {
    if (preference)
      lt.preferenceDestroy(preference);
    for (cublasLtMatrixLayout_t layout : {a, b, d})
      if (layout)
        lt.matrixLayoutDestroy(layout);
    if (operation)
      lt.matmulDescDestroy(operation);
  }
};

/// Fails the call with cuBLASLt's words for `status` unless it is a success.
class StatusCheck {
public:
  StatusCheck(KernelContext &context, const CublasLtFunctions &lt, const char *kernel)
      : context(context), lt(lt), kernel(kernel) {}
  bool operator()(cublasStatus_t status, const char *what) {
    if (status == CUBLAS_STATUS_SUCCESS)
      return true;
    return context.fail(std::string(kernel) + ": cuBLASLt " + what +
                        " failed: " + lt.getStatusString(status));
  }

private:
  KernelContext &context;
  const CublasLtFunctions &lt;
  const char *kernel;
};

/// The layout of `matrix`, `batch` of them `stride` elements apart.
bool createLayout(StatusCheck &ok, const CublasLtFunctions &lt, cublasLtMatrixLayout_t &layout,
                  DType dtype, const ColumnMajorMatrix &matrix, int32_t batch, int64_t stride) {
  return ok(lt.matrixLayoutCreate(&layout, cudaTypeOf(dtype), static_cast<uint64_t>(matrix.rows),
                                  static_cast<uint64_t>(matrix.cols), matrix.ld),
            "matrix layout") &&
         ok(lt.matrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                        sizeof(batch)),
            "batch count") &&
         ok(lt.matrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                        &stride, sizeof(stride)),
            "batch stride");
}

bool setPreference(StatusCheck &ok, const CublasLtFunctions &lt,
                   cublasLtMatmulPreference_t preference,
                   cublasLtMatmulPreferenceAttributes_t attribute, uint32_t value) {
  return ok(lt.preferenceSetAttribute(preference, attribute, &value, sizeof(value)), "preference");
}

/// Zeroes D's matrices: the product over an empty K.
bool zeroResult(KernelContext &context, const RowMajorGemm &gemm, const char *kernel) {
  const size_t element = dtypeSize(gemm.outputType);
  for (int64_t product = 0; product < gemm.batch; ++product) {
    char *matrix = static_cast<char *>(gemm.d) + product * gemm.batchStrideD * element;
    cudaError_t status = cudaMemset2DAsync(matrix, gemm.ldd * element, 0, gemm.n * element, gemm.m,
                                           static_cast<cudaStream_t>(context.stream));
    if (status != cudaSuccess)
      return context.fail(std::string(kernel) +
                          ": zeroing an empty product failed: " + cudaGetErrorString(status));
    if (gemm.batchStrideD == 0)
      break;
  }
  return true;
}

/// The operation and the layouts of `batch` products of `gemm`, as columnMajorOf states them.
bool describeProducts(StatusCheck &ok, const CublasLtFunctions &lt, const RowMajorGemm &gemm,
                      int32_t batch, Descriptors &descriptors) {
  const ColumnMajorProblem problem = columnMajorOf(gemm);
  const cublasOperation_t transA = problem.a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t transB = problem.b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasComputeType_t compute =
      usesTf32(gemm) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  return ok(lt.matmulDescCreate(&descriptors.operation, compute, CUDA_R_32F),
            "matmul descriptor") &&
         ok(lt.matmulDescSetAttribute(descriptors.operation, CUBLASLT_MATMUL_DESC_TRANSA, &transA,
                                      sizeof(transA)),
            "transpose flag") &&
         ok(lt.matmulDescSetAttribute(descriptors.operation, CUBLASLT_MATMUL_DESC_TRANSB, &transB,
                                      sizeof(transB)),
            "transpose flag") &&
         createLayout(ok, lt, descriptors.a, gemm.inputType, problem.a, batch,
                      gemm.b.batchStride) &&
         createLayout(ok, lt, descriptors.b, gemm.inputType, problem.b, batch,
                      gemm.a.batchStride) &&
         createLayout(ok, lt, descriptors.d, gemm.outputType, problem.d, batch, gemm.batchStrideD);
}

/// What the heuristic is told besides the descriptors: the workspace the call planned and the
/// operands' real alignment, cuBLASLt's A being the gemm's B and its B the gemm's A.
struct Preference {
  uint64_t workspaceBytes;
  uint32_t alignA, alignB, alignD;

  Preference(const RowMajorGemm &gemm, int32_t batch, const void *a, const void *b, const void *d,
             const GemmWorkspace &workspace)
      : workspaceBytes(workspace.bytes),
        alignA(alignmentOf(b, gemm.b.batchStride, gemm.inputType, batch)),
        alignB(alignmentOf(a, gemm.a.batchStride, gemm.inputType, batch)),
        alignD(alignmentOf(d, gemm.batchStrideD, gemm.outputType, batch)) {}
};

bool describePreference(StatusCheck &ok, const CublasLtFunctions &lt, const Preference &wanted,
                        Descriptors &descriptors) {
  if (!ok(lt.preferenceCreate(&descriptors.preference), "preference"))
    return false;
  cublasLtMatmulPreference_t preference = descriptors.preference;
  return ok(lt.preferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                      &wanted.workspaceBytes, sizeof(wanted.workspaceBytes)),
            "preference") &&
         setPreference(ok, lt, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                       wanted.alignA) &&
         setPreference(ok, lt, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                       wanted.alignB) &&
         setPreference(ok, lt, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                       wanted.alignD) &&
         setPreference(ok, lt, preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                       wanted.alignD);
}

/// The algorithm for `batch` products of `gemm`: the one chosen before for the same problem,
/// else the heuristic's first.
bool chooseAlgorithm(KernelContext &context, CudaLibraries &libraries, StatusCheck &ok,
                     const RowMajorGemm &gemm, int32_t batch, const Preference &wanted,
                     Descriptors &descriptors, cublasLtMatmulAlgo_t &algorithm,
                     const char *kernel) {
  const CublasLtAlgorithms::Key key = {gemm.m,
                                       gemm.n,
                                       gemm.k,
                                       batch,
                                       gemm.a.ld,
                                       gemm.b.ld,
                                       gemm.ldd,
                                       gemm.a.batchStride,
                                       gemm.b.batchStride,
                                       gemm.batchStrideD,
                                       int64_t{gemm.a.transposed} * 2 + int64_t{gemm.b.transposed} +
                                           4 * int64_t{usesTf32(gemm)},
                                       static_cast<int64_t>(gemm.inputType),
                                       static_cast<int64_t>(gemm.outputType),
                                       wanted.alignA,
                                       wanted.alignB,
                                       wanted.alignD,
                                       static_cast<int64_t>(wanted.workspaceBytes)};
  CublasLtAlgorithms &algorithms = libraries.cublasLtAlgorithms;
  {
    std::lock_guard<std::mutex> lock(algorithms.mutex);
    auto found = algorithms.chosen.find(key);
    if (found != algorithms.chosen.end()) {
      algorithm = found->second;
      return true;
    }
  }
  const CublasLtFunctions &lt = libraries.cublasLt;
  cublasLtMatmulHeuristicResult_t heuristic = {};
  int found = 0;
  if (!describePreference(ok, lt, wanted, descriptors) ||
      !ok(lt.algoGetHeuristic(libraries.cublasLtHandle, descriptors.operation, descriptors.a,
                              descriptors.b, descriptors.d, descriptors.d, descriptors.preference,
                              1, &heuristic, &found),
          "algorithm search"))
    return false;
  if (found == 0)
    return context.fail(std::string(kernel) + ": cuBLASLt has no algorithm for a " +
                        std::to_string(gemm.m) + "x" + std::to_string(gemm.k) + " @ " +
                        std::to_string(gemm.k) + "x" + std::to_string(gemm.n) + " " +
                        dtypeName(gemm.inputType) + " product into " + dtypeName(gemm.outputType));
  algorithm = heuristic.algo;
  std::lock_guard<std::mutex> lock(algorithms.mutex);
  algorithms.chosen.emplace(key, algorithm);
  return true;
}

/// One cuBLASLt call for `batch` products of `gemm` from the given pointers.
bool launchProducts(KernelContext &context, CudaLibraries &libraries, const RowMajorGemm &gemm,
                    int32_t batch, const void *a, const void *b, void *d,
                    const GemmWorkspace &workspace, const char *kernel) {
  const CublasLtFunctions &lt = libraries.cublasLt;
  StatusCheck ok(context, lt, kernel);
  Descriptors descriptors(lt);
  cublasLtMatmulAlgo_t algorithm;
  if (!describeProducts(ok, lt, gemm, batch, descriptors) ||
      !chooseAlgorithm(context, libraries, ok, gemm, batch,
                       Preference(gemm, batch, a, b, d, workspace), descriptors, algorithm, kernel))
    return false;
  // cuBLASLt's A is the gemm's B and its B the gemm's A (columnMajorOf).
  return ok(lt.matmul(libraries.cublasLtHandle, descriptors.operation, &gemm.alpha, b,
                      descriptors.a, a, descriptors.b, &gemm.beta, d, descriptors.d, d,
                      descriptors.d, &algorithm, workspace.data, workspace.bytes,
                      static_cast<cudaStream_t>(context.stream)),
            "matmul");
}

} // namespace

bool runGemm(KernelContext &context, const RowMajorGemm &gemm, const GemmWorkspace &workspace,
             const char *kernel) {
  if (gemm.m == 0 || gemm.n == 0 || gemm.batch == 0)
    return true;
  if (gemm.k == 0)
    return gemm.beta != 0.0f || zeroResult(context, gemm, kernel);
  auto *libraries = static_cast<CudaLibraries *>(context.libraries);
  if (!libraries || !libraries->cublasLtHandle)
    return context.fail(std::string(kernel) + ": the CUDA device has not loaded cuBLASLt");
  const size_t input = dtypeSize(gemm.inputType), output = dtypeSize(gemm.outputType);
  for (int64_t first = 0; first < gemm.batch; first += kMaxGemmBatch) {
    int32_t count = static_cast<int32_t>(std::min(kMaxGemmBatch, gemm.batch - first));
    const char *a = static_cast<const char *>(gemm.a.data) + first * gemm.a.batchStride * input;
    const char *b = static_cast<const char *>(gemm.b.data) + first * gemm.b.batchStride * input;
    char *d = static_cast<char *>(gemm.d) + first * gemm.batchStrideD * output;
    if (!launchProducts(context, *libraries, gemm, count, a, b, d, workspace, kernel))
      return false;
  }
  return true;
}

} // namespace memc::kernels::cuda
