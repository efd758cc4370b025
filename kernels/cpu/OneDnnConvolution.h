//===- OneDnnConvolution.h - conv and its gradients through oneDNN -*- C++ -*-===//
//
// conv, conv_grad_input and conv_grad_weight run on oneDNN's primitives where those win (the
// selection rule, oneDnnConvolution below, is the one place that decides), else on memc's
// im2col kernels. The primitives pick their own blocked layouts (nChw16c and the like): memc's
// plain tensors are reordered into workspace copies and the result back, and the primitive's
// scratchpad is user-mode, so every byte the call touches beyond its tensors is in the plan's
// workspace. What oneDNN still allocates itself is fixed per shape, not per call: the primitive
// objects and their JIT code, cached here once per chunk shape.
//
// The batch is cut into chunks of images by a rule of the call's shapes alone, and each chunk
// is a single-threaded primitive run on one of memc's pool's slots (OneDnnConvolutionOnPool.h),
// as the bf16 matmul's blocks are (OneDnnMatMul.h). oneDNN therefore starts no OpenMP threads:
// a multi-threaded primitive's OpenMP workers spun after each convolution on the core memc's
// pool needed next (43% of the 2-thread ResNet step's samples, docs/benchmarks.md). Because the
// chunks do not depend on the thread count, neither do the workspace nor the results: the
// weight gradient sums the chunks' partial f32 gradients in chunk order, rounding once.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ONEDNNCONVOLUTION_H
#define MEMC_KERNELS_CPU_ONEDNNCONVOLUTION_H

#include "kernels/Kernel.h"
#include "kernels/KernelContext.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/ConvChoice.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <cstdint>
#include <optional>

namespace memc::kernels {

/// How a call oneDNN runs is cut, and the workspace each piece takes (bytes, each rounded up to
/// kWorkspaceAlignment; 0 where a layout is the tensor's own): `chunks` chunks of `chunkImages`
/// images (the last may hold fewer), one slot each. Per slot: the chunk's image (x or dx) and
/// outputs (y or dy) in the primitive's layouts and its scratchpad; for conv_grad_weight also
/// the chunk's f32 weight gradient in the primitive's layout (`weights`) and in the plain one
/// (`partial`; 0 when one f32 chunk writes dw itself). Shared by all chunks of conv and
/// conv_grad_input: the weights in the primitive's layout (`sharedWeights`), reordered once.
struct OneDnnConvChunks {
  int64_t chunks = 0, chunkImages = 0;
  uint64_t image = 0, outputs = 0, weights = 0, partial = 0, scratchpad = 0;
  uint64_t sharedWeights = 0;

  uint64_t slotBytes() const { return image + outputs + weights + partial + scratchpad; }
  uint64_t totalBytes() const {
    return sharedWeights + static_cast<uint64_t>(chunks) * slotBytes();
  }
};

/// The most workspace (blocked copies and scratchpads) an f32 call may take on oneDNN: beyond it
/// memc's tiled kernels, whose workspace stays a small constant, keep the plan's peak down.
/// 16 MiB: the CIFAR ResNet's 16-channel 32x32 layers at batch 32 need 4.1-4.4 MiB (blocked
/// copies of the whole input and output), and on oneDNN they run 1.7-2.0x faster at 1 thread
/// and 3.3-3.7x at 2 (memc-kernel-bench "32x16x32x32 k3"; the whole step 46.9 -> 32.1 ms and
/// 34.6 -> 17.4 ms) for 0.8 MiB more at the plan's peak (27.26 -> 28.05 MiB).
constexpr uint64_t kOneDnnMaxF32WorkspaceBytes = uint64_t{16} << 20;

/// The selection rule, the one place that decides: how oneDNN runs `call`, nullopt when memc's
/// kernel does.
///  - Ungrouped f32 and bf16 calls go to the faster side at the nearest point of the measured
///    table (ConvChoice.h), oneDNN only where it has an optimized implementation for this CPU.
///  - f32 calls whose oneDNN workspace would pass kOneDnnMaxF32WorkspaceBytes stay on memc's
///    tiles: the plan's peak before speed.
///  - Grouped calls are not in the table: bf16 runs on oneDNN where it can (memc's kernel would
///    widen whole operands into f32 workspace), f32 on memc's kernel.
///  - f16 runs on memc's kernel.
std::optional<OneDnnConvChunks> oneDnnConvolution(const KernelCall &call, ConvDirection direction);

/// The chunks the rule cuts `call` into, from its shapes alone: a power of two, each chunk at
/// least 2^21 multiply-adds (a oneDNN call costs about 10 us whatever its size), at most
/// kMaxWorkspaceSlots.
int64_t oneDnnChunkCount(const KernelCall &call, ConvDirection direction);

/// How oneDNN would run `call` cut into `chunkCount` chunks (1..kMaxWorkspaceSlots; fewer when
/// the batch is smaller or does not divide evenly), whatever the rule says; nullopt when oneDNN
/// cannot run it. The rule's own cut is one of these (and what kernel tests compare it with).
std::optional<OneDnnConvChunks> oneDnnConvChunks(const KernelCall &call, ConvDirection direction,
                                                 int64_t chunkCount);

/// The oneDNN pieces of a call's workspace: `slots` holds chunks.chunks slots of
/// chunks.slotBytes() bytes, each laid out image, outputs, weights, partial, scratchpad.
struct OneDnnConvScratch {
  OneDnnConvChunks chunks;
  uint8_t *sharedWeights = nullptr, *slots = nullptr;
};

inline OneDnnConvScratch carveOneDnnConv(const OneDnnConvChunks &chunks, WorkspaceCarver &carver) {
  OneDnnConvScratch scratch;
  scratch.chunks = chunks;
  scratch.sharedWeights = carver.take<uint8_t>(static_cast<int64_t>(chunks.sharedWeights));
  scratch.slots = carver.take<uint8_t>(chunks.chunks * static_cast<int64_t>(chunks.slotBytes()));
  return scratch;
}

/// Before the chunks run: conv and conv_grad_input reorder the weights into the shared copy.
void prepareOneDnnConvolution(const KernelCall &call, ConvDirection direction,
                              const OneDnnConvScratch &scratch);

/// Runs chunk `chunk` of `call` (0 <= chunk < scratch.chunks.chunks) on the calling thread, on
/// one thread, with slot `chunk`'s pieces. Chunks may run concurrently after the preparation.
void runOneDnnConvChunk(const KernelCall &call, ConvDirection direction,
                        const OneDnnConvScratch &scratch, int64_t chunk);

/// After every chunk ran: conv_grad_weight sums the chunks' partial gradients of elements
/// [begin, end) of dw in chunk order and stores them in dw's dtype (elements are independent,
/// so ranges may run concurrently).
void finishOneDnnConvolution(const KernelCall &call, ConvDirection direction,
                             const OneDnnConvScratch &scratch, int64_t begin, int64_t end);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ONEDNNCONVOLUTION_H
