//===- Baselines.cpp - TFLite's and XLA's arena planners ------------------===//
#include "compiler/planner/Baselines.h"

#include "compiler/planner/BufferOrderings.h"
#include "compiler/planner/EventOrderAllocator.h"
#include "compiler/planner/GapPlacer.h"

namespace memc::planner {
namespace {

Assignment toAssignment(const PlanningProblem &problem, Placement placement,
                        std::string strategy) {
  Assignment assignment;
  assignment.offsets = std::move(placement.offsets);
  assignment.inPlaceSource = std::move(placement.inPlaceSource);
  assignment.arenaBytes = placement.arenaBytes;
  assignment.lowerBoundBytes = problem.lowerBound;
  assignment.strategy = std::move(strategy);
  return assignment;
}

} // namespace

Assignment planGreedyBySize(const std::vector<BufferRequest> &buffers, uint64_t alignment) {
  PlanningProblem problem = buildPlanningProblem(buffers, alignment);
  OverlapIndex index(problem);
  GapPlacer placer(problem, index);
  return toAssignment(problem,
                      placer.place(orderBySizeThenStart(problem), GapFit::First, false),
                      "tflite-greedy-by-size");
}

Assignment planHeapSimulatorBestFit(const std::vector<BufferRequest> &buffers,
                                    uint64_t alignment) {
  PlanningProblem problem = buildPlanningProblem(buffers, alignment);
  OverlapIndex index(problem);
  GapPlacer placer(problem, index);
  Assignment best = toAssignment(problem, allocateInScheduleOrder(problem),
                                 "xla-heap-simulator-best-fit");
  auto consider = [&](const std::vector<int32_t> &order, const char *name) {
    Placement placement = placer.place(order, GapFit::Best, false, best.arenaBytes - 1);
    if (!placement.abandoned)
      best = toAssignment(problem, std::move(placement), name);
  };
  if (best.arenaBytes > 0) {
    consider(orderBySizeThenDuration(problem), "xla-global-decreasing-size-spatial");
    consider(orderByDurationThenSize(problem), "xla-global-decreasing-size-temporal");
  }
  return best;
}

} // namespace memc::planner
