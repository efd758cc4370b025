//===- JoinOneProcess.cpp - the CUDA runner's one process -----------------===//
#include "tools/memc-runner/JoinRanks.h"

namespace memc::runtime {

bool joinRanks(int64_t worldSize, std::optional<int64_t> timeoutSeconds,
               std::unique_ptr<RankGroup> &, std::string &error) {
  if (worldSize > 1) {
    error = "this program is compiled for " + std::to_string(worldSize) +
            " ranks (memc --world-size), and memc's CUDA programs run as one process for now: "
            "compile it without --world-size";
    return false;
  }
  if (int launched = launcherWorldSize(); launched > 1) {
    error = "this program runs as one process, and mpirun started " + std::to_string(launched) +
            " copies, which would overwrite each other's files";
    return false;
  }
  if (timeoutSeconds) {
    error = "--collective-timeout is for data-parallel programs (memc --world-size N)";
    return false;
  }
  return true;
}

} // namespace memc::runtime
