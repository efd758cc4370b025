//===- InferenceTest.cpp - compiled programs reproduce PyTorch's outputs ---===//
//
// For each PyTorch-exported fixture: `memc --mode=infer` builds an executable, the executable
// runs on the fixture's recorded input, and its outputs must match the outputs PyTorch recorded
// (test/fixtures/*.io.npz) within 1e-5 absolute + 1e-4 relative. Also checks that the program
// stays inside its planned arena and refuses bad inputs with exit code 1.
//
//===----------------------------------------------------------------------===//
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Npz.h"
#include "runtime/plan/Plan.pb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace memc::runtime;

namespace {

const std::string kFixtures = MEMC_FIXTURES_DIR;
const std::string kBin = MEMC_BIN_DIR;

/// Runs a shell command; returns its exit status and fills `output` with stdout+stderr. The log
/// file is the running test's own: ctest runs tests in parallel.
int run(const std::string &command, std::string &output) {
  const testing::TestInfo *test = testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  std::replace(name.begin(), name.end(), '/', '_');
  std::string log = testing::TempDir() + "/e2e_" + name + ".log";
  int status = std::system((command + " >" + log + " 2>&1").c_str());
  std::ifstream in(log);
  output.assign(std::istreambuf_iterator<char>(in), {});
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const HostArray *find(const NamedArrays &arrays, const std::string &name) {
  for (const auto &[key, array] : arrays)
    if (key == name)
      return &array;
  return nullptr;
}

struct Fixture {
  const char *model;
  const char *input;
  const char *output;
};

class InferenceTest : public testing::TestWithParam<Fixture> {};

TEST_P(InferenceTest, MatchesPyTorch) {
  const Fixture &fixture = GetParam();
  std::string dir = testing::TempDir(), error, output;
  std::string program = dir + "/" + fixture.model + ".run";
  ASSERT_EQ(
      run(kBin + "/memc --mode=infer " + kFixtures + "/" + fixture.model + ".onnx -o " + program,
          output),
      0)
      << output;

  NamedArrays recorded, inputs, outputs;
  ASSERT_TRUE(readNpz(kFixtures + "/" + fixture.model + ".io.npz", recorded, error)) << error;
  const HostArray *input = find(recorded, fixture.input);
  const HostArray *expected = find(recorded, fixture.output);
  ASSERT_TRUE(input && expected);
  inputs.emplace_back(fixture.input, *input);
  std::string inputPath = dir + "/" + fixture.model + ".in.npz";
  std::string outputPath = dir + "/" + fixture.model + ".out.npz";
  ASSERT_TRUE(writeNpz(inputPath, inputs, /*compress=*/false, error)) << error;
  ASSERT_EQ(run(program + " --inputs " + inputPath + " --outputs " + outputPath, output), 0)
      << output;
  EXPECT_NE(output.find("high-water"), std::string::npos) << output;

  ASSERT_TRUE(readNpz(outputPath, outputs, error)) << error;
  const HostArray *actual = find(outputs, fixture.output);
  ASSERT_TRUE(actual);
  ASSERT_EQ(actual->shape, expected->shape);
  ASSERT_EQ(actual->dtype, expected->dtype);
  size_t count = actual->bytes.size() / sizeof(float);
  for (size_t i = 0; i < count; ++i) {
    float a = actual->as<float>()[i], e = expected->as<float>()[i];
    ASSERT_LE(std::abs(a - e), 1e-5 + 1e-4 * std::abs(e)) << "element " << i;
  }
}

// Kernel scratch is planned: the ResNet's convolutions get arena workspace buffers, live at
// their step, which the runner allocates as part of the arena.
TEST(InferenceWorkspaceTest, ConvolutionStepsHaveWorkspace) {
  std::string program = testing::TempDir() + "/resnet_workspace.run", output, error;
  ASSERT_EQ(run(kBin + "/memc --mode=infer " + kFixtures + "/resnet.onnx -o " + program, output), 0)
      << output;
  Bundle bundle;
  ASSERT_EQ(readBundle(program, bundle, error), BundleStatus::Found) << error;
  memc::plan::Plan plan;
  ASSERT_TRUE(plan.ParseFromArray(bundle.plan.data(), static_cast<int>(bundle.plan.size())));
  int convSteps = 0;
  for (const memc::plan::Step &step : plan.steps()) {
    if (step.kernel() != "conv")
      continue;
    ++convSteps;
    ASSERT_TRUE(step.has_workspace()) << step.location();
    const memc::plan::Buffer &workspace = plan.buffers(static_cast<int>(step.workspace()));
    EXPECT_EQ(workspace.region(), memc::plan::ARENA);
    EXPECT_GT(workspace.size_bytes(), 0u);
    EXPECT_LE(workspace.offset() + workspace.size_bytes(), plan.arena_bytes());
    EXPECT_EQ(workspace.name(), step.location() + ".workspace");
  }
  EXPECT_GT(convSteps, 0);
}

// The plan records the target its workspaces were sized for; the CPU runner loads only those.
TEST(InferenceTargetTest, ProgramsAreCompiledForTheCpuTarget) {
  std::string program = testing::TempDir() + "/mlp_target.run", output, error;
  ASSERT_EQ(run(kBin + "/memc --mode=infer " + kFixtures + "/mlp.onnx -o " + program, output), 0)
      << output;
  Bundle bundle;
  ASSERT_EQ(readBundle(program, bundle, error), BundleStatus::Found) << error;
  memc::plan::Plan plan;
  ASSERT_TRUE(plan.ParseFromArray(bundle.plan.data(), static_cast<int>(bundle.plan.size())));
  EXPECT_EQ(plan.target(), "cpu");
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, InferenceTest,
    testing::Values(Fixture{"mlp", "input", "output"}, Fixture{"resnet", "input", "logits"},
                    Fixture{"resnet_bn", "input", "logits"}, Fixture{"gpt2", "input_ids", "logits"},
                    Fixture{"bert", "input_ids", "logits"},
                    Fixture{"llama", "input_ids", "logits"},
                    Fixture{"mobilenet", "input", "logits"},
                    Fixture{"unet", "input", "logits"},
                    Fixture{"lstm_lm", "input_ids", "logits"},
                    Fixture{"gru_lm", "input_ids", "logits"},
                    Fixture{"llama_rope", "input_ids", "logits"},
                    Fixture{"vit", "input", "logits"},
                    Fixture{"embedding_bag", "input_ids", "logits"},
                    Fixture{"bert_padded", "input_ids", "logits"},
                    Fixture{"attention_gqa_tile", "x", "y"},
                    Fixture{"attention_causal_buffer", "x", "y"},
                    Fixture{"attention_additive_mask", "x", "y"}),
    [](const testing::TestParamInfo<Fixture> &info) { return std::string(info.param.model); });

TEST(InferenceErrors, WrongInputsAreRefusedWithExitCode1) {
  std::string dir = testing::TempDir(), error, output;
  std::string program = dir + "/mlp_errors.run";
  ASSERT_EQ(run(kBin + "/memc --mode=infer " + kFixtures + "/mlp.onnx -o " + program, output), 0)
      << output;
  auto write = [&](const std::string &name, HostArray array) {
    NamedArrays arrays;
    arrays.emplace_back(name, std::move(array));
    std::string path = dir + "/bad_" + name + ".npz";
    EXPECT_TRUE(writeNpz(path, arrays, false, error)) << error;
    return path;
  };
  HostArray wrongShape{DType::F32, {4, 17}, std::vector<uint8_t>(4 * 17 * 4)};
  EXPECT_EQ(run(program + " --inputs " + write("input", wrongShape), output), 1);
  EXPECT_NE(output.find("input"), std::string::npos) << output;
  HostArray wrongType{DType::I64, {4, 16}, std::vector<uint8_t>(4 * 16 * 8)};
  EXPECT_EQ(run(program + " --inputs " + write("input", wrongType), output), 1) << output;
  HostArray right{DType::F32, {4, 16}, std::vector<uint8_t>(4 * 16 * 4)};
  EXPECT_EQ(run(program + " --inputs " + write("wrong_name", right), output), 1) << output;
  EXPECT_NE(output.find("wrong_name"), std::string::npos) << output;
  // A truncated program: the bundle's footer is gone.
  std::string truncated = dir + "/mlp_truncated.run";
  ASSERT_EQ(
      run("head -c -100 " + program + " > " + truncated + " && chmod +x " + truncated, output), 0);
  EXPECT_EQ(run(truncated + " --inputs " + write("input", right), output), 1) << output;
}

} // namespace
