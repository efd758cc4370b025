//===- NcclCollectives.h - the ranks of a program on CUDA devices -*- C++ -*-===//
//
// The CUDA ranks' collectives over one NCCL communicator, bootstrapped by a broadcast the caller
// gives (MpiCollectives::broadcast under mpirun: rank 0 makes the unique id and sends it; none
// for one process, tools/nccl-check). Work is enqueued on the launching stream (a cudaStream_t),
// so collectives order with the kernels around them and the host does not wait. Built where
// the CUDA toolkit carries NCCL; the CUDA backend (runtime/device/cuda/) gives its streams this
// object. NCCL is loaded at run time, found as cuBLASLt is (kernels/cuda/CudaLibrarySearch.h),
// so that a program linking this runs where NCCL is not installed until it needs the ranks.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_COMM_NCCLCOLLECTIVES_H
#define MEMC_RUNTIME_COMM_NCCLCOLLECTIVES_H

#include "kernels/Collectives.h"

#include <functional>
#include <memory>

namespace memc::runtime {

class NcclCollectives final : public kernels::Collectives {
public:
  /// Sends `bytes` bytes at `data` from rank 0 to every rank; false with a message.
  using Broadcast = std::function<bool(void *data, int bytes, std::string &error)>;

  /// Rank `rank` of `size` of one communicator, on CUDA device `device`. Null with a message.
  static std::unique_ptr<NcclCollectives> create(int rank, int size, const Broadcast &broadcast,
                                                 int device, std::string &error);
  ~NcclCollectives() override;

  /// The NCCL library file it loaded.
  const std::string &libraryPath() const;

  int rank() const override { return myRank; }
  int size() const override { return worldSize; }
  bool allReduce(void *data, int64_t count, kernels::DType dtype, kernels::ReduceOp op,
                 void *stream, std::string &error) override;
  bool allGather(const void *shard, void *whole, int64_t shardCount, kernels::DType dtype,
                 void *stream, std::string &error) override;
  bool reduceScatter(const void *whole, void *shard, int64_t shardCount, kernels::DType dtype,
                     kernels::ReduceOp op, void *stream, std::string &error) override;

  /// The NCCL library, loaded at run time (NcclCollectives.cpp).
  struct Library;

private:
  NcclCollectives() = default;
  /// False, or true with `error` saying what failed, for an ncclResult_t.
  bool failed(int result, const char *what, std::string &error) const;
  std::unique_ptr<Library> nccl;
  void *communicator = nullptr; // ncclComm_t
  int myRank = 0;
  int worldSize = 1;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_COMM_NCCLCOLLECTIVES_H
