//===- ExplainMemory.h - the memory ladder of a command line -----*- C++ -*-===//
//
// --explain-memory: the user's command line without the flags the ladder decides, planned once
// per rung (compiler/pipeline/MemoryLadder.h) and, with --batch-sweep, once per micro-batch at
// the flags given. Each row is a real compile's plan (PlanProbe.h) and carries its flags.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_EXPLAINMEMORY_H
#define MEMC_TOOLS_MEMC_EXPLAINMEMORY_H

#include "tools/memc/Flags.h"

#include "compiler/report/LadderReport.h"

memc::MemoryLadder planMemoryLadder(const DriverOptions &driver,
                                    const std::vector<std::string> &arguments);

#endif // MEMC_TOOLS_MEMC_EXPLAINMEMORY_H
