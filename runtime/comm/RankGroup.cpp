//===- RankGroup.cpp - what the launcher says of the ranks ----------------===//
#include "runtime/comm/RankGroup.h"

#include <climits>
#include <cstdlib>

namespace memc::runtime {
namespace {

/// A launcher's count variable, or -1 where it is unset or not a count.
int environmentCount(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return -1;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 0 && value <= INT_MAX ? static_cast<int>(value) : -1;
}

} // namespace

int launcherWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (int count = environmentCount(name); count > 0)
      return count;
  return 0;
}

int launcherLocalRank() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (int rank = environmentCount(name); rank >= 0)
      return rank;
  return 0;
}

} // namespace memc::runtime
