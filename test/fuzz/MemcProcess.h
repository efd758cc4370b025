//===- MemcProcess.h - running memc on a fuzzed model ----------*- C++ -*-===//
//
// The fuzz tests run the memc binary on each generated model in a child process, killed after a
// generous 30 s that only a real hang reaches, and sort what happened: exit 0, exit 1 with a
// "memc: error:" message, or a failure (a signal, a hang, an "internal:" message, anything else).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_FUZZ_MEMCPROCESS_H
#define MEMC_TEST_FUZZ_MEMCPROCESS_H

#include <functional>
#include <string>
#include <vector>

namespace memc::fuzz {

struct Outcome {
  enum Kind { Success, CleanError, Crash, Hang, Internal, Unclear } kind;
  std::string detail; ///< What memc said, except on success.
};

std::string readFile(const std::string &path);

/// Runs memc with `arguments`, its stderr into the file `log`.
Outcome runMemc(const std::vector<std::string> &arguments, const std::string &log);

/// Calls `body(index, log)` for every index below `count`, on two threads (the machines have two
/// cores), each with a stderr file of its own in `dir`. `body` locks what it shares.
void forEachOnTwoThreads(size_t count, const std::string &dir,
                         const std::function<void(size_t, const std::string &)> &body);

} // namespace memc::fuzz

#endif // MEMC_TEST_FUZZ_MEMCPROCESS_H
