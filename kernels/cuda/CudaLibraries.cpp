//===- CudaLibraries.cpp - loading the CUDA libraries at run time ---------===//
#include "kernels/cuda/CudaLibraries.h"

#include "kernels/cuda/CudaLibrarySearch.h"

#include <dlfcn.h>

namespace memc::kernels::cuda {
namespace {

bool resolveCublasLt(void *library, CublasLtFunctions &f, std::string &missing) {
  // Every one is resolved, so that the message lists all that are missing.
  bool ok = resolveSymbol(library, "cublasLtGetVersion", f.getVersion, missing);
  ok &= resolveSymbol(library, "cublasLtGetStatusString", f.getStatusString, missing);
  ok &= resolveSymbol(library, "cublasLtCreate", f.create, missing);
  ok &= resolveSymbol(library, "cublasLtDestroy", f.destroy, missing);
  ok &= resolveSymbol(library, "cublasLtMatmulDescCreate", f.matmulDescCreate, missing);
  ok &= resolveSymbol(library, "cublasLtMatmulDescDestroy", f.matmulDescDestroy, missing);
  ok &= resolveSymbol(library, "cublasLtMatmulDescSetAttribute", f.matmulDescSetAttribute, missing);
  ok &= resolveSymbol(library, "cublasLtMatrixLayoutCreate", f.matrixLayoutCreate, missing);
  ok &= resolveSymbol(library, "cublasLtMatrixLayoutDestroy", f.matrixLayoutDestroy, missing);
  ok &= resolveSymbol(library, "cublasLtMatrixLayoutSetAttribute", f.matrixLayoutSetAttribute,
                      missing);
  ok &= resolveSymbol(library, "cublasLtMatmulPreferenceCreate", f.preferenceCreate, missing);
  ok &= resolveSymbol(library, "cublasLtMatmulPreferenceDestroy", f.preferenceDestroy, missing);
  ok &= resolveSymbol(library, "cublasLtMatmulPreferenceSetAttribute", f.preferenceSetAttribute,
                      missing);
  ok &= resolveSymbol(library, "cublasLtMatmulAlgoGetHeuristic", f.algoGetHeuristic, missing);
  ok &= resolveSymbol(library, "cublasLtMatmul", f.matmul, missing);
  return ok;
}

} // namespace

std::unique_ptr<CudaLibraries> CudaLibraries::load(std::string &error) {
  std::unique_ptr<CudaLibraries> libraries(new CudaLibraries());
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  libraries->cublasLtLibrary =
      openCudaLibrary({soname, "libcublasLt.so"},
                      "Install the CUDA " + std::to_string(CUBLAS_VER_MAJOR) +
                          " toolkit or the nvidia-cublas wheel",
                      libraries->cublasLtPath, error);
  if (!libraries->cublasLtLibrary)
    return nullptr;
  std::string missing;
  if (!resolveCublasLt(libraries->cublasLtLibrary, libraries->cublasLt, missing)) {
    error = libraries->cublasLtPath + " lacks " + missing;
    return nullptr;
  }
  // The structs and enums the kernels pass are this header's: another major version may lay
  // them out differently.
  size_t version = libraries->cublasLt.getVersion();
  if (version / 10000 != CUBLAS_VER_MAJOR) {
    error = libraries->cublasLtPath + " is cuBLASLt " + std::to_string(version / 10000) + "." +
            std::to_string(version / 100 % 100) + "; memc was built for cuBLASLt " +
            std::to_string(CUBLAS_VER_MAJOR) + " (set MEMC_CUDA_LIBS to the folder of " + soname +
            ")";
    return nullptr;
  }
  return libraries;
}

bool CudaLibraries::createHandles(std::string &error) {
  if (cublasLtHandle)
    return true;
  cublasStatus_t status = cublasLt.create(&cublasLtHandle);
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  cublasLtHandle = nullptr;
  error = std::string("cublasLtCreate failed: ") + cublasLt.getStatusString(status);
  return false;
}

CudaLibraries::~CudaLibraries() {
  if (cublasLtHandle)
    cublasLt.destroy(cublasLtHandle);
  if (cublasLtLibrary)
    dlclose(cublasLtLibrary);
}

} // namespace memc::kernels::cuda
