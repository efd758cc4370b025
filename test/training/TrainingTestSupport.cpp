//===- TrainingTestSupport.cpp - running memc and training programs -------===//
#include "TrainingTestSupport.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace memc::test {

std::string scratchDirectory() {
  const testing::TestInfo *test = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  std::replace(name.begin(), name.end(), '/', '_');
  std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "memc-training" / name;
  std::filesystem::remove_all(dir); // an earlier run's files
  std::filesystem::create_directories(dir);
  return dir.string();
}

int run(const std::string &command, const std::string &dir, std::string &output) {
  std::string log = dir + "/command.log";
  int status = std::system((command + " >" + log + " 2>&1").c_str());
  std::ifstream in(log);
  output.assign(std::istreambuf_iterator<char>(in), {});
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string memcCommand(const std::string &model, const std::vector<std::string> &flags,
                        const std::string &program) {
  std::string command = kBin + "/memc " + kFixtures + "/" + model + ".onnx";
  for (const std::string &flag : flags)
    command += " '" + flag + "'";
  return command + " -o " + program;
}

std::string mpirunCommand(int64_t ranks) {
  return "mpirun --allow-run-as-root --oversubscribe -np " + std::to_string(ranks) + " ";
}

} // namespace memc::test
