//===- Assignment.cpp - checking a placement ------------------------------===//
//
// The check sweeps the schedule once. Buffers live at the current step sit in a map keyed by
// offset; those that are not in-place partners are pairwise disjoint, so a new buffer can only
// collide with the closest key below it or with keys inside its own byte range. In-place partners
// share an offset, so each key holds a small stack of buffers rather than one.
//
//===----------------------------------------------------------------------===//
#include "compiler/planner/Assignment.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <utility>

namespace memc::planner {
namespace {

std::string describe(const std::vector<BufferRequest> &buffers, const std::vector<uint64_t> &size,
                     const Assignment &assignment, int32_t id) {
  const BufferRequest &buffer = buffers[id];
  return "buffer " + std::to_string(id) + " (bytes [" + std::to_string(assignment.offsets[id]) +
         ", " + std::to_string(assignment.offsets[id] + size[id]) + "), steps [" +
         std::to_string(buffer.firstStep) + ", " + std::to_string(buffer.lastStep) + "])";
}

bool checkInPlacePairs(const std::vector<BufferRequest> &buffers, const Assignment &assignment,
                       const std::vector<InPlaceHint> &hints, std::string &error) {
  const std::vector<int32_t> &source = assignment.inPlaceSource;
  if (source.empty())
    return true;
  if (source.size() != buffers.size()) {
    error = "inPlaceSource has " + std::to_string(source.size()) + " entries for " +
            std::to_string(buffers.size()) + " buffers";
    return false;
  }
  std::set<std::pair<int32_t, int32_t>> offered;
  for (const InPlaceHint &hint : hints)
    offered.emplace(hint.source, hint.target);
  std::vector<char> lent(buffers.size(), 0);
  for (size_t target = 0; target < buffers.size(); ++target) {
    int32_t from = source[target];
    if (from < 0)
      continue;
    std::string pair = "(" + std::to_string(from) + ", " + std::to_string(target) + ")";
    if (static_cast<size_t>(from) >= buffers.size() || !offered.count({from, int32_t(target)})) {
      error = "in-place pair " + pair + " was not offered as a hint";
      return false;
    }
    if (buffers[from].lastStep != buffers[target].firstStep) {
      error = "in-place pair " + pair + ": the ranges do not meet at one step";
      return false;
    }
    if (assignment.offsets[from] != assignment.offsets[target]) {
      error = "in-place pair " + pair + " has different offsets";
      return false;
    }
    if (lent[from]++) {
      error = "buffer " + std::to_string(from) + " lends its bytes to two targets";
      return false;
    }
  }
  return true;
}

bool checkBounds(const std::vector<BufferRequest> &buffers, const std::vector<uint64_t> &size,
                 const Assignment &assignment, uint64_t alignment, std::string &error) {
  if (assignment.offsets.size() != buffers.size()) {
    error = std::to_string(assignment.offsets.size()) + " offsets for " +
            std::to_string(buffers.size()) + " buffers";
    return false;
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].firstStep > buffers[i].lastStep) {
      error = "buffer " + std::to_string(i) + " has an empty live range";
      return false;
    }
    uint64_t offset = assignment.offsets[i];
    if (alignment > 1 && offset % alignment != 0) {
      error = describe(buffers, size, assignment, i) + " is not aligned to " +
              std::to_string(alignment);
      return false;
    }
    if (offset > assignment.arenaBytes || size[i] > assignment.arenaBytes - offset) {
      error = describe(buffers, size, assignment, i) + " ends beyond the arena of " +
              std::to_string(assignment.arenaBytes) + " bytes";
      return false;
    }
  }
  return true;
}

} // namespace

bool verifyAssignment(const std::vector<BufferRequest> &buffers, const Assignment &assignment,
                      std::string &error, uint64_t alignment,
                      const std::vector<InPlaceHint> &hints) {
  std::vector<uint64_t> size(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    size[i] = alignTo(buffers[i].size, alignment);
  if (!checkBounds(buffers, size, assignment, alignment, error) ||
      !checkInPlacePairs(buffers, assignment, hints, error))
    return false;

  const std::vector<int32_t> &source = assignment.inPlaceSource;
  auto partners = [&](int32_t a, int32_t b) {
    return !source.empty() && (source[a] == b || source[b] == a);
  };
  std::vector<int32_t> byStart(buffers.size());
  std::iota(byStart.begin(), byStart.end(), 0);
  std::stable_sort(byStart.begin(), byStart.end(), [&](int32_t a, int32_t b) {
    return buffers[a].firstStep < buffers[b].firstStep;
  });

  std::map<uint64_t, std::vector<int32_t>> live; // offset -> buffers live there now
  using Ending = std::pair<int64_t, int32_t>;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> endings;
  for (int32_t id : byStart) {
    if (size[id] == 0)
      continue;
    const BufferRequest &buffer = buffers[id];
    while (!endings.empty() && endings.top().first < buffer.firstStep) {
      int32_t gone = endings.top().second;
      endings.pop();
      auto it = live.find(assignment.offsets[gone]);
      it->second.erase(std::find(it->second.begin(), it->second.end(), gone));
      if (it->second.empty())
        live.erase(it);
    }
    uint64_t begin = assignment.offsets[id], end = begin + size[id];
    auto conflict = [&](int32_t other) {
      error = describe(buffers, size, assignment, id) + " and " +
              describe(buffers, size, assignment, other) + " share bytes while both are live";
      return false;
    };
    auto next = live.lower_bound(begin);
    if (next != live.begin()) {
      auto below = std::prev(next);
      for (int32_t other : below->second)
        if (below->first + size[other] > begin)
          return conflict(other);
    }
    for (; next != live.end() && next->first < end; ++next)
      for (int32_t other : next->second)
        if (!(next->first == begin && partners(id, other)))
          return conflict(other);
    live[begin].push_back(id);
    endings.emplace(buffer.lastStep, id);
  }
  return true;
}

} // namespace memc::planner
