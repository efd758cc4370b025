//===- DeviceRanksOverNccl.cpp - the GPUs' collectives over NCCL ----------===//
#include "runtime/comm/NcclCollectives.h"
#include "tools/memc-runner/JoinRanks.h"

namespace memc::runtime {

bool joinDeviceRanks(RankGroup &ranks, Device &device,
                     std::unique_ptr<kernels::Collectives> &collectives, std::string &error) {
  // Rank 0 makes NCCL's unique id and the ranks (MPI) carry it to the others.
  NcclCollectives::Broadcast broadcast = [&ranks](void *data, int bytes, std::string &failure) {
    return ranks.broadcast(data, bytes, /*root=*/0, failure);
  };
  collectives = NcclCollectives::create(ranks.rank(), ranks.size(), broadcast,
                                        device.properties().ordinal, error);
  if (!collectives)
    error = "NCCL on " + device.properties().description + ": " + error;
  return collectives != nullptr;
}

} // namespace memc::runtime
