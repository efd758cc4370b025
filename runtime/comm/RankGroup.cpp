//===- RankGroup.cpp - the launcher's world size --------------------------===//
#include "runtime/comm/RankGroup.h"

#include <climits>
#include <cstdlib>

namespace memc::runtime {
namespace {

/// A launcher's world size variable, or 0.
int environmentCount(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == '\0' && value > 0 && value <= INT_MAX ? static_cast<int>(value) : 0;
}

} // namespace

int launcherWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (int count = environmentCount(name))
      return count;
  return 0;
}

} // namespace memc::runtime
