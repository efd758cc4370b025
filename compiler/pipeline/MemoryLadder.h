//===- MemoryLadder.h - the techniques of the guides, one rung at a time -*- C++ -*-===//
//
// `memc --explain-memory` answers the guides' exercise ("apply the tricks one at a time and
// record peak VRAM after each") by planning, not by running: one rung per technique, added in
// the guides' order, each rung a set of memc flags that a real compile plans. This file is the
// ladder as data (names and flags); tools/memc compiles each rung and the report prints it.
//
//   fp32 baseline -> 16-bit (bf16, or fp16 where asked) -> + checkpointing (remat full, and
//   auto at the budget) -> + flash attention and the fused LM-head loss -> + 8-bit optimizer
//   states -> + ZeRO-1/2/3 (N ranks) -> + optimizer offload -> + QLoRA (r 16 on all linear
//   layers, NF4, double quantization)
//
// Rungs are cumulative: each holds every flag the ladder decides, so a row is reproduced by the
// user's other flags plus the rung's.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PIPELINE_MEMORYLADDER_H
#define MEMC_COMPILER_PIPELINE_MEMORYLADDER_H

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace memc {

/// What the ladder keeps of the user's command line.
struct LadderSetting {
  /// --optimizer as given: adamw and adamw8bit climb from adamw to adamw8bit; others keep
  /// theirs and skip the 8-bit rung.
  std::string optimizer = "adamw";
  /// --precision fp16 was asked: the 16-bit rung is fp16 (with loss scaling), else bf16.
  bool fp16 = false;
  /// A --vram-budget: checkpointing gets a rung at --remat auto, planned to the budget.
  bool budget = false;
  /// --world-size: the ZeRO rungs when above 1.
  int64_t worldSize = 1;
};

struct LadderRung {
  std::string name;
  /// Every flag the ladder decides, as command-line arguments ("--precision", "bf16", ...).
  std::vector<std::string> flags;
  /// The user's flags this rung cannot take (--loss-scale in fp32, --bucket-cap-mb from
  /// ZeRO-2, --freeze with QLoRA, which trains only adapters).
  std::set<std::string> drops;
};

/// The ladder for `setting`, cheapest technique first.
std::vector<LadderRung> memoryLadder(const LadderSetting &setting);

/// The flags (names without dashes) whose values the rungs decide: dropped from the user's
/// command line before a rung's flags are added.
const std::set<std::string> &ladderFlagNames();

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_MEMORYLADDER_H
