//===- CudaLibraries.h - the CUDA libraries the kernels call ----*- C++ -*-===//
//
// What KernelContext::libraries points at on the CUDA device: the entry points of the NVIDIA
// libraries the kernels call, resolved at run time, and the handles of one stream.
//
// memc programs do not link cuBLASLt: it is hundreds of megabytes, versioned apart from the
// driver, and users already have it (a toolkit, or the wheels torch brings). load() finds it
// (CudaLibrarySearch.h), dlopens it and resolves each function the kernels use into a pointer
// of the header's own type, so calls are checked against the real signatures. The header is
// included for its types and enums only.
//
// The device makes one CudaLibraries per stream: load() when it starts, createHandles() once
// its GPU is current (cuBLASLt binds a handle to the current device). The algorithms chosen
// for the handle are kept with it.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDALIBRARIES_H
#define MEMC_KERNELS_CUDA_CUDALIBRARIES_H

#include <cublasLt.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace memc::kernels::cuda {

/// The cuBLASLt functions the kernels call (CublasLtGemm.h).
struct CublasLtFunctions {
  decltype(&cublasLtGetVersion) getVersion = nullptr;
  decltype(&cublasLtGetStatusString) getStatusString = nullptr;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) matmulDescCreate = nullptr;
  decltype(&cublasLtMatmulDescDestroy) matmulDescDestroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) matmulDescSetAttribute = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) matrixLayoutCreate = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) matrixLayoutDestroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) matrixLayoutSetAttribute = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preferenceCreate = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preferenceDestroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preferenceSetAttribute = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algoGetHeuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

/// The algorithms cuBLASLt's heuristic chose for the handle, by problem (CublasLtGemm.cpp): the
/// search costs more host time than a launch, and training repeats every product each step.
struct CublasLtAlgorithms {
  /// A product's sizes, leading dimensions, strides, types, transposes and TF32, alignments and
  /// workspace: everything the heuristic is told.
  using Key = std::array<int64_t, 17>;
  std::mutex mutex;
  std::map<Key, cublasLtMatmulAlgo_t> chosen;
};

class CudaLibraries {
public:
  /// Loads the libraries and resolves their functions; null, with a message naming the library
  /// and every folder searched, when one is missing, too old or lacks a function.
  static std::unique_ptr<CudaLibraries> load(std::string &error);

  /// Creates the stream's handles on the current device; false with cuBLASLt's message.
  bool createHandles(std::string &error);

  ~CudaLibraries();
  CudaLibraries(const CudaLibraries &) = delete;
  CudaLibraries &operator=(const CudaLibraries &) = delete;

  CublasLtFunctions cublasLt;
  /// Null until createHandles().
  cublasLtHandle_t cublasLtHandle = nullptr;
  CublasLtAlgorithms cublasLtAlgorithms;
  /// The file loaded, for diagnostics ("libcublasLt.so.13" when the loader's search found it).
  std::string cublasLtPath;

private:
  CudaLibraries() = default;
  void *cublasLtLibrary = nullptr;
};

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_CUDALIBRARIES_H
