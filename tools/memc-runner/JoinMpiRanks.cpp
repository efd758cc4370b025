//===- JoinMpiRanks.cpp - CPU ranks over MPI ------------------------------===//
#include "runtime/comm/MpiCollectives.h"
#include "tools/memc-runner/JoinRanks.h"

#include <algorithm>

namespace memc::runtime {

bool joinRanks(int64_t worldSize, std::optional<int64_t> timeoutSeconds,
               std::unique_ptr<RankGroup> &ranks, std::string &error) {
  worldSize = std::max<int64_t>(worldSize, 1);
  const int launched = launcherWorldSize();
  if (worldSize == 1 && launched <= 1) {
    if (timeoutSeconds)
      error = "--collective-timeout is for data-parallel programs (memc --world-size N)";
    return !timeoutSeconds;
  }
  const std::string compiled = "this program is compiled for " + std::to_string(worldSize) +
                               (worldSize == 1 ? " process" : " ranks (memc --world-size)");
  if (launched == 0) {
    error = compiled + ": start it with mpirun -np " + std::to_string(worldSize);
    return false;
  }
  if (launched != worldSize) {
    std::string ignored;
    ranks = MpiCollectives::create(0, ignored);
    error = compiled + ", and mpirun started " + std::to_string(launched) +
            (worldSize == 1 ? " copies, which would overwrite each other's files"
                            : ": start it with mpirun -np " + std::to_string(worldSize) +
                                  " (or compile it for " + std::to_string(launched) + ")");
    return false;
  }
  ranks = MpiCollectives::create(static_cast<double>(timeoutSeconds.value_or(300)), error);
  if (ranks && ranks->size() != worldSize) {
    error = compiled + ", and MPI has " + std::to_string(ranks->size());
    ranks.reset();
  }
  return ranks != nullptr;
}

} // namespace memc::runtime
