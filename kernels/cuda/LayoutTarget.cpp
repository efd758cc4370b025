//===- LayoutTarget.cpp - the CUDA layout group's ops ---------------------===//
//
// The ops of Layout.cu and Indexing.cu, with what their kernels cannot take:
//  - transpose, broadcast_to, slice, slice_grad: strided views of more than kMaxLayoutRank
//    dimensions once contiguous ones are merged (the kernels take the view by value).
//  - top_k: k above kMaxTopK (the kernel scans each line once per selected element).
// Every dtype the ops' checks accept is covered. Only gather_grad has scratch: f32 sums of an
// f16/bf16 result.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaTargetGroups.h"
#include "kernels/cuda/LayoutMath.h"

#include <string>

namespace memc::kernels {
namespace {

using cuda::StridedIndex;

bool mergedViewFits(bool fits, const char *op, std::string &error) {
  if (!fits)
    error = std::string(op) + ": the CUDA target takes views of at most " +
            std::to_string(cuda::kMaxLayoutRank) +
            " dimensions once contiguous dimensions are merged, and this one has more";
  return fits;
}

// An empty view moves nothing, whatever its rank.

bool transposeLimits(const KernelCall &call, std::string &error) {
  StridedIndex map;
  return call.outputs[0].numElements() == 0 ||
         mergedViewFits(cuda::transposeIndex(call, map), "transpose", error);
}

bool broadcastToLimits(const KernelCall &call, std::string &error) {
  StridedIndex map;
  return call.outputs[0].numElements() == 0 ||
         mergedViewFits(cuda::broadcastIndex(call, map), "broadcast_to", error);
}

bool sliceLimits(const KernelCall &call, std::string &error) {
  const TensorView &output = call.outputs[0];
  StridedIndex map;
  return output.numElements() == 0 ||
         mergedViewFits(cuda::sliceIndex(call, output.shape, call.inputs[0].shape, map), "slice",
                        error);
}

bool sliceGradLimits(const KernelCall &call, std::string &error) {
  const TensorView &grad = call.inputs[0];
  StridedIndex map;
  return grad.numElements() == 0 ||
         mergedViewFits(cuda::sliceIndex(call, grad.shape, call.outputs[0].shape, map),
                        "slice_grad", error);
}

bool topKLimits(const KernelCall &call, std::string &error) {
  int64_t k = attributesOf(call).intOr("k", 0);
  if (k <= cuda::kMaxTopK)
    return true;
  error = "top_k: the CUDA target selects at most " + std::to_string(cuda::kMaxTopK) +
          " elements per line, got k = " + std::to_string(k);
  return false;
}

} // namespace

void addLayoutTargetOps(TargetOps &ops) {
  ops["transpose"] = TargetOp{&transposeLimits, nullptr};
  ops["reshape"] = TargetOp{};
  ops["copy"] = TargetOp{};
  ops["offload"] = TargetOp{};
  ops["reload"] = TargetOp{};
  ops["broadcast_to"] = TargetOp{&broadcastToLimits, nullptr};
  ops["slice"] = TargetOp{&sliceLimits, nullptr};
  ops["slice_grad"] = TargetOp{&sliceGradLimits, nullptr};
  ops["concat"] = TargetOp{};
  ops["split"] = TargetOp{};
  ops["gather"] = TargetOp{};
  ops["gather_grad"] = TargetOp{nullptr, &carvedWorkspaceBytes<&cuda::carveGatherGradSums>};
  ops["top_k"] = TargetOp{&topKLimits, nullptr};
}

} // namespace memc::kernels
