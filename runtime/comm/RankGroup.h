//===- RankGroup.h - the processes of a data-parallel program ----*- C++ -*-===//
//
// What the runner needs of the ranks it joins beyond the collectives the kernels call: waiting
// for all, and ending all when one fails. MPI implements it for CPU ranks (MpiCollectives.h);
// launcherWorldSize reads the launcher's environment without any MPI library, so a runner
// built without MPI (the one-process CUDA runner) still notices that mpirun started copies of
// it; launcherLocalRank picks a rank's GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_COMM_RANKGROUP_H
#define MEMC_RUNTIME_COMM_RANKGROUP_H

#include "kernels/Collectives.h"

#include <string>

namespace memc::runtime {

class RankGroup : public kernels::Collectives {
public:
  /// Waits until every rank has called it.
  virtual bool barrier(std::string &error) = 0;
  /// Copies `bytes` bytes of host memory from rank `root` to every rank (NCCL's bootstrap).
  virtual bool broadcast(void *data, int bytes, int root, std::string &error) = 0;
  /// Ends every rank with exit code `code`; for a rank that failed, after it has said why.
  [[noreturn]] virtual void abortAll(int code) = 0;
};

/// The number of ranks a launcher (mpirun, or any PMIx launcher) announces in this process's
/// environment; 0 when the process was not started by one.
int launcherWorldSize();

/// This process's rank among those the launcher started on its host (OpenMPI's, MPICH's or
/// Slurm's local rank); 0 when none says.
int launcherLocalRank();

} // namespace memc::runtime

#endif // MEMC_RUNTIME_COMM_RANKGROUP_H
