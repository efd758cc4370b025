//===- LiveRange.cpp - alignment and the live-bytes lower bound -----------===//
#include "compiler/planner/LiveRange.h"

#include "compiler/planner/PlanningProblem.h"

namespace memc::planner {

uint64_t alignTo(uint64_t bytes, uint64_t alignment) {
  if (alignment <= 1)
    return bytes;
  return (bytes + alignment - 1) / alignment * alignment;
}

uint64_t lowerBound(const std::vector<BufferRequest> &buffers, uint64_t alignment) {
  return buildPlanningProblem(buffers, alignment).lowerBound;
}

} // namespace memc::planner
