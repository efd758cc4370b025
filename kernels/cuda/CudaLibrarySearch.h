//===- CudaLibrarySearch.h - where the CUDA libraries are looked for -*- C++ -*-===//
//
// The CUDA backend loads cuBLASLt (later cuDNN) at run time (CudaLibraries.h), so that one
// memc program runs wherever a user has the libraries: a CUDA toolkit, or the wheels pip
// installs with torch (site-packages/nvidia/<library>/lib). This file is the search order
// alone, over plain strings and the file system, so that a host test can run it on made-up
// folders; CudaLibraries.cpp does the dlopen.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDALIBRARYSEARCH_H
#define MEMC_KERNELS_CUDA_CUDALIBRARYSEARCH_H

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

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_CUDALIBRARYSEARCH_H
