//===- KernelTargets.cpp - the targets memc compiles for ------------------===//
#include "kernels/KernelTargets.h"

#include "kernels/cpu/CpuTarget.h"
#include "kernels/cuda/CudaTarget.h"

namespace memc::kernels {
namespace {

const Target *const kTargets[] = {&cpuTarget(), &cudaTarget()};

} // namespace

const Target *findTarget(const std::string &name) {
  for (const Target *target : kTargets)
    if (name == target->name)
      return target;
  return nullptr;
}

const KernelTable *targetContracts(const std::string &name) {
  static const std::map<std::string, KernelTable> tables = [] {
    std::map<std::string, KernelTable> byName;
    for (const Target *target : kTargets)
      byName[target->name] = contractsOf(*target);
    return byName;
  }();
  auto found = tables.find(name);
  return found == tables.end() ? nullptr : &found->second;
}

std::string targetNames() {
  std::string names;
  for (const Target *target : kTargets)
    names += (names.empty() ? "" : ", ") + std::string(target->name);
  return names;
}

} // namespace memc::kernels
