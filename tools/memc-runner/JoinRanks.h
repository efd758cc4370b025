//===- JoinRanks.h - the ranks a training program runs as --------*- C++ -*-===//
//
// Two implementations, one per runner: JoinMpiRanks.cpp (memc-runner: CPU ranks over MPI) and
// JoinOneProcess.cpp (memc-runner-cuda, which carries no MPI library to the GPU host: one
// process, and a clear refusal of a data-parallel program).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TOOLS_MEMC_RUNNER_JOINRANKS_H
#define MEMC_TOOLS_MEMC_RUNNER_JOINRANKS_H

#include "runtime/comm/RankGroup.h"

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

} // namespace memc::runtime

#endif // MEMC_TOOLS_MEMC_RUNNER_JOINRANKS_H
