//===- MpiCollectives.h - the ranks of a program started by mpirun -*- C++ -*-===//
//
// The CPU ranks' collectives (kernels/Collectives.h) over MPI_COMM_WORLD, and what the training
// loop needs besides: host reductions of its counts and losses, and a way to end every rank
// when one fails. MPI's errors return to the caller (MPI_ERRORS_RETURN) and become messages.
//
// No rank may wait forever: a watchdog thread ends the process when one collective has waited
// longer than the timeout (a peer that hangs). A peer that dies is mpirun's to notice: it ends
// the others. A rank that fails calls abortAll, which ends every rank through MPI_Abort.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_COMM_MPICOLLECTIVES_H
#define MEMC_RUNTIME_COMM_MPICOLLECTIVES_H

#include "runtime/comm/RankGroup.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace memc::runtime {

class MpiCollectives final : public RankGroup {
public:
  /// Joins the ranks (MPI_Init_thread); a collective that waits longer than `timeoutSeconds`
  /// ends the process. Null with a message.
  static std::unique_ptr<MpiCollectives> create(double timeoutSeconds, std::string &error);
  ~MpiCollectives() override;

  int rank() const override { return myRank; }
  int size() const override { return worldSize; }
  bool allReduce(void *data, int64_t count, kernels::DType dtype, kernels::ReduceOp op,
                 void *stream, std::string &error) override;
  bool allGather(const void *shard, void *whole, int64_t shardCount, kernels::DType dtype,
                 void *stream, std::string &error) override;
  bool reduceScatter(const void *whole, void *shard, int64_t shardCount, kernels::DType dtype,
                     kernels::ReduceOp op, void *stream, std::string &error) override;

  /// Waits until every rank has called it.
  bool barrier(std::string &error) override;

  bool broadcast(void *data, int bytes, int root, std::string &error) override;

  /// Ends every rank with exit code `code` (MPI_Abort); for a rank that failed, after it has
  /// printed why.
  [[noreturn]] void abortAll(int code) override;

private:
  MpiCollectives() = default;
  /// Marks a collective as waiting (the watchdog's clock) until the guard ends.
  class Waiting;
  void watch();

  int myRank = 0;
  int worldSize = 1;
  double timeoutSeconds = 0;
  std::atomic<int64_t> waitingSinceNs{0}; // 0: no collective in flight
  const char *waitingFor = "";
  std::mutex mutex;
  std::condition_variable stopWatching;
  bool stopping = false;
  std::thread watchdog;
};

} // namespace memc::runtime

#endif // MEMC_RUNTIME_COMM_MPICOLLECTIVES_H
