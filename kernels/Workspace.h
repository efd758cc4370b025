//===- Workspace.h - laying out a kernel call's scratch ---------*- C++ -*-===//
//
// A kernel's scratch is planned memory (Kernel.h): its workspace entry says how many bytes a call
// needs and its run entry carves them from call.workspace. Both walk the same layout through a
// WorkspaceCarver, one without memory to count the bytes and one over the call's workspace to
// hand out pieces, so the size the plan reserves and the bytes the kernel touches cannot drift
// apart.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_WORKSPACE_H
#define MEMC_KERNELS_WORKSPACE_H

#include "kernels/Kernel.h"

#include <cstdint>
#include <string>

namespace memc::kernels {

class WorkspaceCarver {
public:
  /// Counts bytes only: take() returns null.
  WorkspaceCarver() = default;
  /// Hands out pieces of the call's workspace.
  explicit WorkspaceCarver(const KernelCall &call)
      : base(static_cast<uint8_t *>(call.workspace)), capacity(call.workspaceBytes) {}

  /// The next `count` elements of T, kWorkspaceAlignment-aligned. The piece may lie beyond the
  /// workspace until fits() says otherwise: carve everything, check fits(), then write.
  template <typename T> T *take(int64_t count) {
    offset = alignedToWorkspace(offset);
    T *piece = base ? reinterpret_cast<T *>(base + offset) : nullptr;
    offset += static_cast<uint64_t>(count) * sizeof(T);
    return piece;
  }

  /// Bytes taken so far, alignment padding included.
  uint64_t bytes() const { return offset; }

  /// Whether everything taken lies inside the call's workspace. False only when the caller gave
  /// less than the kernel's workspace entry asked for (the plan loader rules that out).
  bool fits(std::string &error) const {
    if (offset <= capacity)
      return true;
    error = "the call's workspace has " + std::to_string(capacity) + " bytes, the kernel needs " +
            std::to_string(offset);
    return false;
  }

  /// The same, recording the message in the kernel's context.
  bool fits(KernelContext &context) const {
    std::string error;
    return fits(error) || context.fail(error);
  }

private:
  uint8_t *base = nullptr;
  uint64_t capacity = 0;
  uint64_t offset = 0;
};

/// The workspace entry of a kernel whose layout is `Carve(call, carver)`: the bytes it takes.
template <auto Carve> uint64_t carvedWorkspaceBytes(const KernelCall &call) {
  WorkspaceCarver carver;
  Carve(call, carver);
  return carver.bytes();
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_WORKSPACE_H
