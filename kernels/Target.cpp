//===- Target.cpp - a target's kernel contracts ---------------------------===//
#include "kernels/Target.h"

#include "kernels/ops/OpContracts.h"

namespace memc::kernels {

KernelTable contractsOf(const Target &target) {
  KernelTable table;
  const OpChecks &checks = opChecks();
  for (const auto &[name, op] : target.ops()) {
    auto check = checks.find(name);
    if (check != checks.end())
      table[name] = Kernel{check->second, nullptr, op.workspace, op.limits};
  }
  return table;
}

KernelTable withRuns(const KernelTable &table, const std::map<std::string, KernelRun> &runs) {
  KernelTable kernels;
  for (const auto &[name, run] : runs) {
    auto contract = table.find(name);
    if (contract == table.end())
      continue;
    kernels[name] = contract->second;
    kernels[name].run = run;
  }
  return kernels;
}

} // namespace memc::kernels
