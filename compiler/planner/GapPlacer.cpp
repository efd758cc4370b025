//===- GapPlacer.cpp - greedy placement into gaps -------------------------===//
#include "compiler/planner/GapPlacer.h"

#include <algorithm>
#include <cmath>

namespace memc::planner {
namespace {

constexpr uint64_t kUnplaced = std::numeric_limits<uint64_t>::max();

} // namespace

GapPlacer::GapPlacer(const PlanningProblem &problem, const OverlapIndex &index)
    : problem(problem), index(index) {
  // Work units are calibrated to take about the same time (3-5 ns on a 2020s x86 core) in both
  // modes, and are what gather*() count. Per buffer, the index visits every overlapping buffer
  // (a random access each) and sorts the placed half of them; a scan reads every placed buffer,
  // half of the buffers on average, and the insertion that follows moves some.
  double indexCost = 0;
  for (int32_t id = 0; id < problem.numBuffers(); ++id) {
    double overlap = static_cast<double>(index.overlapCount(id));
    indexCost += 2 + 2 * overlap + overlap / 2 * std::log2(overlap / 2 + 2);
  }
  double n = problem.numBuffers();
  double scanCost = n * n * 0.31;
  scan = scanCost < indexCost;
  passWork = static_cast<uint64_t>(std::min(indexCost, scanCost)) + 1;
}

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

  placedByOffset.clear();
  placedRange.assign(n, Range{0, 0});
  for (int32_t id : order) {
    uint64_t size = problem.size[id];
    if (size == 0) {
      placement.offsets[id] = 0;
      continue;
    }
    if (scan)
      gatherByScan(id);
    else
      gatherFromIndex(id);
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
    placedRange[id] = {offset, offset + size};
    if (scan) {
      Placed entry{offset, offset + size, problem.start[id], problem.end[id], id};
      auto at = std::upper_bound(
          placedByOffset.begin(), placedByOffset.end(), offset,
          [](uint64_t begin, const Placed &other) { return begin < other.begin; });
      workDone += static_cast<uint64_t>(placedByOffset.end() - at) / 8;
      placedByOffset.insert(at, entry);
    }
    if (placement.arenaBytes > abandonAbove) {
      placement.abandoned = true;
      placement.stoppedAt = id;
      return placement;
    }
  }
  if (!tookHint)
    placement.inPlaceSource.clear();
  return placement;
}

void GapPlacer::gatherFromIndex(int32_t id) {
  occupied.clear();
  index.forEachOverlapping(id, [&](int32_t other) {
    const Range &range = placedRange[other];
    if (range.begin < range.end)
      occupied.push_back({range.begin, range.end, other});
  });
  std::sort(occupied.begin(), occupied.end(),
            [](const Occupied &a, const Occupied &b) { return a.begin < b.begin; });
  double overlap = static_cast<double>(occupied.size());
  workDone += 2 + 2 * static_cast<uint64_t>(index.overlapCount(id)) +
              static_cast<uint64_t>(overlap * std::log2(overlap + 2));
}

void GapPlacer::gatherByScan(int32_t id) {
  // Branch-free: every entry is written, and only the overlapping ones are kept.
  occupied.resize(placedByOffset.size());
  int32_t first = problem.start[id], last = problem.end[id];
  size_t kept = 0;
  for (const Placed &other : placedByOffset) {
    occupied[kept] = {other.begin, other.end, other.id};
    kept += (other.first <= last) & (first <= other.last);
  }
  occupied.resize(kept);
  workDone += 2 + placedByOffset.size() / 2;
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
