//===- GapPlacer.cpp - greedy placement into gaps -------------------------===//
#include "compiler/planner/GapPlacer.h"

#include <algorithm>

namespace memc::planner {
namespace {

constexpr uint64_t kUnplaced = std::numeric_limits<uint64_t>::max();

} // namespace

Placement GapPlacer::place(const std::vector<int32_t> &order, GapFit fit, bool takeHints,
                           uint64_t abandonAbove) {
  int32_t n = problem.numBuffers();
  Placement placement;
  placement.offsets.assign(n, kUnplaced);
  bool hints = takeHints && !problem.partner.empty();
  std::vector<char> lent, borrowed;
  bool tookHint = false;
  if (hints) {
    lent.assign(n, 0);
    borrowed.assign(n, 0);
    placement.inPlaceSource.assign(n, -1);
  }

  for (int32_t id : order) {
    uint64_t size = problem.size[id];
    if (size == 0) {
      placement.offsets[id] = 0;
      continue;
    }
    occupied.clear();
    visitCount += 1 + index.overlapCount(id);
    index.forEachOverlapping(id, [&](int32_t other) {
      uint64_t offset = placement.offsets[other];
      if (offset != kUnplaced && problem.size[other] != 0)
        occupied.push_back({offset, offset + problem.size[other], other});
    });
    std::sort(occupied.begin(), occupied.end(),
              [](const Occupied &a, const Occupied &b) { return a.begin < b.begin; });
    uint64_t offset = findGap(size, fit);

    int32_t slot = hints ? choosePartner(id, placement, offset + size, lent, borrowed) : -1;
    if (slot >= 0) {
      int32_t other = problem.partner[slot];
      offset = placement.offsets[other];
      int32_t source = problem.partnerIsSource[slot] ? other : id;
      int32_t target = source == id ? other : id;
      lent[source] = borrowed[target] = 1;
      placement.inPlaceSource[target] = source;
      tookHint = true;
    }
    placement.offsets[id] = offset;
    placement.arenaBytes = std::max(placement.arenaBytes, offset + size);
    if (placement.arenaBytes > abandonAbove) {
      placement.abandoned = true;
      return placement;
    }
  }
  if (!tookHint)
    placement.inPlaceSource.clear();
  return placement;
}

uint64_t GapPlacer::findGap(uint64_t size, GapFit fit) const {
  uint64_t top = 0, best = kUnplaced, bestGap = kUnplaced;
  for (const Occupied &other : occupied) {
    if (other.begin > top) {
      uint64_t gap = other.begin - top;
      if (gap >= size) {
        if (fit == GapFit::First || gap == size)
          return top;
        if (gap < bestGap) {
          bestGap = gap;
          best = top;
        }
      }
    }
    top = std::max(top, other.end);
  }
  return best != kUnplaced ? best : top;
}

bool GapPlacer::isFree(uint64_t begin, uint64_t size, int32_t ignore) const {
  for (const Occupied &other : occupied) {
    if (other.begin >= begin + size)
      break;
    if (other.id != ignore && other.end > begin)
      return false;
  }
  return true;
}

int32_t GapPlacer::choosePartner(int32_t id, const Placement &placement, uint64_t gapEnd,
                                 const std::vector<char> &lent,
                                 const std::vector<char> &borrowed) const {
  uint64_t ceiling = std::max(placement.arenaBytes, gapEnd);
  for (int32_t slot = problem.hintBegin[id]; slot < problem.hintBegin[id + 1]; ++slot) {
    int32_t other = problem.partner[slot];
    uint64_t offset = placement.offsets[other];
    if (offset == kUnplaced || offset + problem.size[id] > ceiling)
      continue;
    int32_t source = problem.partnerIsSource[slot] ? other : id;
    int32_t target = source == id ? other : id;
    if (lent[source] || borrowed[target])
      continue;
    if (isFree(offset, problem.size[id], other))
      return slot;
  }
  return -1;
}

} // namespace memc::planner
