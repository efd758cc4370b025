//===- HostilePlanTest.cpp - plans declaring memory they do not use -------===//
//
// The executor allocates and zero-fills what a plan declares. A crafted plan declaring gigabytes
// is refused before any of it is allocated: a persistent region larger than its buffers reach,
// or a parameter the weights file does not hold. The runner runs in a 2 GB address space, so an
// attempt to allocate the 4 GiB would show as "cannot allocate", not as the expected refusal.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Files.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"

#include "HostArrays.h"
#include "PlanBuilder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

using namespace memc;
using namespace memc::runtime;
using memc::testing::floats;
using memc::testing::PlanBuilder;

namespace {

constexpr uint64_t kFourGiB = uint64_t(4) << 30;

/// y = x + w, with a second parameter `big` of 4 GiB that no step uses.
PlanBuilder planWithABigParameter() {
  PlanBuilder b;
  b.plan.set_arena_bytes(512);
  b.plan.set_persistent_bytes(256 + kFourGiB);
  uint32_t x = b.buffer({2, 3}, plan::ARENA, 0, "x");
  uint32_t w = b.buffer({2, 3}, plan::PERSISTENT, 0, "w");
  uint32_t big = b.buffer({int64_t(kFourGiB / 4)}, plan::PERSISTENT, 256, "big");
  uint32_t y = b.buffer({2, 3}, plan::ARENA, 256, "y");
  b.step("add", {x, w}, {y});
  b.input("x", x);
  b.parameter("w", w);
  b.parameter("big", big);
  b.output("y", y);
  return b;
}

class HostilePlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    directory = ::testing::TempDir() + "/hostile_plan_" + std::to_string(getpid());
    std::system(("mkdir -p '" + directory + "'").c_str());
    std::string error;
    HostArray w = floats({2, 3}, {1, 1, 1, -1, -1, -1});
    ASSERT_TRUE(writeSafetensors(path("w.safetensors"), {tensorRef("w", w)}, {}, error));
    ASSERT_TRUE(
        writeNpz(path("in.npz"), {{"x", floats({2, 3}, {1, -2, 3, -4, 5, -6})}}, false, error));
  }
  void TearDown() override { std::system(("rm -rf '" + directory + "'").c_str()); }

  std::string path(const std::string &name) const { return directory + "/" + name; }

  /// Runs the plain runner on `plan` in a 2 GB address space; returns the exit status.
  int runPlan(const PlanBuilder &plan, std::string &output) {
    std::string error;
    EXPECT_TRUE(writeFileAtomically(path("p.plan"), {plan.bytes()}, 0644, error)) << error;
    std::string command = "bash -c 'ulimit -v 2000000 && exec timeout 30 " +
                          std::string(MEMC_RUNNER_PATH) + " --plan " + path("p.plan") +
                          " --weights " + path("w.safetensors") + " --inputs " + path("in.npz") +
                          "' 2>&1";
    output.clear();
    FILE *pipe = popen(command.c_str(), "r");
    char chunk[4096];
    size_t got;
    while (pipe && (got = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
      output.append(chunk, got);
    int status = pipe ? pclose(pipe) : -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string directory;
};

TEST_F(HostilePlanTest, AParameterMissingFromTheWeightsIsRefusedBeforeAllocating) {
  std::string output;
  EXPECT_EQ(runPlan(planWithABigParameter(), output), 1) << output;
  EXPECT_NE(output.find("the weights do not match the program's parameters:"), std::string::npos)
      << output;
  EXPECT_NE(output.find("parameter 'big': missing, expected f32 [1073741824]"), std::string::npos)
      << output;
}

TEST_F(HostilePlanTest, PersistentBytesNoBufferReachesAreRefused) {
  PlanBuilder plan = planWithABigParameter();
  plan.plan.mutable_parameters()->RemoveLast(); // `big` is just a buffer now
  plan.plan.mutable_buffers(2)->set_size_bytes(4);
  plan.plan.mutable_buffers(2)->clear_shape();
  std::string output;
  EXPECT_EQ(runPlan(plan, output), 1) << output;
  EXPECT_NE(output.find("plan: persistent region of 4294967552 bytes, but its buffers reach "
                        "only 260 (rounded up to the alignment, 512)"),
            std::string::npos)
      << output;
  // The same plan declaring what its buffers reach runs.
  plan.plan.set_persistent_bytes(512);
  EXPECT_EQ(runPlan(plan, output), 0) << output;
}

} // namespace
