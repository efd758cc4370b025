//===- LadderReport.h - the memory ladder as a table, JSON and SVG -*- C++ -*-===//
//
// What `memc --explain-memory` prints and writes: one row per rung of the ladder
// (compiler/pipeline/MemoryLadder.h), each from the MemoryReport of a real compile with the
// row's flags, so a row and a compile with its flags agree to the byte. Also the table of
// `--batch-sweep` (peak by micro-batch).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_REPORT_LADDERREPORT_H
#define MEMC_COMPILER_REPORT_LADDERREPORT_H

#include "compiler/report/MemoryReport.h"

#include <optional>
#include <string>
#include <vector>

namespace memc {

struct LadderRow {
  std::string name;
  /// The command line, less the model and the program, that a compile reproduces it with.
  std::vector<std::string> flags;
  /// Empty when the flags did not compile (`error` says why).
  std::optional<MemoryReport> memory;
  std::string error;
  /// --max-seq: the longest --seq-len whose plan at these flags fits (0: not even 1), the
  /// search's resolution (that length plus maxSequenceStep does not fit), and its peak.
  std::optional<int64_t> maxSequence;
  int64_t maxSequenceStep = 1;
  /// The first length memc refused during the search, with its error ("" when none).
  std::string maxSequenceLimit;
  uint64_t maxSequencePeakBytes = 0;
  bool fits() const {
    return memory && (!memory->budgetBytes || memory->peakBytes <= *memory->budgetBytes);
  }
};

struct MemoryLadder {
  std::string model;
  std::optional<uint64_t> budgetBytes;
  int64_t worldSize = 1;
  std::vector<LadderRow> rows;
  /// --batch-sweep: (micro-batch, its row at the flags given).
  std::vector<std::pair<int64_t, LadderRow>> batchSweep;
};

/// The table: a line per row (peak, whether it fits, the breakdown's categories, recompute),
/// then each row's flags.
void printMemoryLadder(const MemoryLadder &ladder, llvm::raw_ostream &os);

/// {"model", "budget_bytes", "world_size", "ladder": [{"name", "flags", "peak_bytes", "fits",
/// "breakdown", "host_breakdown", "most_live_bytes", "model_state_bytes", "recompute_flops_pct",
/// "max_seq", "error"}], "batch_sweep":
/// [{"micro_batch", ...}]}.
void writeMemoryLadderJson(const MemoryLadder &ladder, llvm::raw_ostream &os);

/// A stacked bar per row by category, the budget as a line. Plain SVG, no scripts.
void writeMemoryLadderSvg(const MemoryLadder &ladder, llvm::raw_ostream &os);

} // namespace memc

#endif // MEMC_COMPILER_REPORT_LADDERREPORT_H
