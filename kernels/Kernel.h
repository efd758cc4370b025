//===- Kernel.h - the kernel interface shared by every backend --*- C++ -*-===//
//
// A kernel implements one memc op (same name as the op's mnemonic: "add", "matmul",
// "layer_norm", ...) on one device. It has up to three entry points, and only run belongs to
// the device:
//  - check: validates dtypes, shapes and attributes of one call before anything runs. Plans are
//    untrusted input; the runtime checks every step of a plan when it loads it. The check is the
//    op's, one per op for every device (kernels/ops/).
//  - run: computes on the device whose KernelContext it is given (KernelContext.h), assuming
//    check passed. It fails only for errors that depend on tensor *values* and so cannot be
//    checked at load time (a gather index out of range), recording them in the context's error
//    slot; it never reads or writes out of bounds, whatever the values. Run-time scalars are
//    0-d device tensors read inside the kernel body (ScalarOperand.h), never on the host.
//  - workspace: the scratch bytes one call needs, a pure function of the call's dtypes, shapes and
//    attributes (never of the thread count or the data), so that the compiler can plan them as
//    an arena buffer live at the step and the memory the runtime allocates stays the plan. The
//    runtime hands the scratch in as call.workspace; kernels allocate nothing that grows with
//    their tensors. Null: the kernel needs none. The rule is the target's (a CPU kernel and a
//    CUDA kernel of one op need different scratch), kept in a library without the kernels
//    themselves so the compiler can size a plan for any target (kernels/KernelTargets.h).
// Backends register their kernels in a KernelTable by name; the runtime resolves each plan step
// to a kernel at load time, so an unknown kernel is a load error, not a run-time crash.
//
// A new backend is one folder here (kernels/<target>/: its run functions and its target record,
// kernels/Target.h, registered in KernelTargets.cpp) and one under runtime/device/ (the device).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_KERNEL_H
#define MEMC_KERNELS_KERNEL_H

#include "kernels/KernelContext.h"
#include "kernels/Tensor.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace memc::kernels {

/// An op attribute: integer, float, integer list or string (memc's attribute kinds).
using AttributeValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

class Attributes {
public:
  void set(const std::string &name, AttributeValue value) { values[name] = std::move(value); }
  bool has(const std::string &name) const { return values.count(name) != 0; }
  /// Typed lookups; return false (and leave `out` alone) if absent or of another kind.
  bool getInt(const std::string &name, int64_t &out) const;
  bool getFloat(const std::string &name, double &out) const;
  bool getInts(const std::string &name, std::vector<int64_t> &out) const;
  bool getString(const std::string &name, std::string &out) const;
  /// Lookups with a default for optional attributes.
  int64_t intOr(const std::string &name, int64_t fallback) const;
  double floatOr(const std::string &name, double fallback) const;
  const std::map<std::string, AttributeValue> &all() const { return values; }

private:
  std::map<std::string, AttributeValue> values;
};

/// One kernel invocation.
struct KernelCall {
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
  const Attributes *attributes = nullptr;
  /// Scratch of at least the kernel's workspace(call) bytes (null when that is 0), aligned to
  /// kWorkspaceAlignment; its contents on entry are unspecified.
  void *workspace = nullptr;
  uint64_t workspaceBytes = 0;
};

/// The call's attributes, or an empty set when it has none.
const Attributes &attributesOf(const KernelCall &call);

/// Alignment of KernelCall::workspace, and of every piece a kernel carves from it.
constexpr uint64_t kWorkspaceAlignment = 64;

/// `bytes` rounded up to a multiple of kWorkspaceAlignment.
constexpr uint64_t alignedToWorkspace(uint64_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

/// Returns false with a message if the call is not one of the op's.
using KernelCheck = bool (*)(const KernelCall &call, std::string &error);
/// Returns false after recording a data-dependent error in context.errors (a device that finds
/// it in device code records it when its stream synchronizes, and returns true); the outputs
/// are then unspecified.
using KernelRun = bool (*)(KernelContext &context, const KernelCall &call);
/// Scratch bytes the call needs (check passed).
using KernelWorkspace = uint64_t (*)(const KernelCall &call);

/// One op on one device: the op's shared check (kernels/ops/OpContracts.h), the device's run,
/// the target's workspace rule and the target's own limits on the call (the dtypes its kernel
/// covers), checked after the op's (kernels/Target.h; null when there are none).
struct Kernel {
  KernelCheck check = nullptr;
  KernelRun run = nullptr;
  KernelWorkspace workspace = nullptr;
  KernelCheck limits = nullptr;
};

/// The op's check, then the target's limits: whether `kernel` can run `call`.
inline bool checkKernelCall(const Kernel &kernel, const KernelCall &call, std::string &error) {
  return kernel.check && kernel.check(call, error) &&
         (!kernel.limits || kernel.limits(call, error));
}

/// kernel.workspace(call), or 0 when the kernel has no workspace entry.
inline uint64_t workspaceBytes(const Kernel &kernel, const KernelCall &call) {
  return kernel.workspace ? kernel.workspace(call) : 0;
}

/// Kernels of one backend, by op name.
using KernelTable = std::map<std::string, Kernel>;

} // namespace memc::kernels

#endif // MEMC_KERNELS_KERNEL_H
