//===- FlashAttentionLaunch.cuh - the attention kernels' launchers -*- CUDA -*-===//
//
// What FlashAttention.cu (the run functions) hands the kernels of the two implementations:
// tensor cores (FlashAttentionTensorCore*.cu) and CUDA cores (FlashAttentionCudaCore.cu). Each
// launcher launches on `stream`, checks every launch (launched()) and returns false with the
// context's message when one fails.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_FLASHATTENTIONLAUNCH_CUH
#define MEMC_KERNELS_CUDA_FLASHATTENTIONLAUNCH_CUH

#include "kernels/DTypeTable.h"
#include "kernels/ElementVisitors.h"
#include "kernels/cuda/AttentionMath.h"
#include "kernels/cuda/CudaLaunch.cuh"

#include <cstdint>
#include <string>

namespace memc::kernels::cuda {

/// flash_attention's operands (device pointers; the element type is the launcher's).
struct AttentionForwardArgs {
  AttentionScores scores;
  AttentionDropout dropout;
  const void *query, *key, *value;
  void *output;
  float *logsumexp;
  /// Whether query, key, value and output start on 16 bytes, for 16-byte row loads.
  bool aligned16;
};

/// flash_attention_grad's operands; rowDots is the scratch D = rowsum(dO * O).
struct AttentionBackwardArgs {
  AttentionScores scores;
  AttentionDropout dropout;
  const void *outputGrad, *query, *key, *value;
  const float *logsumexp, *rowDots;
  void *queryGrad, *keyGrad, *valueGrad;
  /// Whether outputGrad, query, key, value and the three gradients start on 16 bytes.
  bool aligned16;
};

/// Rows of a tile of `tileRows` rows that starts `remaining` rows before the end.
__device__ inline int rowsLeft(int tileRows, int64_t remaining) {
  return static_cast<int>(remaining < tileRows ? remaining : tileRows);
}

/// The dynamic shared memory of every attention kernel, 16-byte aligned for vector accesses;
/// one declaration for all of them, as CUDA requires.
extern __shared__ __align__(16) unsigned char attentionShared[];

/// Lets `kernel` launch with `bytes` of dynamic shared memory (over the default 48 KiB, up to
/// the GPU's limit: 163 KiB on sm_80, 227 KiB on sm_90).
template <typename Kernel>
bool allowSharedBytes(KernelContext &context, Kernel *kernel, size_t bytes, const char *op) {
  cudaError_t status = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(bytes));
  if (status == cudaSuccess)
    return true;
  cudaGetLastError(); // taken here, so that the next launch check does not report it again
  return context.fail(std::string(op) + ": a block cannot have " + std::to_string(bytes) +
                      " bytes of shared memory: " + cudaGetErrorString(status));
}

/// Tensor cores: f16/bf16, head dimensions of 64 or 128 (usesTensorCores).
bool launchTensorCoreForward(KernelContext &context, DType dtype, const AttentionForwardArgs &args);
bool launchTensorCoreBackward(KernelContext &context, DType dtype,
                              const AttentionBackwardArgs &args);

/// CUDA cores in f32: any element type, head dimensions up to kMaxCudaAttentionHeadDim.
bool launchCudaCoreForward(KernelContext &context, DType dtype, const AttentionForwardArgs &args);
bool launchCudaCoreBackward(KernelContext &context, DType dtype, const AttentionBackwardArgs &args);

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_FLASHATTENTIONLAUNCH_CUH
