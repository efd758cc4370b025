//===- PlanLoader.h - parsing and validating untrusted plans ------*- C++ -*-===//
//
// A plan comes from a file or a bundle and may be truncated, corrupted, from another memc
// version or simply wrong. loadPlan parses it and checks everything the executor relies on
// before anything is allocated or run; each failure is one message naming the offending
// buffer, step or binding. The rules are listed in PlanLoader.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_PLANLOADER_H
#define MEMC_RUNTIME_PLAN_PLANLOADER_H

#include "runtime/plan/LoadedPlan.h"

#include <memory>
#include <string>
#include <string_view>

namespace memc::plan {
class Plan;
} // namespace memc::plan

namespace memc::runtime {

class Device;

/// Parses serialized plan bytes and validates them for the device that will run them: compiled
/// for its target (Plan.target is device.name()), checked against its kernels. Returns null
/// with a message in `error`.
std::unique_ptr<LoadedPlan> loadPlan(std::string_view bytes, const Device &device,
                                     std::string &error);

/// Validates an already parsed plan (the compiler can check what it wrote).
std::unique_ptr<LoadedPlan> validatePlan(const plan::Plan &plan, const Device &device,
                                         std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_PLAN_PLANLOADER_H
