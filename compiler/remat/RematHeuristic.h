//===- RematHeuristic.h - choosing what to recompute, fast -------*- C++ -*-===//
//
// Two families of decisions over a RematGraph, both scored by simulateRemat:
//  - greedyRemat (--remat auto): only as much recomputation as a peak limit needs. At the
//    step where the simulated peak occurs it recomputes the forward op whose kept outputs free
//    the most bytes there per unit of recompute cost (with the ops it needs recomputed so that
//    no unsaved value is kept alive for it), until the peak fits; then it undoes every
//    recomputation the limit does not need (worst bytes per cost first), and improves the
//    result by a ruin-and-recreate walk. Like XLA's HloRematerialization it works at the peak of
//    the schedule; unlike it, it ranks ops by bytes per unit of cost, which is what PyTorch's
//    min-cut partitioner optimises too, so elementwise ops with large outputs (GELU, dropout,
//    softmax) go first and matmuls last. It keeps the cheapest of several starts: two ways of
//    valuing freed bytes, a descent as low as it goes pruned back up, and layer-boundary
//    checkpoints of several segment lengths pruned likewise.
//  - boundaryRemat (--remat full and Chen et al.'s sqrt(n) checkpointing): keep only the
//    values at layer boundaries and recompute everything else. A boundary is a point of the
//    forward where the fewest large values are live (the residual stream between transformer
//    blocks, the feature map between ResNet blocks); keeping every k-th boundary gives segments
//    of k layers.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REMAT_REMATHEURISTIC_H
#define MEMC_COMPILER_REMAT_REMATHEURISTIC_H

#include "compiler/remat/RematGraph.h"

namespace memc::remat {

/// A decision whose simulated peak is at most `peakLimitBytes` if the heuristic finds one;
/// otherwise the lowest-peak decision it reached on the way.
RematDecision greedyRemat(const RematGraph &graph, uint64_t peakLimitBytes);

/// The forward's layer boundaries, in order: each is the set of forward values live across it.
std::vector<std::vector<int32_t>> layerBoundaries(const RematGraph &graph);

/// Keeps the values of every `keepEvery`-th boundary (1: all of them) and recomputes every other
/// forward op.
RematDecision boundaryRemat(const RematGraph &graph, int keepEvery);

/// Chen et al. 2016: keep sqrt(#boundaries) evenly spaced boundaries.
RematDecision chenSqrtRemat(const RematGraph &graph);

} // namespace memc::remat

#endif // MEMC_COMPILER_REMAT_REMATHEURISTIC_H
