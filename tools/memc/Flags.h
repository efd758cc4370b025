//===- Flags.h - memc's command line ----------------------------*- C++ -*-===//
//
// Every flag of memc, declared in Flags.cpp in one table (name, help, default and, for numbers,
// the values it accepts), checked together and mapped to memc::PipelineOptions plus what the
// driver does with the result. A new flag is a declaration there and a line in the mapping.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_FLAGS_H
#define MEMC_TOOLS_MEMC_FLAGS_H

#include "compiler/pipeline/Pipeline.h"

#include <set>
#include <string>
#include <vector>

/// What one memc invocation asks for: the pipeline's options, and the files and reports the
/// driver writes from what it returns.
struct DriverOptions {
  std::string modelPath;
  /// "-" for stdout.
  std::string outputPath;
  memc::PipelineOptions pipeline;
  /// --report, --report-json FILE, --report-svg FILE.
  bool report = false;
  std::string reportJson, reportSvg;
  /// --explain-memory [--batch-sweep B,...] [--max-seq]: plan the ladder's rungs, write
  /// nothing.
  bool explainMemory = false;
  std::vector<int64_t> batchSweep;
  bool maxSequence = false;
  /// --micro-batch auto [--global-batch G], --fit auto: flags memc chooses by planning before
  /// it compiles the program.
  bool microBatchAuto = false;
  int64_t globalBatch = 0;
  bool fitAuto = false;
  /// The flags given on the command line, by name (without dashes).
  std::set<std::string> userFlags;
};

/// Parses and checks the command line into `driver`; false after printing each problem as
/// "memc: error: ..." (--help and --version print and exit).
bool parseDriverOptions(int argc, char **argv, DriverOptions &driver);

/// Parses `arguments` (a command line without the program name) as parseDriverOptions does,
/// forgetting what an earlier parse set: how memc compiles the variants of a command line it
/// plans (the ladder's rungs, --micro-batch auto's candidates).
bool parseDriverArguments(const std::vector<std::string> &arguments, DriverOptions &driver);

/// `arguments` without the flags `names` names (without dashes), and their values.
std::vector<std::string> argumentsWithout(const std::vector<std::string> &arguments,
                                          const std::set<std::string> &names);

#endif // MEMC_TOOLS_MEMC_FLAGS_H
