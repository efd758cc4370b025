//===- MemoryLimit.cpp - how much memory this process may take ------------===//
#include "runtime/support/MemoryLimit.h"

#include <fstream>
#include <sys/resource.h>
#include <unistd.h>

namespace memc::runtime {
namespace {

/// The limit in a cgroup file ("max" or a number of bytes); 0 when it has none or no such file.
uint64_t cgroupLimit(const std::string &path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text) || text == "max" || text.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::stoull(text);
}

/// This process's cgroup memory limit: v2's memory.max, else v1's memory.limit_in_bytes (v1
/// writes a huge number for none); 0 when there is none.
uint64_t ownCgroupLimit() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    // "0::/path" (v2) or "N:memory:/path" (v1).
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (controllers.empty())
      return cgroupLimit("/sys/fs/cgroup" + path + "/memory.max");
    if (controllers.find("memory") != std::string::npos) {
      uint64_t limit = cgroupLimit("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
      return limit >= (uint64_t(1) << 60) ? 0 : limit;
    }
  }
  return 0;
}

} // namespace

MemoryLimit processMemoryLimit() {
  MemoryLimit limit{uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)),
                    "this machine's memory"};
  struct rlimit space;
  if (getrlimit(RLIMIT_AS, &space) == 0 && space.rlim_cur != RLIM_INFINITY &&
      space.rlim_cur < limit.bytes)
    limit = {uint64_t(space.rlim_cur), "the address-space limit (RLIMIT_AS)"};
  if (uint64_t cgroup = ownCgroupLimit(); cgroup && cgroup < limit.bytes)
    limit = {cgroup, "the cgroup's memory limit"};
  return limit;
}

} // namespace memc::runtime
