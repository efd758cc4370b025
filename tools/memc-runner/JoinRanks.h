//===- JoinRanks.h - the ranks a training program runs as --------*- C++ -*-===//
//
// Each runner links one way to join the ranks and one way to give its device collectives:
//   memc-runner           JoinMpiRanks.cpp, DeviceRanksOnHost.cpp: CPU ranks over MPI, whose
//                         collectives the kernels call on host memory;
//   memc-runner-cuda      JoinOneProcess.cpp, DeviceRanksOnHost.cpp: one process (it carries no
//                         MPI library to the GPU host) and a clear refusal of a data-parallel
//                         program;
//   memc-runner-cuda-mpi  JoinMpiRanks.cpp, DeviceRanksOverNccl.cpp: data-parallel CUDA
//                         programs, each rank on its GPU; MPI on the host, NCCL on the GPUs.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_RUNNER_JOINRANKS_H
#define MEMC_TOOLS_MEMC_RUNNER_JOINRANKS_H

#include "runtime/comm/RankGroup.h"
#include "runtime/device/Device.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace memc::runtime {

/// The ranks of a program compiled for `worldSize` (0 or 1: one process, `ranks` stays null),
/// whose collectives give up after `timeoutSeconds` (--collective-timeout when given). False
/// with a message, on every rank, where the launch does not match the program; `ranks` is then
/// set where the launcher started copies, so that each can wait for the others to say why
/// (mpirun ends the rest when the first exits).
bool joinRanks(int64_t worldSize, std::optional<int64_t> timeoutSeconds,
               std::unique_ptr<RankGroup> &ranks, std::string &error);

/// The collectives the plan's steps call on `device`, over `ranks`: null where they are the
/// ranks' own (host memory), a communicator of the device's otherwise (NCCL on a GPU). False
/// with a message.
bool joinDeviceRanks(RankGroup &ranks, Device &device,
                     std::unique_ptr<kernels::Collectives> &collectives, std::string &error);

} // namespace memc::runtime

#endif // MEMC_TOOLS_MEMC_RUNNER_JOINRANKS_H
