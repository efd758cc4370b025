//===- KernelTargets.cpp - what the compiler knows of each target ---------===//
#include "kernels/KernelTargets.h"

#include "kernels/cpu/CpuWorkspaces.h"
#include "kernels/ops/OpContracts.h"

namespace memc::kernels {
namespace {

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
  static const KernelTable cpu = contractsWith(cpuWorkspaceRules());
  if (target == kCpuTarget)
    return &cpu;
  return nullptr;
}

} // namespace memc::kernels
