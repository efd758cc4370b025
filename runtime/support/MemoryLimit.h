//===- MemoryLimit.h - how much memory this process may take ----*- C++ -*-===//
//
// A size check against physical RAM alone let a 2 MB npz inflate toward 2.1 GB under a 1 GB
// address-space limit and abort. The limit a process meets first is the least of the machine's
// memory, its RLIMIT_AS and its cgroup's memory.max (v2) or memory.limit_in_bytes (v1).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_MEMORYLIMIT_H
#define MEMC_RUNTIME_SUPPORT_MEMORYLIMIT_H

#include <cstdint>
#include <string>

namespace memc::runtime {

struct MemoryLimit {
  uint64_t bytes = 0;
  /// Which limit it is, for messages: "this machine's memory", "the address-space limit
  /// (RLIMIT_AS)", "the cgroup's memory limit".
  std::string what;
};

/// The least of the limits above that this process runs under.
MemoryLimit processMemoryLimit();

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_MEMORYLIMIT_H
