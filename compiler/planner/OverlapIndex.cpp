//===- OverlapIndex.cpp - interval stabbing over the schedule -------------===//
#include "compiler/planner/OverlapIndex.h"

#include <algorithm>
#include <numeric>

namespace memc::planner {
namespace {

/// The canonical nodes of [first, last] in a bottom-up segment tree with `leaves` leaves.
template <typename Emit>
void forEachCanonicalNode(int32_t leaves, int32_t first, int32_t last, Emit &&emit) {
  for (int32_t lo = first + leaves, hi = last + leaves + 1; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1)
      emit(lo++);
    if (hi & 1)
      emit(--hi);
  }
}

} // namespace

OverlapIndex::OverlapIndex(const PlanningProblem &problem) : problem(problem) {
  int32_t n = problem.numBuffers(), points = problem.numPoints;
  while (leaves < std::max(points, 1))
    leaves <<= 1;

  nodeBegin.assign(2 * leaves + 1, 0);
  for (int32_t i = 0; i < n; ++i)
    forEachCanonicalNode(leaves, problem.start[i], problem.end[i],
                         [&](int32_t node) { ++nodeBegin[node + 1]; });
  std::partial_sum(nodeBegin.begin(), nodeBegin.end(), nodeBegin.begin());
  nodeItems.resize(nodeBegin.back());
  std::vector<int32_t> fill(nodeBegin.begin(), nodeBegin.end() - 1);
  for (int32_t i = 0; i < n; ++i)
    forEachCanonicalNode(leaves, problem.start[i], problem.end[i],
                         [&](int32_t node) { nodeItems[fill[node]++] = i; });

  byStart.resize(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::stable_sort(byStart.begin(), byStart.end(),
                   [&](int32_t a, int32_t b) { return problem.start[a] < problem.start[b]; });

  // Per point: counts and bytes of the buffers entirely before or after it.
  std::vector<int64_t> startsAt(points + 1, 0), endsAt(points + 1, 0);
  std::vector<uint64_t> bytesStartAt(points + 1, 0), bytesEndAt(points + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    ++startsAt[problem.start[i]];
    ++endsAt[problem.end[i]];
    bytesStartAt[problem.start[i]] += problem.size[i];
    bytesEndAt[problem.end[i]] += problem.size[i];
    totalBytes += problem.size[i];
  }
  startsAfter.assign(points + 1, n);
  endsBefore.assign(points + 1, 0);
  bytesStartingAfter.assign(points + 1, 0);
  bytesEndingBefore.assign(points + 1, 0);
  int64_t started = 0;
  for (int32_t p = 0; p < points; ++p) {
    started += startsAt[p];
    startsAfter[p] = static_cast<int32_t>(started);
    endsBefore[p + 1] = endsBefore[p] + endsAt[p];
    bytesEndingBefore[p + 1] = bytesEndingBefore[p] + bytesEndAt[p];
  }
  for (int32_t p = points - 1; p >= 0; --p)
    bytesStartingAfter[p] = bytesStartingAfter[p + 1] + bytesStartAt[p + 1];
}

int64_t OverlapIndex::overlapCount(int32_t id) const {
  int32_t first = problem.start[id], last = problem.end[id];
  int64_t after = problem.numBuffers() - startsAfter[last];
  return problem.numBuffers() - 1 - endsBefore[first] - after;
}

uint64_t OverlapIndex::overlapBytes(int32_t id) const {
  int32_t first = problem.start[id], last = problem.end[id];
  return totalBytes - problem.size[id] - bytesEndingBefore[first] - bytesStartingAfter[last];
}

} // namespace memc::planner
