//===- Liveness.h - when arena values live, and that they never collide -*- C++ -*-===//
//
// The arena is reused across the schedule: the memory planner gives values whose lifetimes do
// not intersect the same bytes. The runtime recomputes those lifetimes from the schedule and
// checks the planner's work, because a collision would silently corrupt results.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_LIVENESS_H
#define MEMC_RUNTIME_PLAN_LIVENESS_H

#include "runtime/plan/LoadedPlan.h"
#include "runtime/plan/Plan.pb.h"

#include <string>

namespace memc::runtime {

/// Fills `plan.liveRanges` and `plan.timeline` by the arena's lifetime rule (ArenaLifetimes.h)
/// over `proto`, the plan `plan` was loaded from, and
/// checks that every arena value is written exactly once (by one step, or as a graph input)
/// before any step reads it, that every arena output is written, that an in-place step's input
/// dies at that step, and that no two values live at the same step share arena bytes (except an
/// in-place output taking over its input's bytes). A view (Buffer.alias_of) stands for the buffer
/// owning its bytes: reading it reads the owner, binding it as an output keeps the owner alive.
/// A step's workspace buffer is a value written and last read at that step.
/// Zero-byte buffers take no part.
bool analyzeArena(const plan::Plan &proto, LoadedPlan &plan, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_PLAN_LIVENESS_H
