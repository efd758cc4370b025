//===- ArenaLifetimes.cpp - when each arena allocation of a plan is live --===//
#include "compiler/lowering/ArenaLifetimes.h"

#include <algorithm>

namespace memc {

ArenaLifetimes::ArenaLifetimes(const plan::Plan &plan) {
  int n = plan.buffers_size();
  first.assign(n, -1);
  last.assign(n, -1);
  owner.resize(n);
  for (int i = 0; i < n; ++i) {
    uint32_t root = i;
    while (plan.buffers(root).has_alias_of())
      root = plan.buffers(root).alias_of();
    owner[i] = root;
  }
  auto touch = [&](uint32_t buffer, int64_t step) {
    uint32_t root = owner[buffer];
    if (plan.buffers(root).region() != plan::ARENA)
      return;
    first[root] = first[root] < 0 ? step : std::min(first[root], step);
    last[root] = std::max(last[root], step);
  };
  for (const plan::Binding &input : plan.inputs())
    touch(input.buffer(), 0);
  for (int s = 0; s < plan.steps_size(); ++s) {
    const plan::Step &step = plan.steps(s);
    for (uint32_t buffer : step.inputs())
      touch(buffer, s);
    for (uint32_t buffer : step.outputs())
      touch(buffer, s);
    if (step.has_workspace())
      touch(step.workspace(), s);
  }
  int64_t end = std::max(0, plan.steps_size() - 1);
  for (const plan::Binding &output : plan.outputs())
    touch(output.buffer(), end);
}

} // namespace memc
