//===- Baselines.h - the arena planners of TFLite and XLA, as baselines -*- C++ -*-===//
//
// Re-implementations (from their published descriptions, not their code) of the two planners
// memc measures itself against. They ignore in-place hints, as the originals' arena planners do.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PLANNER_BASELINES_H
#define MEMC_COMPILER_PLANNER_BASELINES_H

#include "compiler/planner/Assignment.h"

namespace memc::planner {

/// TFLite's greedy by size (TFLite Micro's GreedyMemoryPlanner; Pisarchyk & Lee 2020): buffers
/// by size descending, earlier first step among equals; each goes into the lowest gap between
/// the already placed buffers it shares a step with that is large enough, else on top of them.
/// O(min(sum over buffers b of overlap(b) log overlap(b), n^2)).
Assignment planGreedyBySize(const std::vector<BufferRequest> &buffers,
                            uint64_t alignment = kDefaultAlignment);

/// XLA's heap-simulator planning as buffer assignment configures it: the best of
///  - the heap simulated in schedule order with a best-fit free list,
///  - GlobalDecreasingSizeBestFitHeap, spatial order (size, then duration, descending),
///  - GlobalDecreasingSizeBestFitHeap, temporal order (duration, then size, descending);
/// the two global ones put each buffer into the smallest free chunk left by the overlapping
/// buffers already placed, else on top. `strategy` names the one that won.
Assignment planHeapSimulatorBestFit(const std::vector<BufferRequest> &buffers,
                                    uint64_t alignment = kDefaultAlignment);

} // namespace memc::planner

#endif // MEMC_COMPILER_PLANNER_BASELINES_H
