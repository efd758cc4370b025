//===- ProgramIntegrityTest.cpp - damaged programs are refused ------------===//
//
// The reproducers of issue 11's integrity findings, against real compiled programs: one flipped
// byte used to zero a bias or switch GELU's approximation with exit code 0, and a flipped byte
// in the embedded ONNX template wrote an unreadable --save model with exit code 0. Each is now
// an error naming the damaged section (exit code 1), and a program of an older memc is refused
// with a request to compile it again.
//
//===----------------------------------------------------------------------===//
#include "TrainingTestSupport.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Files.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/support/Bytes.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace memc::runtime;
using namespace memc::test;

namespace {

class ProgramIntegrity : public testing::Test {
protected:
  void SetUp() override { dir = scratchDirectory(); }

  /// Compiles FIXTURE.onnx with `flags` into dir/program and reads it into `bytes`, with the
  /// byte offsets of its plan and weights.
  void compile(const std::string &fixture, const std::vector<std::string> &flags) {
    ASSERT_EQ(run(memcCommand(fixture, flags, program()), dir, output), 0) << output;
    Bundle bundle;
    ASSERT_EQ(readBundle(program(), bundle, error), BundleStatus::Found) << error;
    const char *start = bundle.file->bytes().data();
    planAt = static_cast<size_t>(bundle.plan.data() - start);
    weightsAt = static_cast<size_t>(bundle.weights.data() - start);
    plan = std::string(bundle.plan);
    weights = std::string(bundle.weights);
    bytes = std::string(bundle.file->bytes());
  }
  /// Writes `changed` as the program (executable).
  void damage(const std::string &changed) {
    ASSERT_TRUE(writeFileAtomically(program(), {changed}, 0755, error)) << error;
  }
  /// Runs the program on the fixture's recorded inputs.
  int infer(const std::string &fixture, const std::string &input) {
    NamedArrays recorded, inputs;
    EXPECT_TRUE(readNpz(kFixtures + "/" + fixture + ".io.npz", recorded, error)) << error;
    for (auto &[name, array] : recorded)
      if (name == input)
        inputs.emplace_back(name, array);
    EXPECT_TRUE(writeNpz(dir + "/inputs.npz", inputs, /*compress=*/false, error)) << error;
    return run(program() + " --inputs " + dir + "/inputs.npz --outputs " + dir + "/outputs.npz",
               dir, output);
  }
  void expectRefused(const std::string &section) {
    EXPECT_NE(output.find("error: " + program() + ": section '" + section +
                          "' is corrupted (checksum mismatch)"),
              std::string::npos)
        << output;
    EXPECT_FALSE(std::filesystem::exists(dir + "/outputs.npz"));
  }
  std::string program() const { return dir + "/program"; }

  std::string dir, output, error, plan, weights, bytes;
  size_t planAt = 0, weightsAt = 0;
};

TEST_F(ProgramIntegrity, ZeroedBiasIsRefused) {
  compile("mlp", {"--mode=infer"});
  SafetensorsFile file;
  ASSERT_TRUE(file.parse(weights, error)) << error;
  const SafetensorsTensor *bias = nullptr;
  for (const SafetensorsTensor &tensor : file.tensors())
    if (tensor.name.size() > 4 && tensor.name.substr(tensor.name.size() - 4) == "bias")
      bias = &tensor;
  ASSERT_TRUE(bias);
  size_t at = weightsAt + static_cast<size_t>(bias->bytes.data() - weights.data());
  std::string changed = bytes;
  changed.replace(at, 4, std::string(4, '\0')); // its first element becomes 0.0
  ASSERT_NE(changed, bytes);
  damage(changed);
  EXPECT_EQ(infer("mlp", "input"), 1) << output;
  expectRefused("weights");
}

TEST_F(ProgramIntegrity, SwitchedGeluApproximationIsRefused) {
  compile("gpt2", {"--mode=infer"});
  memc::plan::Plan parsed;
  ASSERT_TRUE(parsed.ParseFromString(plan));
  bool tanhGelu = false;
  for (const memc::plan::Step &step : parsed.steps())
    for (const memc::plan::Attribute &attribute : step.attributes())
      tanhGelu |= step.kernel() == "bias_gelu" && attribute.name() == "approximate" &&
                  attribute.s() == "tanh";
  ASSERT_TRUE(tanhGelu) << "gpt2's GELU (fused with its bias add) is the tanh approximation";
  size_t at = plan.find("tanh");
  ASSERT_NE(at, std::string::npos);
  std::string changed = bytes;
  changed.replace(planAt + at, 4, "none"); // a valid plan that computes exact GELU
  damage(changed);
  EXPECT_EQ(infer("gpt2", "input_ids"), 1) << output;
  expectRefused("plan");
}

TEST_F(ProgramIntegrity, DamagedOnnxTemplateIsRefusedBeforeSaving) {
  compile("mlp", {"--loss", "cross_entropy"});
  memc::plan::Plan parsed;
  ASSERT_TRUE(parsed.ParseFromString(plan));
  const std::string &onnxTemplate = parsed.training().onnx_template();
  ASSERT_FALSE(onnxTemplate.empty());
  size_t at = plan.find(onnxTemplate);
  ASSERT_NE(at, std::string::npos);
  std::string changed = bytes;
  changed[planAt + at + onnxTemplate.size() / 2] ^= 0x40;
  damage(changed);
  EXPECT_EQ(run(program() + " --data " + kData + "/mlp.data.npz --steps 2 --save " + dir +
                    "/trained.onnx",
                dir, output),
            1)
      << output;
  expectRefused("plan");
  EXPECT_FALSE(std::filesystem::exists(dir + "/trained.onnx"));
}

// A program of memc before bundle version 2: the 44-byte footer started at the magic and held
// no checksums.
TEST_F(ProgramIntegrity, ProgramOfAnOlderMemcAsksToBeCompiledAgain) {
  compile("mlp", {"--mode=infer"});
  std::string old = bytes.substr(0, bytes.size() - kBundleFooterSize);
  old.append(kBundleMagic, sizeof(kBundleMagic));
  appendLittleEndian<uint32_t>(old, 1);
  for (uint64_t field : {planAt, plan.size(), weightsAt, weights.size()})
    appendLittleEndian<uint64_t>(old, field);
  damage(old);
  EXPECT_EQ(infer("mlp", "input"), 1) << output;
  EXPECT_NE(output.find("error: " + program() +
                        ": the program was compiled by an older memc (bundle version 1"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("compile it again"), std::string::npos) << output;
}

} // namespace
