//===- OneDnnConvolution.h - conv and its gradients through oneDNN -*- C++ -*-===//
//
// conv, conv_grad_input and conv_grad_weight run on oneDNN's primitives where those win (the
// selection rule, oneDnnConvolution below, is the one place that decides), else on memc's
// im2col kernels. The primitives pick their own blocked layouts (nChw16c and the like): memc's
// plain tensors are reordered into workspace copies and the result back, and the primitive's
// scratchpad is user-mode, so every byte the call touches beyond its tensors is in the plan's
// workspace. What oneDNN still allocates itself is fixed per shape, not per call: the primitive
// objects and their JIT code, cached here once per shape and thread count.
//
// The scratchpad depends on the thread count oneDNN is given (per-thread buffers, not
// monotonic), which the plan cannot know: the plan sizes the largest over 1..oneDnnPlanThreads()
// threads (the compiling machine's cores, at most 16), and a run gives oneDNN the most threads up
// to the runner's count (MEMC_NUM_THREADS) whose primitive fits what the plan carved, so a plan
// made on a 2-core machine runs oneDNN on 2 threads elsewhere. Like oneDNN's choice of kernels
// (AVX-512, AMX), this makes the workspace of a CPU plan depend on the compiling machine; a run
// whose primitive fits at no thread count (another CPU) fails with a message.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNCONVOLUTION_H
#define MEMC_KERNELS_CPU_ONEDNNCONVOLUTION_H

#include "kernels/Kernel.h"
#include "kernels/KernelContext.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <cstdint>
#include <optional>

namespace memc::kernels {

/// Which of the three convolution kernels a call is, and so which tensor plays which role:
/// conv(x, w[, b]) -> y, conv_grad_input(dy, w) -> dx, conv_grad_weight(dy, x) -> dw.
enum class ConvDirection { Forward, GradInput, GradWeight };

/// The thread counts the plan sizes oneDNN's workspace for: 1 up to this machine's cores, at
/// most kMaxWorkspaceSlots.
int oneDnnPlanThreads();

/// The workspace of a call oneDNN runs, in bytes: the image (x or dx), the weights (w or dw)
/// and the result side (y or dy) in the primitive's layouts, each 0 where that layout is the
/// tensor's own, and the scratchpad.
struct OneDnnConvSizes {
  uint64_t image = 0, weights = 0, outputs = 0, scratchpad = 0;
};

/// The selection rule, the one place that decides: the workspace oneDNN's primitive needs for
/// `call` at any thread count up to oneDnnPlanThreads() when oneDNN runs the call, nullopt when
/// memc's kernel does. Measured on the ResNet bench model's layers
/// (bench/kernels/conv_vs_torch.py, docs/benchmarks.md):
///  - bf16 runs on oneDNN (AVX512-BF16/AMX kernels, f32 accumulation) whenever it has an
///    optimized implementation: faster on every layer, and its blocked bf16 copies are half the
///    f32 operands memc's kernel would widen into.
///  - f32 runs on oneDNN for ungrouped convolutions with a window larger than 1x1 whose
///    workspace is at most 4 MiB, except the input gradient of images with fewer than 8
///    channels (memc's col2im wins on stems); 1x1 windows (memc multiplies the image directly),
///    grouped convolutions (not measured) and larger workspaces (memc's tiles keep the peak
///    down) stay on memc's kernels.
///  - f16 and every case without an optimized oneDNN implementation for this CPU run on memc.
std::optional<OneDnnConvSizes> oneDnnConvolution(const KernelCall &call, ConvDirection direction);

/// The oneDNN pieces of a call's workspace.
struct OneDnnConvScratch {
  OneDnnConvSizes sizes;
  uint8_t *image = nullptr, *weights = nullptr, *outputs = nullptr, *scratchpad = nullptr;
};

inline OneDnnConvScratch carveOneDnnConv(const OneDnnConvSizes &sizes, WorkspaceCarver &carver) {
  OneDnnConvScratch scratch;
  scratch.sizes = sizes;
  scratch.image = carver.take<uint8_t>(static_cast<int64_t>(sizes.image));
  scratch.weights = carver.take<uint8_t>(static_cast<int64_t>(sizes.weights));
  scratch.outputs = carver.take<uint8_t>(static_cast<int64_t>(sizes.outputs));
  scratch.scratchpad = carver.take<uint8_t>(static_cast<int64_t>(sizes.scratchpad));
  return scratch;
}

/// Runs `call` on oneDNN's primitive in the pieces `scratch` the plan sized (oneDnnConvolution),
/// with the most OpenMP threads up to min(threads, kMaxWorkspaceSlots) whose primitive fits them.
bool runOneDnnConvolution(KernelContext &context, const KernelCall &call, ConvDirection direction,
                          int threads, const OneDnnConvScratch &scratch);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNCONVOLUTION_H
