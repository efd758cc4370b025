//===- TrainingTestSupport.h - running memc and training programs -*- C++ -*-===//
//
// What the training tests share: the fixture, data and binary directories, a scratch directory
// per test (ctest runs tests in parallel), and running memc and the programs it builds.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_TRAINING_TRAININGTESTSUPPORT_H
#define MEMC_TEST_TRAINING_TRAININGTESTSUPPORT_H

#include <string>
#include <vector>

namespace memc::test {

inline const std::string kFixtures = MEMC_FIXTURES_DIR;
inline const std::string kData = MEMC_TRAINING_DATA_DIR;
inline const std::string kBin = MEMC_BIN_DIR;

/// An empty directory of its own for the running test.
std::string scratchDirectory();

/// Runs a shell command; returns its exit status and fills `output` with its stdout and stderr
/// (kept in `dir`/command.log).
int run(const std::string &command, const std::string &dir, std::string &output);

/// `memc FIXTURE.onnx FLAGS... -o PROGRAM`, every flag single-quoted (globs stay globs).
std::string memcCommand(const std::string &model, const std::vector<std::string> &flags,
                        const std::string &program);

/// `mpirun -np RANKS ` with what CI needs (root, more ranks than cores), before a program.
std::string mpirunCommand(int64_t ranks);

} // namespace memc::test

#endif // MEMC_TEST_TRAINING_TRAININGTESTSUPPORT_H
