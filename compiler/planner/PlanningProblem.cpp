//===- PlanningProblem.cpp - normalising planner input --------------------===//
#include "compiler/planner/PlanningProblem.h"

#include <algorithm>

namespace memc::planner {

PlanningProblem buildPlanningProblem(const std::vector<BufferRequest> &buffers,
                                     uint64_t alignment, const std::vector<InPlaceHint> &hints) {
  PlanningProblem problem;
  size_t n = buffers.size();
  std::vector<int64_t> steps;
  steps.reserve(2 * n);
  for (const BufferRequest &buffer : buffers) {
    steps.push_back(buffer.firstStep);
    steps.push_back(buffer.lastStep);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto rank = [&](int64_t step) {
    return static_cast<int32_t>(std::lower_bound(steps.begin(), steps.end(), step) - steps.begin());
  };

  problem.numPoints = static_cast<int32_t>(steps.size());
  problem.size.resize(n);
  problem.start.resize(n);
  problem.end.resize(n);
  problem.duration.resize(n);
  for (size_t i = 0; i < n; ++i) {
    problem.size[i] = alignTo(buffers[i].size, alignment);
    problem.start[i] = rank(buffers[i].firstStep);
    problem.end[i] = rank(buffers[i].lastStep);
    problem.duration[i] = buffers[i].lastStep - buffers[i].firstStep + 1;
  }
  std::vector<uint64_t> live = liveBytesPerPoint(problem);
  problem.lowerBound = live.empty() ? 0 : *std::max_element(live.begin(), live.end());

  auto usable = [&](const InPlaceHint &hint) {
    auto valid = [&](int32_t id) { return id >= 0 && static_cast<size_t>(id) < n; };
    return valid(hint.source) && valid(hint.target) && hint.source != hint.target &&
           buffers[hint.source].lastStep == buffers[hint.target].firstStep &&
           problem.size[hint.source] > 0 && problem.size[hint.target] > 0;
  };
  problem.hintBegin.assign(n + 1, 0);
  for (const InPlaceHint &hint : hints)
    if (usable(hint)) {
      ++problem.hintBegin[hint.source + 1];
      ++problem.hintBegin[hint.target + 1];
    }
  for (size_t i = 0; i < n; ++i)
    problem.hintBegin[i + 1] += problem.hintBegin[i];
  problem.partner.resize(problem.hintBegin[n]);
  problem.partnerIsSource.resize(problem.hintBegin[n]);
  std::vector<int32_t> fill(problem.hintBegin.begin(), problem.hintBegin.end() - 1);
  std::vector<uint64_t> shareable(problem.numPoints, 0);
  for (const InPlaceHint &hint : hints)
    if (usable(hint)) {
      problem.partner[fill[hint.source]] = hint.target;
      problem.partnerIsSource[fill[hint.source]++] = 0;
      problem.partner[fill[hint.target]] = hint.source;
      problem.partnerIsSource[fill[hint.target]++] = 1;
      shareable[problem.start[hint.target]] +=
          std::min(problem.size[hint.source], problem.size[hint.target]);
    }

  problem.inPlaceLowerBound = 0;
  for (int32_t p = 0; p < problem.numPoints; ++p)
    problem.inPlaceLowerBound =
        std::max(problem.inPlaceLowerBound, live[p] - std::min(live[p], shareable[p]));
  for (uint64_t size : problem.size)
    problem.inPlaceLowerBound = std::max(problem.inPlaceLowerBound, size);
  return problem;
}

std::vector<uint64_t> liveBytesPerPoint(const PlanningProblem &problem) {
  std::vector<int64_t> delta(problem.numPoints + 1, 0);
  for (int32_t i = 0; i < problem.numBuffers(); ++i) {
    delta[problem.start[i]] += static_cast<int64_t>(problem.size[i]);
    delta[problem.end[i] + 1] -= static_cast<int64_t>(problem.size[i]);
  }
  std::vector<uint64_t> live(problem.numPoints);
  int64_t sum = 0;
  for (int32_t p = 0; p < problem.numPoints; ++p)
    live[p] = static_cast<uint64_t>(sum += delta[p]);
  return live;
}

} // namespace memc::planner
