//===- Collectives.cpp - the ranks' collectives on the GPU ----------------===//
//
// The communication is NCCL's, through the context's Collectives (NcclCollectives on CUDA
// ranks), enqueued on the launching stream; the run functions are kernels/CollectiveCalls.h's
// with the GPU's primitives: the stream's copies, the cast kernel to round an f32 shard for a
// 16-bit gather, and a gate (--grad-accum with --world-size) read from the host's copy of the
// apply flag.
//
//===----------------------------------------------------------------------===//
#include "kernels/CollectiveCalls.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaKernels.h"

#include <cuda_runtime.h>

#include <cstring>

namespace memc::kernels {
namespace {

cudaStream_t streamOf(const KernelContext &context) {
  return static_cast<cudaStream_t>(context.stream);
}

/// Enqueues a copy on the context's stream; false having failed the context.
bool copyOnStream(KernelContext &context, void *to, const void *from, uint64_t bytes) {
  cudaError_t status =
      bytes == 0 ? cudaSuccess
                 : cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, streamOf(context));
  return status == cudaSuccess ||
         context.fail(std::string("a copy on the GPU failed: ") + cudaGetErrorString(status));
}

bool zeroOnStream(KernelContext &context, void *to, uint64_t bytes) {
  cudaError_t status = bytes == 0 ? cudaSuccess : cudaMemsetAsync(to, 0, bytes, streamOf(context));
  return status == cudaSuccess ||
         context.fail(std::string("a fill on the GPU failed: ") + cudaGetErrorString(status));
}

/// The f32 shard rounded by the cast kernel, on the stream.
bool roundOnStream(KernelContext &context, const TensorView &shard, void *to, DType dtype) {
  KernelCall cast;
  cast.inputs = {shard};
  cast.outputs = {TensorView{to, dtype, shard.shape}};
  return cudaKernels().at("cast").run(context, cast);
}

/// Whether the call communicates now: it has no gate, or its gate (the micro-batch's apply
/// flag) is open, as the host knows it at launch (TensorView::hostData: the gate is a graph
/// input); the device is never waited for. False having failed the context where the host does
/// not know the gate.
bool gateOpenOnHost(KernelContext &context, const KernelCall &call, const char *op, bool &open) {
  open = true;
  if (call.inputs.size() < 2)
    return true;
  if (!call.inputs[1].hostData)
    return context.fail(std::string(op) + ": its gate is no graph input, so the host cannot "
                                          "decide whether to communicate without waiting for "
                                          "the GPU");
  float gate;
  std::memcpy(&gate, call.inputs[1].hostData, sizeof(float));
  open = gate > 0.5f;
  return true;
}

constexpr CollectivePrimitives kStream{&copyOnStream, &zeroOnStream, &roundOnStream,
                                       &gateOpenOnHost};

bool runAllReduce(KernelContext &context, const KernelCall &call) {
  return runAllReduceWith(kStream, context, call);
}

bool runShard(KernelContext &context, const KernelCall &call) {
  return runShardWith(kStream, context, call);
}

bool runReduceScatter(KernelContext &context, const KernelCall &call) {
  return runReduceScatterWith(kStream, context, call);
}

bool runAllGather(KernelContext &context, const KernelCall &call) {
  return runAllGatherWith(kStream, context, call);
}

} // namespace

void addCollectiveCudaKernels(CudaKernelRuns &runs) {
  runs["all_reduce"] = &runAllReduce;
  runs["shard"] = &runShard;
  runs["reduce_scatter"] = &runReduceScatter;
  runs["all_gather"] = &runAllGather;
}

} // namespace memc::kernels
