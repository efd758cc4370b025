//===- CudaLibraries.cpp - loading the CUDA libraries at run time ---------===//
#include "kernels/cuda/CudaLibraries.h"

#include "kernels/cuda/CudaLibrarySearch.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace memc::kernels::cuda {
namespace {

std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

std::string joined(const std::vector<std::string> &items) {
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ", ") + item;
  return text;
}

/// dlopens the first of `names` found in the search folders, else the first the loader's own
/// search finds; null with a message naming the library and where it was looked for.
void *openLibrary(const std::vector<std::string> &names, std::string &path, std::string &error) {
  std::vector<std::string> folders =
      cudaLibraryFolders(environment("MEMC_CUDA_LIBS"), environment("PATH"));
  std::vector<std::string> tried;
  std::string found = findCudaLibrary(folders, names);
  if (!found.empty())
    tried.push_back(found);
  for (const std::string &name : names)
    tried.push_back(name);
  std::string outcome = " was not found";
  for (const std::string &file : tried) {
    if (void *library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      path = file;
      return library;
    }
    const char *reason = dlerror();
    if (file == found)
      outcome = " could not be loaded from " + found + " (" + (reason ? reason : "") + ")";
  }
  error = names.front() + outcome + "; searched MEMC_CUDA_LIBS, the " +
          "nvidia wheels of the python3 in PATH and the CUDA toolkit: " + joined(folders) +
          ", then the loader's default search (LD_LIBRARY_PATH). Install the CUDA " +
          std::to_string(CUBLAS_VER_MAJOR) + " toolkit or the nvidia-cublas wheel, or point " +
          "MEMC_CUDA_LIBS at the folder holding " + names.front();
  return nullptr;
}

/// Resolves `symbol` into `function`; false (adding the symbol to `missing`) when absent.
template <typename Function>
bool resolve(void *library, const char *symbol, Function &function, std::string &missing) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (!function)
    missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  return function != nullptr;
}

bool resolveCublasLt(void *library, CublasLtFunctions &f, std::string &missing) {
  // Every one is resolved, so that the message lists all that are missing.
  bool ok = resolve(library, "cublasLtGetVersion", f.getVersion, missing);
  ok &= resolve(library, "cublasLtGetStatusString", f.getStatusString, missing);
  ok &= resolve(library, "cublasLtCreate", f.create, missing);
  ok &= resolve(library, "cublasLtDestroy", f.destroy, missing);
  ok &= resolve(library, "cublasLtMatmulDescCreate", f.matmulDescCreate, missing);
  ok &= resolve(library, "cublasLtMatmulDescDestroy", f.matmulDescDestroy, missing);
  ok &= resolve(library, "cublasLtMatmulDescSetAttribute", f.matmulDescSetAttribute, missing);
  ok &= resolve(library, "cublasLtMatrixLayoutCreate", f.matrixLayoutCreate, missing);
  ok &= resolve(library, "cublasLtMatrixLayoutDestroy", f.matrixLayoutDestroy, missing);
  ok &= resolve(library, "cublasLtMatrixLayoutSetAttribute", f.matrixLayoutSetAttribute, missing);
  ok &= resolve(library, "cublasLtMatmulPreferenceCreate", f.preferenceCreate, missing);
  ok &= resolve(library, "cublasLtMatmulPreferenceDestroy", f.preferenceDestroy, missing);
  ok &= resolve(library, "cublasLtMatmulPreferenceSetAttribute", f.preferenceSetAttribute, missing);
  ok &= resolve(library, "cublasLtMatmulAlgoGetHeuristic", f.algoGetHeuristic, missing);
  ok &= resolve(library, "cublasLtMatmul", f.matmul, missing);
  return ok;
}

} // namespace

std::unique_ptr<CudaLibraries> CudaLibraries::load(std::string &error) {
  std::unique_ptr<CudaLibraries> libraries(new CudaLibraries());
  const std::string soname = "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR);
  libraries->cublasLtLibrary =
      openLibrary({soname, "libcublasLt.so"}, libraries->cublasLtPath, error);
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
