//===- CpuTarget.cpp - the CPU target's record ----------------------------===//
#include "kernels/cpu/CpuTarget.h"
#include "kernels/CollectiveCalls.h"

#include "kernels/cpu/AttentionWorkspace.h"
#include "kernels/cpu/ConvolutionBackwardWorkspace.h"
#include "kernels/cpu/ConvolutionWorkspace.h"
#include "kernels/cpu/IndexingBackwardWorkspace.h"
#include "kernels/cpu/LayoutWorkspace.h"
#include "kernels/cpu/LinearCrossEntropyWorkspace.h"
#include "kernels/cpu/LossesWorkspace.h"
#include "kernels/cpu/MatMulNf4Workspace.h"
#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cpu/NormalizationBackwardWorkspace.h"
#include "kernels/cpu/NormalizationWorkspace.h"
#include "kernels/cpu/PoolingBackwardWorkspace.h"
#include "kernels/cpu/ReductionWorkspace.h"
#include "kernels/ops/OpContracts.h"

namespace memc::kernels {
namespace {

/// Kernels that need scratch on the CPU, with their rule; the others need none.
const std::map<std::string, KernelWorkspace> &workspaceRules() {
  static const std::map<std::string, KernelWorkspace> rules = {
      {"matmul", &carvedWorkspaceBytes<carveMatMul>},
      {"matmul_nf4", &carvedWorkspaceBytes<carveMatMulNf4>},
      {"softmax", &carvedWorkspaceBytes<carveSoftmax>},
      {"log_softmax", &carvedWorkspaceBytes<carveSoftmax>},
      {"layer_norm", &carvedWorkspaceBytes<carveLayerNorm>},
      {"add_layer_norm", &carvedWorkspaceBytes<carveAddLayerNorm>},
      {"rms_norm", &carvedWorkspaceBytes<carveRmsNorm>},
      {"batch_norm", &carvedWorkspaceBytes<carveBatchNorm>},
      {"batch_moments", &carvedWorkspaceBytes<carveBatchMoments>},
      {"reduce_sum", &carvedWorkspaceBytes<carveReduce>},
      {"reduce_mean", &carvedWorkspaceBytes<carveReduce>},
      {"reduce_max", &carvedWorkspaceBytes<carveReduce>},
      {"reduce_prod", &carvedWorkspaceBytes<carveReduce>},
      {"reduce_l2", &carvedWorkspaceBytes<carveReduce>},
      {"reduce_log_sum_exp", &carvedWorkspaceBytes<carveReduce>},
      {"gather", &carvedWorkspaceBytes<carveGather>},
      {"conv", &carvedWorkspaceBytes<carveConv>},
      {"flash_attention", &carvedWorkspaceBytes<carveFlashAttention>},
      {"layer_norm_grad", &carvedWorkspaceBytes<carveRowNormGrad>},
      {"rms_norm_grad", &carvedWorkspaceBytes<carveRowNormGrad>},
      {"batch_norm_grad", &carvedWorkspaceBytes<carveBatchNormGrad>},
      {"gather_grad", &carvedWorkspaceBytes<carveGatherGrad>},
      {"conv_grad_input", &carvedWorkspaceBytes<carveGradInput>},
      {"conv_grad_weight", &carvedWorkspaceBytes<carveGradWeight>},
      {"max_pool_grad", &carvedWorkspaceBytes<carveMaxPoolGrad>},
      {"max_pool_grad_argmax", &carvedWorkspaceBytes<carveMaxPoolGradArgmax>},
      {"avg_pool_grad", &carvedWorkspaceBytes<carveAvgPoolGrad>},
      {"flash_attention_grad", &carvedWorkspaceBytes<carveFlashAttentionGrad>},
      {"cross_entropy", &carvedWorkspaceBytes<carveCrossEntropy>},
      {"cross_entropy_grad", &carvedWorkspaceBytes<carveCrossEntropyGrad>},
      {"linear_cross_entropy", &carvedWorkspaceBytes<carveLinearCrossEntropy>},
      {"linear_cross_entropy_grad", &carvedWorkspaceBytes<carveLinearCrossEntropyGrad>},
      {"reduce_scatter", &carvedWorkspaceBytes<carveReduceScatter>},
      {"all_gather", &carvedWorkspaceBytes<carveAllGather>},
  };
  return rules;
}

const TargetOps &cpuOps() {
  static const TargetOps ops = [] {
    TargetOps all;
    for (const auto &[name, check] : opChecks()) {
      auto rule = workspaceRules().find(name);
      all[name].workspace = rule == workspaceRules().end() ? nullptr : rule->second;
    }
    return all;
  }();
  return ops;
}

/// Constants at 64 bytes: a cache line, the widest vector load.
constexpr Target kCpu{kCpuTarget, 64, /*stagesInputs=*/false, cpuOps};

} // namespace

const Target &cpuTarget() { return kCpu; }

} // namespace memc::kernels
