//===- DeviceRanksOnHost.cpp - kernels that call the ranks' own collectives ===//
#include "tools/memc-runner/JoinRanks.h"

namespace memc::runtime {

bool joinDeviceRanks(RankGroup &, Device &, std::unique_ptr<kernels::Collectives> &collectives,
                     std::string &) {
  collectives.reset(); // the device computes on host memory: MPI carries its tensors
  return true;
}

} // namespace memc::runtime
