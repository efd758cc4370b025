//===- TestMain.cpp - GoogleTest's main, in a temporary folder of its own ---===//
//
// Every memc test binary starts here instead of gtest_main: it makes a new folder
// ($TEST_TMPDIR or /tmp)/memc-test-XXXXXX, points TEST_TMPDIR (what testing::TempDir() returns)
// at it, runs the tests and removes it. Tests name their files under TempDir(), so two test runs
// on one machine at once, or two tests that ctest runs side by side, never share a path.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  const char *parent = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(parent && *parent ? parent : "/tmp") + "/memc-test-XXXXXX";
  if (!::mkdtemp(pattern.data())) {
    std::perror(("cannot make a temporary folder " + pattern).c_str());
    return 1;
  }
  ::setenv("TEST_TMPDIR", pattern.c_str(), /*overwrite=*/1);
  int status = RUN_ALL_TESTS();
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
  return status;
}
