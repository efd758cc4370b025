//===- Target.h - what a device kind promises the compiler -------*- C++ -*-===//
//
// A target is a kind of device a plan is compiled for (Plan.target; a device loads only plans
// for its own name). Its record says, without any of its kernels or libraries, what the
// compiler must know to plan for it:
//  - ops: the ops it has kernels for, each with the target's own limits (the dtypes or sizes its
//    kernel covers, checked after the op's shared check, kernels/ops/) and its workspace rule.
//    An op missing here is refused when the plan is built, naming the op.
//  - constantAlignment: where the plan places each folded constant (a GPU wants 256 bytes so
//    that vector loads of constants are aligned like the arena's).
//  - stagesInputs: copies to the device overlap its compute, so a training plan gives each
//    input a staging buffer the next micro-batch is uploaded into during the current step
//    (runtime/plan/InputStaging.h); the CPU's "device memory" is the host's, nothing to overlap.
// contractsOf() turns a record into the kernel table the compiler checks and sizes steps with;
// a device's kernel table is the same entries with its run functions added, so the compiler
// and the loader size workspace by the same rules. The record and its rules are plain C++ built
// on every build machine (no nvcc, no GPU library), so memc plans a CUDA program anywhere.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_TARGET_H
#define MEMC_KERNELS_TARGET_H

#include "kernels/Kernel.h"

#include <map>
#include <string>

namespace memc::kernels {

/// What a target adds to one op's shared check: its limits and its scratch (null: none).
struct TargetOp {
  KernelCheck limits = nullptr;
  KernelWorkspace workspace = nullptr;
};

/// The ops a target implements, by kernel name.
using TargetOps = std::map<std::string, TargetOp>;

struct Target {
  const char *name;
  uint64_t constantAlignment;
  bool stagesInputs;
  const TargetOps &(*ops)();
};

/// Every op `target` implements with its shared check, the target's limits and workspace rule,
/// and no run function. An op without a shared check is left out (a device refuses it at load).
KernelTable contractsOf(const Target &target);

/// `table` (checks and rules, contractsOf) with each of `runs` added; a run whose op is not in
/// the table is left out, so the device refuses plans using it as the compiler does.
KernelTable withRuns(const KernelTable &table, const std::map<std::string, KernelRun> &runs);

} // namespace memc::kernels

#endif // MEMC_KERNELS_TARGET_H
