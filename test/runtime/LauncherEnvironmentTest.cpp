//===- LauncherEnvironmentTest.cpp - what the launcher says of the ranks --===//
#include "runtime/comm/RankGroup.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace memc::runtime;

namespace {

/// Sets the launcher variables for the test's life, unsetting every other one it knows.
class LauncherEnvironment : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kNames)
      unsetenv(name);
  }
  void TearDown() override { SetUp(); }
  static constexpr const char *kNames[] = {
      "OMPI_COMM_WORLD_SIZE",       "PMIX_SIZE",       "PMI_SIZE",
      "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"};
};

TEST_F(LauncherEnvironment, NoLauncherIsOneProcessOnTheFirstDevice) {
  EXPECT_EQ(launcherWorldSize(), 0);
  EXPECT_EQ(launcherLocalRank(), 0);
}

TEST_F(LauncherEnvironment, ReadsOpenMpiMpichAndSlurm) {
  setenv("PMI_SIZE", "4", 1);
  setenv("SLURM_LOCALID", "3", 1);
  EXPECT_EQ(launcherWorldSize(), 4);
  EXPECT_EQ(launcherLocalRank(), 3);
  // OpenMPI's own variables come first.
  setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  EXPECT_EQ(launcherWorldSize(), 8);
  EXPECT_EQ(launcherLocalRank(), 0);
}

TEST_F(LauncherEnvironment, IgnoresWhatIsNoCount) {
  setenv("OMPI_COMM_WORLD_SIZE", "two", 1);
  setenv("PMIX_SIZE", "0", 1);
  setenv("MPI_LOCALRANKID", "-1", 1);
  setenv("SLURM_LOCALID", "5x", 1);
  EXPECT_EQ(launcherWorldSize(), 0);
  EXPECT_EQ(launcherLocalRank(), 0);
  setenv("MPI_LOCALRANKID", "2", 1);
  EXPECT_EQ(launcherLocalRank(), 2);
}

} // namespace
