//===- CudaLibrarySearch.h - where the CUDA libraries are looked for -*- C++ -*-===//
//
// The CUDA backend loads cuBLASLt and NCCL at run time (CudaLibraries.h, NcclCollectives.h), so
// that one memc program runs wherever a user has the libraries: a CUDA toolkit, or the wheels pip
// installs with torch (site-packages/nvidia/<library>/lib). The search order is over plain
// strings and the file system, so that a host test can run it on made-up folders;
// openCudaLibrary dlopens by it (cuBLASLt for the kernels, NCCL for the ranks).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDALIBRARYSEARCH_H
#define MEMC_KERNELS_CUDA_CUDALIBRARYSEARCH_H

#include <dlfcn.h>

#include <string>
#include <vector>

namespace memc::kernels::cuda {

/// The folders to look in, first to last, given the values of MEMC_CUDA_LIBS and PATH (empty
/// when unset):
///  1. the folders of `memcCudaLibs` (':'-separated), as the user names them;
///  2. pip's wheels next to each python3 of `path`, in PATH order: for an entry holding a
///     python3, every ../lib/python3*/site-packages/nvidia/*/lib folder there (sorted);
///  3. the toolkit's /usr/local/cuda/lib64 and /usr/local/cuda/lib.
/// Each folder is listed once. After these, the loader's default search still applies.
std::vector<std::string> cudaLibraryFolders(const std::string &memcCudaLibs,
                                            const std::string &path);

/// The path of the first file found by trying, folder by folder, each of `names` in order;
/// empty when no folder holds any of them.
std::string findCudaLibrary(const std::vector<std::string> &folders,
                            const std::vector<std::string> &names);

/// dlopens the first of `names` (most wanted first) found in the folders of MEMC_CUDA_LIBS and
/// PATH (cudaLibraryFolders), else the first the loader's own search finds, and sets `path` to
/// the file opened. Null with a message naming the library, every folder searched, and
/// `remedy` (what to install).
void *openCudaLibrary(const std::vector<std::string> &names, const std::string &remedy,
                      std::string &path, std::string &error);

/// Resolves `symbol` of an opened library into `function`, a pointer of the header's own type;
/// false (adding the symbol to `missing`) when absent.
template <typename Function>
bool resolveSymbol(void *library, const char *symbol, Function &function, std::string &missing) {
  function = reinterpret_cast<Function>(dlsym(library, symbol));
  if (!function)
    missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  return function != nullptr;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_CUDALIBRARYSEARCH_H
