//===- ChooseFlags.h - flags memc chooses by planning -------------*- C++ -*-===//
//
// --micro-batch auto, --fit auto and the advice of a budget that cannot be met: each plans
// variants of the command line (PlanProbe.h) and answers with flags whose plan it has seen,
// never by running the program. Every function takes the command line without the program
// name and prints its notes and errors as memc does.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_CHOOSEFLAGS_H
#define MEMC_TOOLS_MEMC_CHOOSEFLAGS_H

#include "tools/memc/Flags.h"

#include <optional>
#include <string>
#include <vector>

/// --micro-batch auto [--global-batch G]: the arguments with --micro-batch B, the largest that
/// fits the budget (B+1 planned and does not), and --grad-accum G / (B x world size); with G,
/// B is the largest that fits and divides G / world size. Empty after printing why not.
std::optional<std::vector<std::string>> chooseMicroBatch(const DriverOptions &driver,
                                                         const std::vector<std::string> &arguments);

/// --fit auto: the arguments with the combination of 16-bit precision, 8-bit states, ZeRO stage
/// and optimizer offload (remat at auto deciding the rest) of least estimated slowdown whose
/// plan fits; flags the user set stay as set. Empty after printing why nothing fits.
std::optional<std::vector<std::string>> chooseFit(const DriverOptions &driver,
                                                  const std::vector<std::string> &arguments);

/// The third line of the error for a training budget memc cannot meet: the cheapest planned
/// combination that fits, or what the lowest reaches and what else was planned (a smaller
/// micro-batch where the model's batch is symbolic, QLoRA).
std::string plannedBudgetAdvice(const DriverOptions &driver,
                                const std::vector<std::string> &arguments, bool symbolicBatch);

#endif // MEMC_TOOLS_MEMC_CHOOSEFLAGS_H
