//===- MatMulTarget.cpp - the CUDA matmul group's ops -----------------------===//
//
// The ops of MatMul.cu, MatMulNf4.cu, LinearCrossEntropy.cu and Convolution.cu: their products
// run on cuBLASLt, so the CUDA target takes the float types cuBLASLt computes (integer matmul
// stays on the CPU), and matmul_nf4's rows and the convolutions' spatial rank within what those
// kernels index. Workspace: MatMulWorkspaces.h.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaTargetGroups.h"
#include "kernels/cuda/MatMulWorkspaces.h"

#include <limits>
#include <string>

namespace memc::kernels {
namespace {

bool floatMatMul(const KernelCall &call, std::string &error) {
  if (isFloating(call.outputs[0].dtype))
    return true;
  error = std::string("matmul on the CUDA target takes f32, f16 and bf16 (cuBLASLt), not ") +
          dtypeName(call.outputs[0].dtype);
  return false;
}

bool nf4RowsFit(const KernelCall &call, std::string &error) {
  if (cuda::Nf4Problem(call).rows <= std::numeric_limits<int32_t>::max())
    return true;
  error = "matmul_nf4 on the CUDA target takes at most 2^31 - 1 rows of lhs (cuBLASLt's "
          "dimensions)";
  return false;
}

/// conv's input, conv_grad_input's result and conv_grad_weight's input: [N, C, spatial...].
template <size_t imageOperand, bool isOutput>
bool convRankFits(const KernelCall &call, std::string &error) {
  const TensorView &image = isOutput ? call.outputs[imageOperand] : call.inputs[imageOperand];
  if (image.rank() - 2 <= cuda::kMaxConvSpatialRank)
    return true;
  error = "convolutions on the CUDA target take 1 to " + std::to_string(cuda::kMaxConvSpatialRank) +
          " spatial dimensions, got " + std::to_string(image.rank() - 2);
  return false;
}

} // namespace

void addMatMulTargetOps(TargetOps &ops) {
  using namespace cuda;
  ops["matmul"] = TargetOp{&floatMatMul, &carvedWorkspaceBytes<&carveMatMul>};
  ops["matmul_nf4"] = TargetOp{&nf4RowsFit, &carvedWorkspaceBytes<&carveMatMulNf4>};
  ops["linear_cross_entropy"] = TargetOp{nullptr, &carvedWorkspaceBytes<&carveLinearCrossEntropy>};
  ops["linear_cross_entropy_grad"] =
      TargetOp{nullptr, &carvedWorkspaceBytes<&carveLinearCrossEntropyGrad>};
  ops["conv"] = TargetOp{&convRankFits<0, false>,
                         &carvedWorkspaceBytes<&carveConvCall<ConvDirection::Forward>>};
  ops["conv_grad_input"] = TargetOp{
      &convRankFits<0, true>, &carvedWorkspaceBytes<&carveConvCall<ConvDirection::GradInput>>};
  ops["conv_grad_weight"] = TargetOp{
      &convRankFits<1, false>, &carvedWorkspaceBytes<&carveConvCall<ConvDirection::GradWeight>>};
}

} // namespace memc::kernels
