//===- PlanProbe.h - plan a variant of the command line, quietly -*- C++ -*-===//
//
// What the planning flags are made of: compile a command line as memc would, through the same
// flag parsing and pipeline, but plan only the training step, write nothing and print nothing
// (memc's messages are kept, the first error returned). The memory ladder, --micro-batch auto,
// --fit auto and the budget advice each plan the variants they need through it, so what they
// print about a set of flags is what a compile with those flags gives.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_PLANPROBE_H
#define MEMC_TOOLS_MEMC_PLANPROBE_H

#include "compiler/report/MemoryReport.h"

#include <optional>
#include <string>
#include <vector>

struct PlanProbe {
  /// Empty when the arguments did not compile.
  std::optional<memc::MemoryReport> memory;
  /// The first error memc printed ("" when it compiled).
  std::string error;
  bool fits() const {
    return memory && (!memory->budgetBytes || memory->peakBytes <= *memory->budgetBytes);
  }
};

/// Compiles `arguments` (memc's command line without the program name) and plans its training
/// step. Leaves the command-line state of the last parse behind: the caller parses again.
PlanProbe probePlan(const std::vector<std::string> &arguments);

/// `arguments` with `flag` set to `value`: any earlier occurrence (and its value) removed.
std::vector<std::string> withFlag(std::vector<std::string> arguments, const std::string &flag,
                                  const std::string &value);

#endif // MEMC_TOOLS_MEMC_PLANPROBE_H
