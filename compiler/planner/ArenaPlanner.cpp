//===- ArenaPlanner.cpp - memc's static memory planner --------------------===//
#include "compiler/planner/ArenaPlanner.h"

#include "compiler/planner/BufferOrderings.h"
#include "compiler/planner/EventOrderAllocator.h"
#include "compiler/planner/GapPlacer.h"

#include <algorithm>
#include <functional>

namespace memc::planner {
namespace {

/// How many of the best portfolio placements the search starts from, and how many failed
/// attempts in a row end the search from one start. Measured on random and training-like sets:
/// more starts rarely help; patience beyond a few hundred attempts buys little.
constexpr size_t kSearchedStarts = 3;
constexpr int32_t kPatience = 500;

class PlanSearch {
public:
  PlanSearch(const PlanningProblem &problem, const PlanOptions &options)
      : problem(problem), index(problem), placer(problem, index), budget(options.effort),
        hints(!problem.partner.empty()) {}

  void run() {
    considerScheduleOrder(allocateInScheduleOrder(problem), "schedule-order-best-fit");
    considerScheduleOrder(allocateInReverseScheduleOrder(problem),
                          "reverse-schedule-order-best-fit");
    runPortfolio();
    // The best few distinct starting points, best first, each searched until it stagnates.
    std::stable_sort(starts.begin(), starts.end(),
                     [](const Start &a, const Start &b) { return a.arena < b.arena; });
    for (size_t i = 0; i < starts.size() && i < kSearchedStarts; ++i)
      improve(starts[i]);
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
  /// A gap placement worth searching from.
  struct Start {
    std::vector<int32_t> order;
    GapFit fit;
    bool takeHints;
    std::string name;
    uint64_t arena;
  };

  /// Greedy placements in several orders. The first three are the configurations of the
  /// baselines, so that memc's plan is never worse than theirs when the budget covers them.
  void runPortfolio() {
    struct Pass {
      const char *name;
      std::function<std::vector<int32_t>()> order;
      GapFit fit;
    };
    auto bySizeThenDuration = [&] { return orderBySizeThenDuration(problem); };
    auto byDurationThenSize = [&] { return orderByDurationThenSize(problem); };
    auto bySizeThenStart = [&] { return orderBySizeThenStart(problem); };
    auto byBreadth = [&] { return orderByBreadth(problem); };
    auto byConflict = [&] { return orderByConflictBytes(problem, index); };
    auto byArea = [&] { return orderByArea(problem); };
    auto byStart = [&] { return orderByStart(problem); };
    auto byEnd = [&] { return orderByEndDescending(problem); };
    const Pass passes[] = {
        {"size-duration/best-fit", bySizeThenDuration, GapFit::Best},
        {"duration-size/best-fit", byDurationThenSize, GapFit::Best},
        {"size-start/first-fit", bySizeThenStart, GapFit::First},
        {"breadth/best-fit", byBreadth, GapFit::Best},
        {"breadth/first-fit", byBreadth, GapFit::First},
        {"conflict/best-fit", byConflict, GapFit::Best},
        {"conflict/first-fit", byConflict, GapFit::First},
        {"area/best-fit", byArea, GapFit::Best},
        {"area/first-fit", byArea, GapFit::First},
        {"size-start/best-fit", bySizeThenStart, GapFit::Best},
        {"size-duration/first-fit", bySizeThenDuration, GapFit::First},
        {"duration-size/first-fit", byDurationThenSize, GapFit::First},
        {"start/best-fit", byStart, GapFit::Best},
        {"start/first-fit", byStart, GapFit::First},
        {"end-descending/best-fit", byEnd, GapFit::Best},
        {"end-descending/first-fit", byEnd, GapFit::First},
    };
    for (const Pass &pass : passes) {
      if (optimal() || !affordable())
        return;
      std::vector<int32_t> order = pass.order();
      if (hints)
        considerOrder(order, pass.fit, true, std::string(pass.name) + "/in-place");
      if (!optimal() && affordable())
        considerOrder(order, pass.fit, false, pass.name);
    }
  }

  /// Places in the start's order asking for a smaller arena than the best; the buffer at which
  /// that fails is moved to the front of the order, so that next time it gets room before the
  /// buffers that crowded it out (squeaky-wheel optimisation). Stops after `kPatience` failures
  /// in a row.
  void improve(Start start) {
    std::vector<int32_t> &order = start.order;
    for (int32_t failures = 0; failures < kPatience && !optimal() && affordable();) {
      Placement placement = placer.place(order, start.fit, start.takeHints, best.arenaBytes - 1);
      if (!placement.abandoned) {
        accept(std::move(placement), start.name + "/improved");
        failures = 0;
        continue;
      }
      ++failures;
      auto culprit = std::find(order.begin(), order.end(), placement.stoppedAt);
      std::rotate(order.begin(), culprit, culprit + 1);
    }
  }

  bool optimal() const { return haveBest && best.arenaBytes <= problem.inPlaceLowerBound; }
  bool affordable() const { return placer.work() + placer.workPerPass() <= budget; }

  void considerScheduleOrder(Placement placement, const char *name) {
    if (!haveBest || placement.arenaBytes < best.arenaBytes)
      accept(std::move(placement), name);
  }

  /// Places in `order`; the result becomes a start for the search if it is within 2% of the
  /// best, and the best if it beats it.
  void considerOrder(const std::vector<int32_t> &order, GapFit fit, bool takeHints,
                     const std::string &name) {
    uint64_t worthSearching = best.arenaBytes + best.arenaBytes / 50;
    Placement placement = placer.place(order, fit, takeHints, worthSearching);
    if (placement.abandoned)
      return;
    starts.push_back({order, fit, takeHints, name, placement.arenaBytes});
    if (placement.arenaBytes < best.arenaBytes)
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
  uint64_t budget;
  bool hints;
  bool haveBest = false;
  Placement best;
  std::string bestStrategy;
  std::vector<Start> starts;
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
