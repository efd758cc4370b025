//===- ExplainMemory.cpp - the memory ladder of a command line ------------===//
#include "tools/memc/ExplainMemory.h"
#include "tools/memc/PlanProbe.h"

#include "compiler/pipeline/MemoryLadder.h"

#include <algorithm>

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

} // namespace

memc::MemoryLadder planMemoryLadder(const DriverOptions &driver,
                                    const std::vector<std::string> &arguments) {
  const std::set<std::string> explainFlags = {"explain-memory", "batch-sweep", "report",
                                              "report-json", "report-svg"};
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
  }
  for (int64_t batch : driver.batchSweep)
    ladder.batchSweep.emplace_back(
        batch, planRow("micro-batch " + std::to_string(batch), driver.modelPath,
                       withFlag(given, "micro-batch", std::to_string(batch))));
  return ladder;
}
