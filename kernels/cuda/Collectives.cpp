//===- Collectives.cpp - the ranks' collectives on the GPU ----------------===//
//
// The communication is NCCL's, through the context's Collectives (NcclCollectives on CUDA
// ranks), enqueued on the launching stream; these run functions place the bytes around it with
// the stream's copies: the input copied to the result where the planner did not place them
// together, ZeRO's zero-padded shards, the padded copies of kernels/CollectiveCalls.h, an f32
// shard rounded by the cast kernel for a 16-bit gather. A gated collective (--grad-accum with
// --world-size) reads its gate from the host's copy of the apply flag.
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

constexpr ByteMoves kStreamMoves{&copyOnStream, &zeroOnStream};

/// Whether the call communicates now: it has no gate, or its gate (the micro-batch's apply
/// flag) is open, as the host knows it at launch (TensorView::hostData: the gate is a graph
/// input); the device is never waited for. False having failed the context where the host does
/// not know the gate.
bool gateOpen(KernelContext &context, const KernelCall &call, const char *op, bool &open) {
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

bool runAllReduce(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &result = call.outputs[0];
  bool open;
  if (!gateOpen(context, call, "all_reduce", open))
    return false;
  if (!open)
    return result.data == input.data ||
           copyOnStream(context, result.data, input.data, input.sizeBytes());
  Collectives *ranks = callRanks(context, call, "all_reduce");
  return ranks && reduceAll(kStreamMoves, *ranks, context, call);
}

bool runShard(KernelContext &context, const KernelCall &call) {
  return placeShard(kStreamMoves, context, call);
}

bool runReduceScatter(KernelContext &context, const KernelCall &call) {
  Collectives *ranks = callRanks(context, call, "reduce_scatter");
  return ranks && scatterReduced(kStreamMoves, *ranks, context, call);
}

bool runAllGather(KernelContext &context, const KernelCall &call) {
  bool open;
  if (!gateOpen(context, call, "all_gather", open))
    return false;
  if (!open)
    return true;
  Collectives *ranks = callRanks(context, call, "all_gather");
  if (!ranks)
    return false;
  WorkspaceCarver carver(call);
  GatherScratch scratch = carveAllGather(call, carver);
  if (!carver.fits(context))
    return false;
  const void *mine = call.inputs[0].data;
  if (scratch.narrowShard) {
    // An f32 shard of 16-bit weight copies (ZeRO stage 3), rounded by the cast kernel first.
    KernelCall cast;
    cast.inputs = {call.inputs[0]};
    cast.outputs = {TensorView{scratch.narrowShard, call.outputs[0].dtype, call.inputs[0].shape}};
    if (!cudaKernels().at("cast").run(context, cast))
      return false;
    mine = scratch.narrowShard;
  }
  return gatherAll(kStreamMoves, *ranks, context, call, scratch, mine);
}

} // namespace

void addCollectiveCudaKernels(CudaKernelRuns &runs) {
  runs["all_reduce"] = &runAllReduce;
  runs["shard"] = &runShard;
  runs["reduce_scatter"] = &runReduceScatter;
  runs["all_gather"] = &runAllGather;
}

} // namespace memc::kernels
