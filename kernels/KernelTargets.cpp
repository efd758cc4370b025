//===- KernelTargets.cpp - what the compiler knows of each target ---------===//
#include "kernels/KernelTargets.h"

#include "kernels/cpu/CpuWorkspaces.h"
#include "kernels/ops/OpContracts.h"

namespace memc::kernels {
namespace {

/// One row per target memc compiles for: its name and its workspace rules.
struct TargetRules {
  const char *name;
  const WorkspaceRules &(*workspaceRules)();
};
constexpr TargetRules kTargets[] = {{kCpuTarget, cpuWorkspaceRules}};

/// The ops' checks paired with one target's workspace rules.
KernelTable contractsWith(const WorkspaceRules &rules) {
  KernelTable table;
  for (const auto &[name, check] : opChecks()) {
    auto rule = rules.find(name);
    table[name] = Kernel{check, nullptr, rule == rules.end() ? nullptr : rule->second};
  }
  return table;
}

} // namespace

const KernelTable *targetContracts(const std::string &target) {
  static const std::map<std::string, KernelTable> tables = [] {
    std::map<std::string, KernelTable> byName;
    for (const TargetRules &row : kTargets)
      byName[row.name] = contractsWith(row.workspaceRules());
    return byName;
  }();
  auto found = tables.find(target);
  return found == tables.end() ? nullptr : &found->second;
}

std::string targetNames() {
  std::string names;
  for (const TargetRules &row : kTargets)
    names += (names.empty() ? "" : ", ") + std::string(row.name);
  return names;
}

} // namespace memc::kernels
