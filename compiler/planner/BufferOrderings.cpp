//===- BufferOrderings.cpp - buffer orders for the greedy placers ---------===//
#include "compiler/planner/BufferOrderings.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace memc::planner {
namespace {

/// Ids sorted by key(id) ascending, then by id.
template <typename Key>
std::vector<int32_t> sortedBy(const PlanningProblem &problem, Key &&key) {
  std::vector<int32_t> order(problem.numBuffers());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    auto keyA = key(a), keyB = key(b);
    return keyA < keyB || (!(keyB < keyA) && a < b);
  });
  return order;
}

/// For every point, the point of maximal live bytes in [point, point + 2^level).
class RangeArgMax {
public:
  explicit RangeArgMax(std::vector<uint64_t> values) : values(std::move(values)) {
    int32_t n = static_cast<int32_t>(this->values.size());
    table.emplace_back(n);
    std::iota(table[0].begin(), table[0].end(), 0);
    for (int32_t width = 2; width <= n; width *= 2) {
      const std::vector<int32_t> &below = table.back();
      std::vector<int32_t> level(n - width + 1);
      for (int32_t p = 0; p + width <= n; ++p)
        level[p] = better(below[p], below[p + width / 2]);
      table.push_back(std::move(level));
    }
  }

  /// The point of maximal value in [first, last]; the earliest among equals.
  int32_t query(int32_t first, int32_t last) const {
    int32_t level = 0;
    while ((2 << level) <= last - first + 1)
      ++level;
    return better(table[level][first], table[level][last - (1 << level) + 1]);
  }

  uint64_t value(int32_t point) const { return values[point]; }

private:
  int32_t better(int32_t a, int32_t b) const {
    return values[b] > values[a] || (values[b] == values[a] && b < a) ? b : a;
  }

  std::vector<uint64_t> values;
  std::vector<std::vector<int32_t>> table;
};

} // namespace

std::vector<int32_t> orderBySizeThenStart(const PlanningProblem &problem) {
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(~problem.size[id], problem.start[id]);
  });
}

std::vector<int32_t> orderBySizeThenDuration(const PlanningProblem &problem) {
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(~problem.size[id], -problem.duration[id]);
  });
}

std::vector<int32_t> orderByDurationThenSize(const PlanningProblem &problem) {
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(-problem.duration[id], ~problem.size[id]);
  });
}

std::vector<int32_t> orderByArea(const PlanningProblem &problem) {
  return sortedBy(problem, [&](int32_t id) {
    double area = static_cast<double>(problem.size[id]) * static_cast<double>(problem.duration[id]);
    return std::make_tuple(-area, ~problem.size[id]);
  });
}

std::vector<int32_t> orderByBreadth(const PlanningProblem &problem) {
  if (problem.numPoints == 0)
    return sortedBy(problem, [](int32_t) { return 0; });
  RangeArgMax breadth(liveBytesPerPoint(problem));
  std::vector<int32_t> widest(problem.numBuffers());
  for (int32_t id = 0; id < problem.numBuffers(); ++id)
    widest[id] = breadth.query(problem.start[id], problem.end[id]);
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(~breadth.value(widest[id]), widest[id], ~problem.size[id]);
  });
}

std::vector<int32_t> orderByConflictBytes(const PlanningProblem &problem,
                                          const OverlapIndex &index) {
  std::vector<uint64_t> conflict(problem.numBuffers());
  for (int32_t id = 0; id < problem.numBuffers(); ++id)
    conflict[id] = problem.size[id] + index.overlapBytes(id);
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(~conflict[id], ~problem.size[id]);
  });
}

std::vector<int32_t> orderByStart(const PlanningProblem &problem) {
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(problem.start[id], ~problem.size[id]);
  });
}

std::vector<int32_t> orderByEndDescending(const PlanningProblem &problem) {
  return sortedBy(problem, [&](int32_t id) {
    return std::make_tuple(-problem.end[id], ~problem.size[id]);
  });
}

} // namespace memc::planner
