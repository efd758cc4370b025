//===- FlashAttention.cu - flash_attention and flash_attention_grad on CUDA -----------===//
//
// The run functions of the CUDA attention: each reads its call (AttentionCall.h) and launches
// the tensor-core kernels (FlashAttentionTensorCore*.cu) where they take the call, the
// CUDA-core kernels (FlashAttentionCudaCore.cu) otherwise; the two compute the same thing
// (AttentionMath.h) in the same tiles of work. The backward first computes D = rowsum(dO * O)
// of every query row into its scratch (in double, as the CPU kernel sums it), which both of
// its passes read for every tile instead of recomputing it.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cuda/AttentionCall.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/FlashAttentionLaunch.cuh"

#include <cstdint>

namespace memc::kernels {
namespace cuda {
namespace {

bool aligned16(const void *data) { return reinterpret_cast<uintptr_t>(data) % 16 == 0; }

/// dots[row] = sum over j of grad[row, j] * output[row, j] for `rows` rows of `width`: one warp
/// a row, summing in double.
template <typename T>
__global__ void rowDotsKernel(const T *grad, const T *output, int64_t rows, int64_t width,
                              float *dots) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / 32);
  for (int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; row < rows;
       row += warps) {
    double sum = 0.0;
    for (int64_t j = lane; j < width; j += 32)
      sum += static_cast<double>(loadFloat(grad, row * width + j)) *
             loadFloat(output, row * width + j);
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0)
      dots[row] = static_cast<float>(sum);
  }
}

bool runFlashAttention(KernelContext &context, const KernelCall &call) {
  AttentionForwardArgs args;
  args.scores = attentionScores(call, 0, 3);
  args.dropout = attentionDropout(call, 3);
  args.query = call.inputs[0].data;
  args.key = call.inputs[1].data;
  args.value = call.inputs[2].data;
  args.output = call.outputs[0].data;
  args.logsumexp = call.outputs[1].as<float>();
  args.aligned16 = aligned16(args.query) && aligned16(args.key) && aligned16(args.value) &&
                   aligned16(args.output);
  const AttentionDims &dims = args.scores.dims;
  if (dims.batch * dims.heads * dims.queries == 0)
    return true;
  const DType dtype = call.inputs[0].dtype;
  return usesTensorCores(dtype, dims) ? launchTensorCoreForward(context, dtype, args)
                                      : launchCudaCoreForward(context, dtype, args);
}

bool runFlashAttentionGrad(KernelContext &context, const KernelCall &call) {
  WorkspaceCarver carver(call);
  float *rowDots = carveAttentionRowDots(call, carver);
  if (!carver.fits(context))
    return false;
  AttentionBackwardArgs args;
  args.scores = attentionScores(call, 1, 6);
  args.dropout = attentionDropout(call, 6);
  args.outputGrad = call.inputs[0].data;
  args.query = call.inputs[1].data;
  args.key = call.inputs[2].data;
  args.value = call.inputs[3].data;
  args.logsumexp = call.inputs[5].as<const float>();
  args.rowDots = rowDots;
  args.queryGrad = call.outputs[0].data;
  args.keyGrad = call.outputs[1].data;
  args.valueGrad = call.outputs[2].data;
  args.aligned16 = aligned16(args.outputGrad) && aligned16(args.query) && aligned16(args.key) &&
                   aligned16(args.value) && aligned16(args.queryGrad) && aligned16(args.keyGrad) &&
                   aligned16(args.valueGrad);
  const AttentionDims &dims = args.scores.dims;
  const DType dtype = call.inputs[1].dtype;
  const int64_t rows = dims.batch * dims.heads * dims.queries;
  if (rows > 0) {
    visitFloat(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rowDotsKernel<T><<<gridFor(rows * 32), kBlockThreads, 0, streamOf(context)>>>(
          call.inputs[0].as<const T>(), call.inputs[4].as<const T>(), rows, dims.valueDim, rowDots);
    });
    if (!launched(context, "flash_attention_grad"))
      return false;
  }
  return usesTensorCores(dtype, dims) ? launchTensorCoreBackward(context, dtype, args)
                                      : launchCudaCoreBackward(context, dtype, args);
}

} // namespace
} // namespace cuda

void addAttentionCudaKernels(CudaKernelRuns &runs) {
  runs["flash_attention"] = &cuda::runFlashAttention;
  runs["flash_attention_grad"] = &cuda::runFlashAttentionGrad;
}

} // namespace memc::kernels
