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

#include <string>

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
};

/// Parses and checks the command line into `driver`; false after printing each problem as
/// "memc: error: ..." (--help and --version print and exit).
bool parseDriverOptions(int argc, char **argv, DriverOptions &driver);

#endif // MEMC_TOOLS_MEMC_FLAGS_H
