//===- RematIlp.h - optimal rematerialization as a mixed-integer program -*- C++ -*-===//
//
// The optimality reference for rematerialization (after Checkmate, Jain et al. 2020, and
// MOCCASIN, Bartan et al. 2023, restricted to memc's fixed clone rule): choose the forward
// nodes to recompute so that the recompute cost is least while the peak simulateRemat reports
// stays within a limit. Solved with COIN-OR CBC; every answer is checked by the simulator.
//
// The model is exact at every original step of the schedule and conservative inside a group
// of clones inserted before one backward step (it charges the group with everything live
// before it plus all the group's clones at once), so its optimum may cost more than the true
// optimum when recomputing chains, never less memory than the simulator says.
// modelPeakBytes states that charge for one decision.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REMAT_REMATILP_H
#define MEMC_COMPILER_REMAT_REMATILP_H

#include "compiler/remat/RematGraph.h"

#include <functional>
#include <string>

namespace memc::remat {

struct IlpOptions {
  /// Wall-clock budget for building and solving all rounds.
  double timeLimitSeconds = 20;
  /// Branch-and-bound nodes CBC may explore per round (0: no limit). A limit that is reached
  /// first makes the answer the same however fast the machine is (tests).
  int64_t maxNodes = 0;
  /// A decision to start from (CBC's MIP start, e.g. the heuristic's): CBC completes the
  /// continuous variables and, if the start is feasible in the model, never returns worse. A
  /// start that meets the limit is also the answer wherever the solver finds nothing cheaper
  /// (time or nodes run out, the graph is too large), so a start always gets at least itself.
  RematDecision start;
  /// Where a long solve says how it goes: every `progressSeconds`, CBC's best decision's cost
  /// beside its bound and the nodes explored. Nothing when unset.
  std::function<void(const std::string &)> progress;
  double progressSeconds = 5;
};

struct IlpResult {
  /// A decision meeting the limit was found (and checked by simulateRemat).
  bool solved = false;
  /// CBC proved the decision optimal for its model.
  bool provedOptimal = false;
  RematDecision decision;
  double seconds = 0;
  /// Why it is not solved, or what happened, for the user.
  std::string status;
};

/// Minimises the recompute cost subject to simulateRemat(graph, decision).peakBytes <=
/// peakLimitBytes.
IlpResult solveRematIlp(const RematGraph &graph, uint64_t peakLimitBytes,
                        const IlpOptions &options = {});

/// The peak the ILP's model charges `decision`: simulateRemat's live bytes at original steps;
/// at each group of clones before a backward step, fixedBytes plus the bytes live across the
/// step before the group plus all the group's clone outputs. Never below simulateRemat's peak.
uint64_t modelPeakBytes(const RematGraph &graph, const RematDecision &decision);

} // namespace memc::remat

#endif // MEMC_COMPILER_REMAT_REMATILP_H
