//===- ArenaLifetimes.h - when each arena buffer of a plan is live -*- C++ -*-===//
//
// The one lifetime rule of the arena, read by the compiler (to place the arena and to report on
// it) and by the runtime (to check a plan before it runs): a step's inputs, outputs and workspace
// are used at that step, graph inputs before the first step and graph outputs after the last; a
// view (Buffer.alias_of) stands for the buffer owning its bytes, so it extends its owner's life.
// Plain C++ over the plan schema: the compiler links it without the executor.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_ARENALIFETIMES_H
#define MEMC_RUNTIME_PLAN_ARENALIFETIMES_H

#include "runtime/plan/Plan.pb.h"

#include <cstdint>
#include <vector>

namespace memc::runtime {

/// Schedule positions of uses: steps are 0..steps-1, graph inputs arrive before step 0 and graph
/// outputs are read after the last step.
constexpr int64_t kBeforeFirstStep = -1;
inline int64_t afterLastStep(const plan::Plan &plan) { return plan.steps_size(); }

enum class ArenaUseKind { InputBinding, StepRead, StepWrite, StepWorkspace, OutputBinding };

struct ArenaUse {
  ArenaUseKind kind;
  /// The buffer as the plan names it, and the buffer owning its bytes.
  uint32_t buffer, owner;
  int64_t position;
  /// The index in plan.inputs() or plan.outputs() for bindings; -1 for steps.
  int binding = -1;
};

/// Per buffer: the buffer owning its bytes (itself unless a view), following alias_of chains.
/// The chains must be acyclic and in range (the compiler writes them so; the loader checks first).
std::vector<uint32_t> bufferOwners(const plan::Plan &plan);

/// Calls `visit(const ArenaUse &)` for every use of a buffer whose owner is in the arena, in
/// schedule order; stops and returns false as soon as `visit` does.
template <typename Visit>
bool forEachArenaUse(const plan::Plan &plan, const std::vector<uint32_t> &owner, Visit &&visit) {
  auto use = [&](ArenaUseKind kind, uint32_t buffer, int64_t position, int binding = -1) {
    return plan.buffers(owner[buffer]).region() != plan::ARENA ||
           visit(ArenaUse{kind, buffer, owner[buffer], position, binding});
  };
  for (int i = 0; i < plan.inputs_size(); ++i)
    if (!use(ArenaUseKind::InputBinding, plan.inputs(i).buffer(), kBeforeFirstStep, i))
      return false;
  for (int s = 0; s < plan.steps_size(); ++s) {
    const plan::Step &step = plan.steps(s);
    for (uint32_t buffer : step.inputs())
      if (!use(ArenaUseKind::StepRead, buffer, s))
        return false;
    for (uint32_t buffer : step.outputs())
      if (!use(ArenaUseKind::StepWrite, buffer, s))
        return false;
    if (step.has_workspace() && !use(ArenaUseKind::StepWorkspace, step.workspace(), s))
      return false;
  }
  for (int i = 0; i < plan.outputs_size(); ++i)
    if (!use(ArenaUseKind::OutputBinding, plan.outputs(i).buffer(), afterLastStep(plan), i))
      return false;
  return true;
}

/// The rule's answer in step indices, as the planner and the report count: an owning arena
/// buffer is live from its first use to its last, graph inputs from step 0 and graph outputs to
/// the last step.
struct ArenaLifetimes {
  std::vector<uint32_t> owner;
  /// Per owning arena buffer: its first and last step; -1 when nothing uses it (and for views
  /// and buffers outside the arena).
  std::vector<int64_t> first, last;

  explicit ArenaLifetimes(const plan::Plan &plan);
  bool liveAt(uint32_t buffer, int64_t step) const {
    return owner[buffer] == buffer && first[buffer] >= 0 && first[buffer] <= step &&
           step <= last[buffer];
  }
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_PLAN_ARENALIFETIMES_H
