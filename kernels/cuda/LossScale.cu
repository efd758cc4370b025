//===- LossScale.cu - CUDA non_finite_check and loss_scale_update --------------------===//
//
// GradScaler's two device-side pieces (kernels/cpu/LossScale.cpp): the found_inf test over
// every gradient and the scale's update, both on device scalars, so the step that skips an
// update never waits on the host.
//
// non_finite_check sees every gradient of the model (hundreds of tensors of any size): it
// clears found_inf, then checks them one GradientBatch (ElementwiseMath.h) per launch, whose
// tiles the blocks share out, so one large gradient among many small ones still spreads over
// the whole GPU.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/ElementwiseKernels.cuh"

#include <string>

namespace memc::kernels::cuda {
namespace {

template <typename T>
__device__ void checkTile(const void *data, int64_t begin, int64_t end, float *found) {
  NonFiniteBody<T> body{static_cast<const T *>(data), found};
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
    body(i);
}

__global__ void nonFiniteKernel(GradientBatch batch, float *found) {
  for (int64_t tile = blockIdx.x; tile < batch.tiles(); tile += gridDim.x) {
    int64_t begin, end;
    int g = batch.tileRange(tile, begin, end);
    switch (batch.dtype[g]) {
    case DType::F16:
      checkTile<Half>(batch.data[g], begin, end, found);
      break;
    case DType::BF16:
      checkTile<BFloat16>(batch.data[g], begin, end, found);
      break;
    default:
      checkTile<float>(batch.data[g], begin, end, found);
      break;
    }
  }
}

bool runNonFiniteCheck(KernelContext &context, const KernelCall &call) {
  auto *found = call.outputs[0].as<float>();
  cudaError_t status = cudaMemsetAsync(found, 0, sizeof(float), streamOf(context));
  if (status != cudaSuccess)
    return context.fail(std::string("non_finite_check: clearing found_inf failed: ") +
                        cudaGetErrorString(status));
  for (size_t first = 0; first < call.inputs.size(); first += kGradientsPerBatch) {
    GradientBatch batch = gradientBatch(call.inputs, first);
    if (batch.tiles() == 0)
      continue;
    nonFiniteKernel<<<gridFor(batch.tiles(), 1), kBlockThreads, 0, streamOf(context)>>>(batch,
                                                                                        found);
    if (!launched(context, "non_finite_check"))
      return false;
  }
  return true;
}

/// One thread: reads the state and found_inf, then writes the new state (which may be the old
/// one's buffers).
__global__ void lossScaleUpdateKernel(const float *exponent, const float *growth,
                                      const float *skipped, const float *foundInf,
                                      float *newExponent, float *newGrowth, float *newSkipped,
                                      float window, bool dynamic) {
  LossScaleState state =
      updatedLossScale({*exponent, *growth, *skipped}, *foundInf != 0.0f, window, dynamic);
  *newExponent = state.exponent;
  *newGrowth = state.growth;
  *newSkipped = state.skipped;
}

bool runLossScaleUpdate(KernelContext &context, const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  auto window = static_cast<float>(attributes.intOr("window", 2000));
  bool dynamic = attributes.intOr("dynamic", 1) != 0;
  lossScaleUpdateKernel<<<1, 1, 0, streamOf(context)>>>(
      call.inputs[0].as<const float>(), call.inputs[1].as<const float>(),
      call.inputs[2].as<const float>(), call.inputs[3].as<const float>(),
      call.outputs[0].as<float>(), call.outputs[1].as<float>(), call.outputs[2].as<float>(), window,
      dynamic);
  return launched(context, "loss_scale_update");
}

} // namespace

void addLossScaleCudaKernels(CudaKernelRuns &runs) {
  runs["non_finite_check"] = &runNonFiniteCheck;
  runs["loss_scale_update"] = &runLossScaleUpdate;
}

} // namespace memc::kernels::cuda
