//===- ExplainMemory.cpp - the memory ladder of a command line ------------===//
#include "tools/memc/ExplainMemory.h"
#include "tools/memc/LargestFitting.h"
#include "tools/memc/PlanProbe.h"

#include "compiler/pipeline/MemoryLadder.h"

#include <algorithm>
#include <map>

namespace {

/// What a row's compile is planned from (its flags) and what it prints: the same arguments,
/// less the model.
memc::LadderRow planRow(const std::string &name, const std::string &model,
                        const std::vector<std::string> &arguments) {
  memc::LadderRow row;
  row.name = name;
  row.flags = arguments;
  if (auto at = std::find(row.flags.begin(), row.flags.end(), model); at != row.flags.end())
    row.flags.erase(at);
  PlanProbe probe = probePlan(arguments);
  row.memory = std::move(probe.memory);
  row.error = probe.error;
  return row;
}

/// --max-seq: the longest --seq-len whose plan with `arguments` fits, into `row` (0 when 1
/// does not), to within row.maxSequenceStep tokens (that many more do not fit): doubling or
/// halving from 1024 to the first change, then bisection.
void findLongestSequence(const std::vector<std::string> &arguments, memc::LadderRow &row) {
  std::vector<std::string> base = argumentsWithout(arguments, {"seq-len"});
  std::map<int64_t, uint64_t> peaks; // of the lengths that fit
  auto fits = [&](int64_t length) {
    PlanProbe probe = probePlan(withFlag(base, "seq-len", std::to_string(length)));
    // A length memc refuses ends the search as one that does not fit would, and says why.
    if (!probe.memory && row.maxSequenceLimit.empty())
      row.maxSequenceLimit = "at --seq-len " + std::to_string(length) + ": " + probe.error;
    if (probe.fits())
      peaks[length] = probe.memory->peakBytes;
    return probe.fits();
  };
  // To the token below 256 tokens, to 1/256 of the length above: a long model's plan takes
  // seconds, and no one trains at 78,475 tokens rather than 78,464.
  SizeBracket longest = largestFitting(1024, int64_t{1} << 24, fits, [](int64_t length) {
    return std::max<int64_t>(1, length / 256);
  });
  row.maxSequence = longest.fits;
  row.maxSequenceStep = longest.resolution;
  if (longest.fits)
    row.maxSequencePeakBytes = peaks.at(longest.fits);
}

} // namespace

memc::MemoryLadder planMemoryLadder(const DriverOptions &driver,
                                    const std::vector<std::string> &arguments) {
  const std::set<std::string> explainFlags = {"explain-memory", "batch-sweep", "max-seq",
                                              "report",         "report-json", "report-svg"};
  std::vector<std::string> given = argumentsWithout(arguments, explainFlags);
  std::set<std::string> decided = memc::ladderFlagNames();
  std::vector<std::string> base = argumentsWithout(given, decided);

  const memc::PipelineOptions &options = driver.pipeline;
  memc::MemoryLadder ladder;
  ladder.model = driver.modelPath;
  ladder.budgetBytes = options.budget.budgetBytes;
  ladder.worldSize = options.training.worldSize;
  memc::LadderSetting setting;
  setting.optimizer = options.training.optimizer.name;
  setting.fp16 = options.precision == memc::Precision::Fp16;
  setting.budget = options.budget.budgetBytes.has_value();
  setting.worldSize = options.training.worldSize;
  for (const memc::LadderRung &rung : memc::memoryLadder(setting)) {
    std::vector<std::string> rowArguments = argumentsWithout(base, rung.drops);
    rowArguments.insert(rowArguments.end(), rung.flags.begin(), rung.flags.end());
    ladder.rows.push_back(planRow(rung.name, driver.modelPath, rowArguments));
    if (driver.maxSequence && ladder.rows.back().memory)
      findLongestSequence(rowArguments, ladder.rows.back());
  }
  for (int64_t batch : driver.batchSweep)
    ladder.batchSweep.emplace_back(batch,
                                   planRow("micro-batch " + std::to_string(batch), driver.modelPath,
                                           withFlag(given, "micro-batch", std::to_string(batch))));
  return ladder;
}
