//===- NcclCollectives.h - the ranks of a program on CUDA devices -*- C++ -*-===//
//
// The CUDA ranks' collectives over one NCCL communicator, bootstrapped through MPI (rank 0 makes
// the unique id and broadcasts it). Work is enqueued on the launching stream (a cudaStream_t),
// so collectives order with the kernels around them and the host does not wait. Built where
// the CUDA toolkit carries NCCL; the CUDA backend (runtime/device/cuda/) gives its streams this
// object.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_COMM_NCCLCOLLECTIVES_H
#define MEMC_RUNTIME_COMM_NCCLCOLLECTIVES_H

#include "kernels/Collectives.h"
#include "runtime/comm/MpiCollectives.h"

#include <memory>

namespace memc::runtime {

class NcclCollectives final : public kernels::Collectives {
public:
  /// One communicator over `ranks`' processes on CUDA device `device`. Null with a message.
  static std::unique_ptr<NcclCollectives> create(MpiCollectives &ranks, int device,
                                                 std::string &error);
  ~NcclCollectives() override;

  int rank() const override { return myRank; }
  int size() const override { return worldSize; }
  bool allReduce(void *data, int64_t count, kernels::DType dtype, kernels::ReduceOp op,
                 void *stream, std::string &error) override;
  bool allGather(const void *shard, void *whole, int64_t shardCount, kernels::DType dtype,
                 void *stream, std::string &error) override;
  bool reduceScatter(const void *whole, void *shard, int64_t shardCount, kernels::DType dtype,
                     kernels::ReduceOp op, void *stream, std::string &error) override;

private:
  NcclCollectives() = default;
  void *communicator = nullptr; // ncclComm_t
  int myRank = 0;
  int worldSize = 1;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_COMM_NCCLCOLLECTIVES_H
