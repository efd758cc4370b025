//===- EventOrderAllocator.cpp - free-list allocation along the schedule --===//
#include "compiler/planner/EventOrderAllocator.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace memc::planner {
namespace {

/// Free chunks below the current top of the heap, indexed by offset (for merging) and by size
/// (for best fit). Adjacent free chunks are always merged.
class FreeList {
public:
  uint64_t allocate(uint64_t size) {
    auto chunk = bestChunk(size);
    if (chunk != byOffset.end()) {
      uint64_t offset = chunk->first, chunkSize = chunk->second;
      erase(chunk);
      if (chunkSize > size)
        insert(offset + size, chunkSize - size);
      return offset;
    }
    // Nothing fits: grow the heap. No free chunk ends at the top (release lowers the top
    // instead), so this is also XLA's "extend the last free chunk".
    uint64_t offset = top;
    top += size;
    highWater = std::max(highWater, top);
    return offset;
  }

  void release(uint64_t offset, uint64_t size) {
    auto next = byOffset.lower_bound(offset);
    if (next != byOffset.end() && next->first == offset + size) {
      size += next->second;
      next = erase(next);
    }
    if (next != byOffset.begin()) {
      auto previous = std::prev(next);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        size += previous->second;
        erase(previous);
      }
    }
    if (offset + size == top)
      top = offset; // the heap shrinks; highWater keeps the peak
    else
      insert(offset, size);
  }

  uint64_t highWaterMark() const { return highWater; }

private:
  using Chunks = std::map<uint64_t, uint64_t>; // offset -> size

  Chunks::iterator bestChunk(uint64_t size) {
    auto it = bySize.lower_bound({size, 0});
    return it == bySize.end() ? byOffset.end() : byOffset.find(it->second);
  }
  void insert(uint64_t offset, uint64_t size) {
    byOffset.emplace(offset, size);
    bySize.emplace(size, offset);
  }
  Chunks::iterator erase(Chunks::iterator chunk) {
    bySize.erase({chunk->second, chunk->first});
    return byOffset.erase(chunk);
  }

  Chunks byOffset;
  std::set<std::pair<uint64_t, uint64_t>> bySize; // (size, offset)
  uint64_t top = 0, highWater = 0;
};

} // namespace

Placement allocateInScheduleOrder(const PlanningProblem &problem) {
  int32_t n = problem.numBuffers();
  std::vector<int32_t> byStart(n), byEnd(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::iota(byEnd.begin(), byEnd.end(), 0);
  std::stable_sort(byStart.begin(), byStart.end(),
                   [&](int32_t a, int32_t b) { return problem.start[a] < problem.start[b]; });
  std::stable_sort(byEnd.begin(), byEnd.end(),
                   [&](int32_t a, int32_t b) { return problem.end[a] < problem.end[b]; });

  Placement placement;
  placement.offsets.assign(n, 0);
  FreeList heap;
  size_t freed = 0;
  for (int32_t id : byStart) {
    // A buffer whose last step is the current one is still being read: free only earlier ones.
    for (; freed < byEnd.size() && problem.end[byEnd[freed]] < problem.start[id]; ++freed)
      if (uint64_t size = problem.size[byEnd[freed]])
        heap.release(placement.offsets[byEnd[freed]], size);
    if (uint64_t size = problem.size[id])
      placement.offsets[id] = heap.allocate(size);
  }
  placement.arenaBytes = heap.highWaterMark();
  return placement;
}

Placement allocateInReverseScheduleOrder(const PlanningProblem &problem) {
  PlanningProblem mirrored = problem;
  for (int32_t id = 0; id < problem.numBuffers(); ++id) {
    mirrored.start[id] = problem.numPoints - 1 - problem.end[id];
    mirrored.end[id] = problem.numPoints - 1 - problem.start[id];
  }
  return allocateInScheduleOrder(mirrored);
}

} // namespace memc::planner
