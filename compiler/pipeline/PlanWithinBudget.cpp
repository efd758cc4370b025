//===- PlanWithinBudget.cpp - a plan whose peak fits the VRAM budget ------===//
#include "compiler/pipeline/PlanWithinBudget.h"
#include "compiler/remat/RematHeuristic.h"
#include "compiler/remat/RematIR.h"
#include "compiler/remat/RematIlp.h"
#include "runtime/support/Bytes.h"

#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>

using namespace mlir;

namespace memc {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One candidate: the decision applied to a copy of the function, and its plan.
struct Attempt {
  OwningOpRef<func::FuncOp> function; // detached copy
  remat::RematDecision decision;
  plan::Plan plan;
  PlanSummary summary;
  remat::RematOutcome simulated;
  std::string strategy;
  uint64_t peak = 0;
  int64_t clones = 0;
};

FailureOr<Attempt> tryDecision(func::FuncOp function, const std::string &modelName,
                               const PlanOptions &planOptions,
                               const remat::ExtractedRematGraph &original,
                               const remat::RematDecision &decision, std::string strategy) {
  Attempt attempt;
  attempt.function = function.clone();
  // The copy's ops come in the same order, so the original's node numbering applies.
  remat::ExtractedRematGraph copy = remat::extractRematGraph(*attempt.function);
  if (copy.nodeOps.size() != original.nodeOps.size())
    return function.emitError("internal: the function's copy has another step count");
  attempt.clones = remat::applyRemat(copy, decision);
  attempt.decision = decision;
  attempt.simulated = remat::simulateRemat(original.graph, decision);
  FailureOr<plan::Plan> plan =
      buildPlan(*attempt.function, modelName, &attempt.summary, planOptions);
  if (failed(plan))
    return failure();
  attempt.plan = std::move(*plan);
  attempt.peak = planPeakBytes(attempt.plan);
  attempt.strategy = std::move(strategy);
  return attempt;
}

} // namespace

uint64_t planPeakBytes(const plan::Plan &plan) {
  return plan.persistent_bytes() + plan.arena_bytes() + plan.constant_data().size();
}

FailureOr<BudgetedPlan> planWithinBudget(func::FuncOp function, const std::string &modelName,
                                         const BudgetOptions &options) {
  BudgetedPlan result;
  FailureOr<plan::Plan> baseline =
      buildPlan(function, modelName, &result.baselineSummary, options.plan);
  if (failed(baseline))
    return failure();
  result.baseline = std::move(*baseline);
  remat::ExtractedRematGraph extracted =
      remat::extractRematGraph(function, result.baselineSummary.workspaceOf);
  result.stepFlops = remat::stepFlops(extracted.graph);
  uint64_t baselinePeak = planPeakBytes(result.baseline);
  auto keepBaseline = [&]() {
    result.plan = result.baseline;
    result.summary = result.baselineSummary;
    result.fits = !options.budgetBytes || baselinePeak <= *options.budgetBytes;
    return result;
  };
  bool fitsAsIs = !options.budgetBytes || baselinePeak <= *options.budgetBytes;
  if (options.mode == RematMode::None || (options.mode == RematMode::Auto && fitsAsIs))
    return keepBaseline();

  auto start = Clock::now();
  std::vector<Attempt> attempts;
  auto attempt = [&](const remat::RematDecision &decision, std::string strategy) -> LogicalResult {
    FailureOr<Attempt> tried =
        tryDecision(function, modelName, options.plan, extracted, decision, strategy);
    if (failed(tried))
      return failure();
    attempts.push_back(std::move(*tried));
    return success();
  };

  if (options.mode == RematMode::Full) {
    if (failed(attempt(remat::boundaryRemat(extracted.graph, 1), "full")))
      return failure();
  } else {
    // Auto: the least recomputation under the budget. The simulator follows the function's
    // order; the planner's scheduler often finds a lower peak (segments of clones interleaved
    // with the backward), while fragmentation can add a little. So each next limit is the last
    // attempt's simulated peak moved by what its real plan missed (until one fits) or by half of
    // what it had to spare (to buy back recomputation); the cheapest plan that fits wins.
    uint64_t budget = *options.budgetBytes;
    bool useIlp = options.solver == RematSolver::Ilp, notedKept = false;
    auto decide = [&](uint64_t limit, std::string &strategy) {
      strategy = "auto (heuristic)";
      remat::RematDecision greedy = remat::greedyRemat(extracted.graph, limit);
      if (!useIlp)
        return greedy;
      // --ilp-time-limit is the total over every round of the refinement: each solve gets
      // what the earlier ones left.
      double left = options.ilpTimeLimitSeconds - secondsSince(start);
      if (left <= 0) {
        result.notes.push_back("the ILP solver's time limit (" +
                               std::to_string(options.ilpTimeLimitSeconds) +
                               " s) is spent; the heuristic decides the remaining rounds");
        useIlp = false;
        return greedy;
      }
      // Seeded with the heuristic's decision, the solver returns nothing worse than it.
      remat::IlpOptions ilpOptions;
      ilpOptions.timeLimitSeconds = left;
      ilpOptions.start = greedy;
      ilpOptions.progress = options.progress;
      double solveStart = secondsSince(start);
      remat::IlpResult ilp = remat::solveRematIlp(extracted.graph, limit, ilpOptions);
      if (ilp.solved) {
        // The solver keeps its start where it found nothing cheaper: the heuristic decided,
        // which the report would otherwise show without saying why.
        if (ilp.decision != greedy)
          strategy = ilp.provedOptimal ? "auto (ilp, optimal)" : "auto (ilp)";
        else if (!notedKept) // once: the refinement solves a few limits
          result.notes.push_back(
              "the ILP solver " +
              std::string(ilp.provedOptimal ? "proved the heuristic's decision optimal"
                                            : "found nothing cheaper than the heuristic's "
                                              "decision (" + ilp.status + ")") +
              " in " + llvm::formatv("{0:f1}", secondsSince(start) - solveStart).str() +
              " s for a limit of " + runtime::formatBytes(limit) +
              "; the plan is the heuristic's");
        notedKept |= ilp.decision == greedy;
        return ilp.decision;
      }
      // The heuristic takes over for this and every later round.
      result.notes.push_back("the ILP solver gave no decision (" + ilp.status +
                             "); the heuristic decides");
      useIlp = false;
      return greedy;
    };
    auto fits = [&](const Attempt &a) { return a.peak <= budget; };
    // Rounds from the attempt `from`: true when a plan fits.
    auto refine = [&](size_t from, int rounds) -> FailureOr<bool> {
      bool fitted = fits(attempts[from]);
      for (int round = 0; round < rounds; ++round) {
        const Attempt &last = attempts[from];
        int64_t spare = static_cast<int64_t>(budget) - static_cast<int64_t>(last.peak);
        if (spare >= 0 && spare * 100 <= static_cast<int64_t>(budget))
          break; // within 1% of the budget: as good as it gets
        if (spare < 0 && fitted)
          break; // the cheaper try missed: keep what fitted
        // A little more than a miss, so that rounds do not creep up on the budget.
        int64_t limit = static_cast<int64_t>(last.simulated.peakBytes) +
                        (spare >= 0 ? spare / 2 : spare - static_cast<int64_t>(budget / 1000));
        if (limit <= 0)
          break;
        std::string strategy;
        remat::RematDecision decision = decide(limit, strategy);
        if (decision == attempts[from].decision)
          break; // the limit moved too little to change anything
        if (failed(attempt(decision, strategy)))
          return failure();
        from = attempts.size() - 1;
        fitted |= fits(attempts[from]);
      }
      return fitted;
    };
    std::string strategy;
    remat::RematDecision first = decide(budget, strategy);
    if (failed(attempt(first, strategy)))
      return failure();
    FailureOr<bool> met = refine(0, 5);
    if (failed(met))
      return failure();
    if (!*met) {
      // Segment checkpointing reaches peaks the op-by-op choices may not; refining from Chen's
      // plan buys back what the budget does not need.
      if (failed(attempt(remat::chenSqrtRemat(extracted.graph), "chen-sqrt")) ||
          failed(attempt(remat::boundaryRemat(extracted.graph, 1), "full")))
        return failure();
      size_t chen = attempts.size() - 2, full = attempts.size() - 1;
      size_t from = fits(attempts[chen]) ? chen : full;
      if (fits(attempts[from]) && failed(refine(from, 3)))
        return failure();
      if (!llvm::any_of(attempts, fits) &&
          failed(attempt(remat::greedyRemat(extracted.graph, 0), "auto (heuristic, lowest)")))
        return failure();
    }
  }
  result.solveSeconds = secondsSince(start);

  // The cheapest attempt within the budget; without one, the lowest peak.
  Attempt *chosen = nullptr;
  for (Attempt &candidate : attempts) {
    bool fits = !options.budgetBytes || candidate.peak <= *options.budgetBytes;
    if (!chosen) {
      chosen = &candidate;
      continue;
    }
    bool chosenFits = !options.budgetBytes || chosen->peak <= *options.budgetBytes;
    if (fits &&
        (!chosenFits || candidate.simulated.recomputeCost < chosen->simulated.recomputeCost))
      chosen = &candidate;
    else if (!fits && !chosenFits && candidate.peak < chosen->peak)
      chosen = &candidate;
  }
  if (!chosen)
    return keepBaseline();
  if (options.mode == RematMode::Auto && chosen->peak >= baselinePeak)
    return keepBaseline(); // recomputation did not help
  result.fits = !options.budgetBytes || chosen->peak <= *options.budgetBytes;
  function.getBody().takeBody(chosen->function->getBody());
  result.plan = std::move(chosen->plan);
  result.summary = std::move(chosen->summary);
  result.strategy = chosen->strategy;
  result.clones = chosen->clones;
  result.recomputeFlops = chosen->simulated.recomputeFlops;
  result.recomputeCost = chosen->simulated.recomputeCost;
  return result;
}

} // namespace memc
