//===- RunnerTest.cpp - memc-runner end to end ----------------------------===//
//
// Runs the built memc-runner, plain and as a bundled program, on a plan that only needs "add"
// and "relu" (kernels every CPU backend has): y = relu(x + w), relu in place.
//
//===----------------------------------------------------------------------===//
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"

#include "HostArrays.h"
#include "PlanBuilder.h"

#include <cstring>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace memc;
using namespace memc::runtime;
using memc::testing::addReluPlan;
using memc::testing::PlanBuilder;

using memc::testing::floats;

namespace {

struct Result {
  int status;
  std::string output;
};

class RunnerTest : public ::testing::Test {
protected:
  std::string directory;

  void SetUp() override {
    directory = ::testing::TempDir() + "/runner_test_" + std::to_string(getpid());
    mkdir(directory.c_str(), 0755);
    std::string error;
    ASSERT_TRUE(writeFileAtomically(path("tiny.plan"), {addReluPlan().bytes()}, 0644, error));
    HostArray w = floats({2, 3}, {1, 1, 1, -1, -1, -1});
    ASSERT_TRUE(writeSafetensors(path("tiny.safetensors"), {tensorRef("w", w)}, {}, error));
    ASSERT_TRUE(writeNpz(path("in.npz"), {{"x", floats({2, 3}, {1, -2, 3, -4, 5, -6})}}, false,
                         error));
  }
  void TearDown() override { std::system(("rm -rf '" + directory + "'").c_str()); }

  std::string path(const std::string &name) const { return directory + "/" + name; }

  static Result run(const std::string &command) {
    Result result{-1, ""};
    FILE *pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe)
      return result;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
      result.output.append(chunk, got);
    int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }

  std::string plainRunner(const std::string &arguments) const {
    return std::string(MEMC_RUNNER_PATH) + " --plan " + path("tiny.plan") + " --weights " +
           path("tiny.safetensors") + " " + arguments;
  }

  void expectOutputs(const std::string &file) {
    NamedArrays outputs;
    std::string error;
    ASSERT_TRUE(readNpz(file, outputs, error)) << error;
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].first, "y");
    EXPECT_EQ(outputs[0].second.shape, (std::vector<int64_t>{2, 3}));
    std::vector<float> values(6);
    std::memcpy(values.data(), outputs[0].second.bytes.data(), 24);
    EXPECT_EQ(values, (std::vector<float>{2, 0, 4, 0, 4, 0}));
  }

  /// The plain runner on the inputs in file `inputs`: it succeeds, writes the expected outputs
  /// and says `message`.
  void expectPlainRunSaying(const std::string &inputs, const std::string &message) {
    Result result = run(plainRunner("--inputs " + path(inputs) + " --outputs " + path("out.npz")));
    ASSERT_EQ(result.status, 0) << result.output;
    expectOutputs(path("out.npz"));
    EXPECT_NE(result.output.find(message), std::string::npos) << result.output;
  }

  std::string bundle() {
    std::string error;
    EXPECT_TRUE(writeBundle(
        MEMC_RUNNER_PATH, path("tiny"), addReluPlan().bytes(),
        [&] {
          std::string bytes;
          readFile(path("tiny.safetensors"), bytes, error);
          return bytes;
        }(),
        error))
        << error;
    return path("tiny");
  }
};

TEST_F(RunnerTest, RunsAPlanFromFiles) {
  expectPlainRunSaying("in.npz", "memc-runner: tiny: arena 512 B planned (high-water 280 B, peak "
                                 "live 48 B, lower bound 48 B)");
}

TEST_F(RunnerTest, RunsABundledProgram) {
  std::string program = bundle();
  Result result = run(program + " --inputs " + path("in.npz") + " --outputs=" + path("out.npz") +
                      " --device cpu --stats");
  ASSERT_EQ(result.status, 0) << result.output;
  expectOutputs(path("out.npz"));
  EXPECT_NE(result.output.find("tiny: tiny: arena"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("slowest steps:"), std::string::npos) << result.output;

  result = run(program + " --plan " + path("tiny.plan") + " --inputs " + path("in.npz"));
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("carries its plan and weights"), std::string::npos)
      << result.output;
}

TEST_F(RunnerTest, RefusesTruncatedPrograms) {
  std::string program = bundle();
  struct stat info;
  ASSERT_EQ(stat(program.c_str(), &info), 0);
  ASSERT_EQ(truncate(program.c_str(), info.st_size - 10), 0);
  Result result = run(program + " --inputs " + path("in.npz"));
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("truncated or corrupted"), std::string::npos) << result.output;
}

TEST_F(RunnerTest, NamesEveryInputProblem) {
  std::string error;
  HostArray wrongDtype = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  wrongDtype.dtype = DType::I32;
  ASSERT_TRUE(writeNpz(path("bad.npz"), {{"bogus", floats({1}, {1})}, {"extra", floats({1}, {1})}},
                       false, error));
  Result result = run(plainRunner("--inputs " + path("bad.npz")));
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("input 'x' is missing (expected f32 [2, 3])"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("'bogus' is not an input"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("'extra' is not an input"), std::string::npos) << result.output;

  ASSERT_TRUE(writeNpz(path("wrong.npz"), {{"x", wrongDtype}}, false, error));
  result = run(plainRunner("--inputs " + path("wrong.npz")));
  EXPECT_EQ(result.status, 1);
  EXPECT_NE(result.output.find("expected f32 [2, 3], given i32 [2, 3]"), std::string::npos)
      << result.output;
}

TEST_F(RunnerTest, ReportsBadFilesAndArguments) {
  std::string plan = addReluPlan().bytes();
  std::string error;
  ASSERT_TRUE(writeFileAtomically(path("cut.plan"), {plan.substr(0, plan.size() / 2)}, 0644,
                                  error));
  PlanBuilder future = addReluPlan();
  future.plan.set_format_version(plan::kPlanFormatVersion + 1);
  ASSERT_TRUE(writeFileAtomically(path("future.plan"), {future.bytes()}, 0644, error));
  ASSERT_TRUE(writeFileAtomically(path("bad.safetensors"), {std::string_view("\x10\0\0\0\0\0\0\0{}", 10)}, 0644,
                                  error));
  std::string runner = MEMC_RUNNER_PATH;
  std::string in = " --inputs " + path("in.npz");
  struct Case {
    std::string command;
    std::string message;
  } cases[] = {
      {runner + " --plan " + path("cut.plan") + " --weights " + path("tiny.safetensors") + in,
       "cut.plan: plan:"},
      {runner + " --plan " + path("future.plan") + " --weights " + path("tiny.safetensors") + in,
       "format version " + std::to_string(plan::kPlanFormatVersion + 1) + " is not supported: "
       "this runtime reads format version " + std::to_string(plan::kPlanFormatVersion)},
      {runner + " --plan " + path("tiny.plan") + " --weights " + path("bad.safetensors") + in,
       "bad.safetensors: safetensors: header length 16 exceeds"},
      {runner + " --plan " + path("tiny.plan") + in, "pass their values with --weights"},
      {plainRunner(in + " --outputs /nonexistent/dir/out.npz"), "/nonexistent/dir"},
      {plainRunner(in + " --device tpu"), "unknown device 'tpu' (this build has: cpu"},
      {plainRunner("--inputs " + path("missing.npz")), "missing.npz"},
      {plainRunner(in + " --frobnicate"), "unknown argument '--frobnicate'"},
      {plainRunner(in + " --inputs"), "--inputs needs a value"},
      {runner + in, "no plan"},
  };
  for (const Case &c : cases) {
    Result result = run(c.command);
    EXPECT_EQ(result.status, 1) << c.command << "\n" << result.output;
    EXPECT_NE(result.output.find(c.message), std::string::npos)
        << "expected '" << c.message << "', got: " << result.output;
  }
}

// numpy's default float is float64: data for an f32 input converts, with a note naming the array.
TEST_F(RunnerTest, ConvertsFloat64InputsWithANote) {
  std::string error;
  ASSERT_TRUE(memc::testing::writeNpzWithFloat64(
      path("in64.npz"), {{"x", floats({2, 3}, {1, -2, 3, -4, 5, -6})}}, {"x"}, error))
      << error;
  expectPlainRunSaying("in64.npz", "memc-runner: note: 'x' is float64 data; memc converts it to "
                                   "float32, the type the model takes");
}

TEST_F(RunnerTest, PrintsMemcsVersion) {
  for (const std::string &program : {std::string(MEMC_RUNNER_PATH), bundle()}) {
    Result result = run(program + " --version");
    EXPECT_EQ(result.status, 0) << result.output;
    std::string name = program.substr(program.rfind('/') + 1);
    // "NAME (memc 0.1.0, revision 1adf62344588)": memc's, not LLVM's.
    EXPECT_EQ(result.output.rfind(name + " (memc ", 0), 0u) << result.output;
    EXPECT_NE(result.output.find(", revision "), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("LLVM"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("\ndevices: cpu\n"), std::string::npos) << result.output;
  }
}

TEST_F(RunnerTest, PrintsUsage) {
  Result result = run(std::string(MEMC_RUNNER_PATH) + " --help");
  EXPECT_EQ(result.status, 0);
  EXPECT_NE(result.output.find("--plan PLAN"), std::string::npos) << result.output;
}

} // namespace
