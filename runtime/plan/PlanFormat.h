//===- PlanFormat.h - constants of the plan format ----------------*- C++ -*-===//
//
// Shared by the compiler, which writes plans (Plan.proto), and the runtime, which refuses plans
// of any other format version. Header-only and free of dependencies so the compiler can include
// it without linking the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_PLANFORMAT_H
#define MEMC_RUNTIME_PLAN_PLANFORMAT_H

#include <cstdint>

namespace memc::plan {

/// Plan.format_version of the plans this runtime executes. Bump on every incompatible change to
/// Plan.proto or to the meaning of its fields.
/// 2: steps carry their kernel's workspace (Step.workspace); kernels no longer allocate scratch.
/// 3: plans name their target (Plan.target) and are loaded only by its devices; Binding.kind is
///    the enum BindingKind (field 5; the string field 4 is gone); DType gains U8, I8 and NF4.
constexpr uint32_t kPlanFormatVersion = 3;

/// The alignment the compiler gives arena and persistent buffers (Plan.alignment): enough for
/// any vector load on CPUs and for CUDA's 256-byte allocation granularity.
constexpr uint64_t kPlanAlignment = 256;

/// The largest Plan.alignment the runtime accepts; an alignment is a power of two up to this.
constexpr uint64_t kMaxPlanAlignment = 1u << 20;

} // namespace memc::plan

#endif // MEMC_RUNTIME_PLAN_PLANFORMAT_H
