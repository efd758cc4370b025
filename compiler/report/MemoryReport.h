//===- MemoryReport.h - where every byte of the peak goes --------*- C++ -*-===//
//
// `memc --report`, `--report-json FILE` and the infeasible-budget error read one MemoryReport,
// built from the plans themselves (what the runtime will allocate), never from estimates: the
// bytes live at every step by category (plan::Category), the step where the peak occurs and the
// largest tensors live there (named after their ONNX nodes), the lower bound and the planner's
// ratio, and the recomputation the budget cost.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REPORT_MEMORYREPORT_H
#define MEMC_COMPILER_REPORT_MEMORYREPORT_H

#include "compiler/pipeline/PlanWithinBudget.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/Bytes.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>

namespace memc {

/// Reports print sizes as the runtime does ("1.23 GiB"): one formatter for both.
using runtime::formatBytes;

/// Indexed by plan::Category (PlanVocabulary.h's kCategories names them).
using CategoryBytes = std::array<uint64_t, plan::kCategories.size()>;

/// Bytes of all categories together.
uint64_t totalBytes(const CategoryBytes &bytes);

/// Bytes live at every step of a plan, persistent state and constants included.
struct MemoryTimeline {
  std::vector<CategoryBytes> steps;
  uint64_t arenaBytes = 0;
};
MemoryTimeline memoryTimeline(const plan::Plan &plan);

struct MemoryReport {
  uint64_t peakBytes = 0, lowerBoundBytes = 0, baselinePeakBytes = 0;
  std::optional<uint64_t> budgetBytes;
  /// At the peak step; `unusedArenaBytes` is the arena not live there (fragmentation), so the
  /// breakdown and it sum to peakBytes.
  CategoryBytes breakdown{};
  /// Each category's most bytes live at any one step: for activations, what the step saves for
  /// the backward at its high-water mark, which the peak step misses when the peak comes later
  /// (an optimizer update, with the activations freed).
  CategoryBytes mostLive{};
  uint64_t unusedArenaBytes = 0;
  /// --offload-optimizer and --offload-activations: what lives in host memory, by category (not
  /// in the peak).
  CategoryBytes host{};
  /// The planned step's FLOPs by phase (Plan.Step.phase: forward, backward, optimizer,
  /// recompute), from the cost model.
  std::array<double, plan::Phase_ARRAYSIZE> phaseFlops{};
  int64_t peakStep = 0;
  std::string peakKernel, peakLocation;
  struct Tensor {
    std::string name;
    int category = 0;
    uint64_t bytes = 0;
    std::vector<int64_t> shape;
  };
  /// The largest arena tensors live at the peak step, largest first.
  std::vector<Tensor> largest;
  double plannerRatio = 1;
  std::string strategy;
  int64_t clones = 0;
  double recomputeFlops = 0, stepFlops = 0, solveSeconds = 0;
  double recomputeFlopsPercent() const {
    return stepFlops > 0 ? 100.0 * recomputeFlops / stepFlops : 0.0;
  }
  MemoryTimeline before, after;
  /// Attention fusion's counts and reasons (nothing with --fuse-attention off).
  std::optional<AttentionFusionSummary> attention;
  /// Loss fusion's outcome (nothing with --fuse-loss off, mse or inference).
  std::optional<LossFusionSummary> loss;
  /// Data parallel: the ranks and the ZeRO stage the plan is for (every number above is one
  /// rank's).
  int64_t worldSize = 1, zeroStage = 0;
  /// The model state one rank keeps across steps, by binding kind, and the trained and frozen
  /// parameters' elements, for ZeRO's bytes per parameter.
  struct ModelState {
    uint64_t parameters = 0, optimizerState = 0, gradientAccumulators = 0, weightCopies = 0;
    /// --quantize-base nf4: the packed weights and their scales.
    uint64_t quantizedBase = 0;
    uint64_t total() const {
      return parameters + optimizerState + gradientAccumulators + weightCopies + quantizedBase;
    }
  } modelState;
  int64_t parameterCount = 0;
  /// The weights the quantized base holds (two per packed byte).
  int64_t quantizedParameterCount = 0;
};

MemoryReport buildMemoryReport(const BudgetedPlan &planned, std::optional<uint64_t> budget);

/// The human-readable report (--report).
void printMemoryReport(const MemoryReport &report, llvm::raw_ostream &os);

/// The peak's bytes by category (and "unused_arena"), each category's most bytes at any step,
/// and the host's (offloaded), as --report-json and the ladder's rows write them.
llvm::json::Object peakBreakdownJson(const MemoryReport &report);
llvm::json::Object mostLiveJson(const MemoryReport &report);
llvm::json::Object hostBreakdownJson(const MemoryReport &report);

/// The JSON object of --report-json.
void writeMemoryReportJson(const MemoryReport &report, llvm::raw_ostream &os);

} // namespace memc

#endif // MEMC_COMPILER_REPORT_MEMORYREPORT_H
