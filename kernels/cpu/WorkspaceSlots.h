//===- WorkspaceSlots.h - scratch per slot, not per thread ------*- C++ -*-===//
//
// Scratch per worker would make a kernel's workspace (Kernel.h) depend on MEMC_NUM_THREADS,
// which the compiler cannot know; scratch per slot, with work split into at most
// kMaxWorkspaceSlots pieces, is fixed when the plan is made. More threads than slots leave the
// extra threads idle in such loops (parallelForSlots, ThreadPool.h). Header-only: the CPU
// workspace rules (CpuTarget.h) size slots without the thread pool.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_WORKSPACESLOTS_H
#define MEMC_KERNELS_CPU_WORKSPACESLOTS_H

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// The most scratch slots a kernel gives its concurrent pieces of work.
constexpr int64_t kMaxWorkspaceSlots = 16;

/// The number of slots parallelForSlots(begin, end, grain, ...) uses: [begin, end) cut into
/// pieces of at least `grain` indices, at most kMaxWorkspaceSlots of them (at least 1).
inline int64_t workspaceSlots(int64_t begin, int64_t end, int64_t grain) {
  int64_t total = std::max<int64_t>(end - begin, 0);
  return std::clamp<int64_t>(total / std::max<int64_t>(grain, 1), 1, kMaxWorkspaceSlots);
}

/// Indices per piece in parallelForSlots(begin, end, grain, ...): slot i gets [begin + i *
/// size, ...) while that start is below `end`, so with uneven counts the last slots get none.
inline int64_t slotPieceSize(int64_t begin, int64_t end, int64_t grain) {
  int64_t slots = workspaceSlots(begin, end, grain);
  return (std::max<int64_t>(end - begin, 0) + slots - 1) / slots;
}

/// The slots parallelForSlots(begin, end, grain, ...) gives any indices: 0 .. this - 1.
inline int64_t slotsWithWork(int64_t begin, int64_t end, int64_t grain) {
  int64_t size = slotPieceSize(begin, end, grain);
  return size == 0 ? 0 : (end - begin + size - 1) / size;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_WORKSPACESLOTS_H
