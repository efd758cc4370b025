//===- ArenaPlanner.cpp - memc's static memory planner --------------------===//
#include "compiler/planner/ArenaPlanner.h"

#include "compiler/planner/BufferOrderings.h"
#include "compiler/planner/EventOrderAllocator.h"
#include "compiler/planner/GapPlacer.h"

#include <algorithm>
#include <functional>

namespace memc::planner {
namespace {

class PlanSearch {
public:
  PlanSearch(const PlanningProblem &problem, const PlanOptions &options)
      : problem(problem), index(problem), placer(problem, index), budget(options.effort),
        hints(!problem.partner.empty()) {
    for (int32_t id = 0; id < problem.numBuffers(); ++id)
      passCost += 1 + index.overlapCount(id);
  }

  void run() {
    considerScheduleOrder(GapFit::Best, "schedule-order-best-fit");
    considerScheduleOrder(GapFit::First, "schedule-order-first-fit");
    struct Ordering {
      const char *name;
      std::function<std::vector<int32_t>()> make;
    };
    const Ordering orderings[] = {
        {"size-duration", [&] { return orderBySizeThenDuration(problem); }},
        {"size-start", [&] { return orderBySizeThenStart(problem); }},
        {"duration-size", [&] { return orderByDurationThenSize(problem); }},
        {"breadth", [&] { return orderByBreadth(problem); }},
        {"conflict", [&] { return orderByConflictBytes(problem, index); }},
        {"area", [&] { return orderByArea(problem); }},
        {"start", [&] { return orderByStart(problem); }},
        {"end-descending", [&] { return orderByEndDescending(problem); }},
    };
    for (GapFit fit : {GapFit::Best, GapFit::First})
      for (const Ordering &ordering : orderings) {
        if (optimal() || !affordable())
          return;
        std::vector<int32_t> order = ordering.make();
        std::string name = std::string(ordering.name) +
                           (fit == GapFit::Best ? "/best-fit" : "/first-fit");
        considerOrder(order, fit, false, name);
        if (hints && affordable())
          considerOrder(order, fit, true, name + "/in-place");
      }
  }

  Assignment result() && {
    Assignment assignment;
    assignment.offsets = std::move(best.offsets);
    assignment.inPlaceSource = std::move(best.inPlaceSource);
    assignment.arenaBytes = best.arenaBytes;
    assignment.lowerBoundBytes = problem.lowerBound;
    assignment.strategy = "memc:" + bestStrategy;
    return assignment;
  }

private:
  bool optimal() const { return haveBest && best.arenaBytes <= problem.lowerBound; }
  bool affordable() const { return placer.visits() + passCost <= budget; }

  void considerScheduleOrder(GapFit fit, const char *name) {
    Placement placement = allocateInScheduleOrder(problem, fit);
    if (!haveBest || placement.arenaBytes < best.arenaBytes)
      accept(std::move(placement), name);
  }

  void considerOrder(const std::vector<int32_t> &order, GapFit fit, bool takeHints,
                     const std::string &name) {
    Placement placement = placer.place(order, fit, takeHints, best.arenaBytes - 1);
    if (!placement.abandoned)
      accept(std::move(placement), name);
  }

  void accept(Placement placement, std::string name) {
    best = std::move(placement);
    bestStrategy = std::move(name);
    haveBest = true;
  }

  const PlanningProblem &problem;
  OverlapIndex index;
  GapPlacer placer;
  uint64_t budget, passCost = 0;
  bool hints;
  bool haveBest = false;
  Placement best;
  std::string bestStrategy;
};

} // namespace

Assignment planArena(const std::vector<BufferRequest> &buffers, const PlanOptions &options) {
  PlanningProblem problem =
      buildPlanningProblem(buffers, options.alignment, options.inPlaceHints);
  PlanSearch search(problem, options);
  search.run();
  return std::move(search).result();
}

} // namespace memc::planner
