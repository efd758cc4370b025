//===- PipelinedTrainingTest.cpp - the training loop on an asynchronous device ===//
//
// A program's plan given staging buffers (runtime/plan/InputStaging.h), trained on QueuedDevice
// (test/support/QueuedDevice.h: the CPU kernels, each stream's work run as late as it may be, the
// compute stream or the copies), must log what the CPU device's run of the plain plan logs, loss
// for loss, and write the same checkpoints: through gradient accumulation (several runs per step
// in flight), evaluation and checkpoints (which collect every run in flight first).
//
//===----------------------------------------------------------------------===//
#include "TrainingTestSupport.h"

#include "kernels/cpu/CpuKernels.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Files.h"
#include "runtime/plan/InputStaging.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/train/TrainingLoop.h"
#include "test/support/QueuedDevice.h"

#include <gtest/gtest.h>
#include <regex>

using namespace memc;
using namespace memc::runtime;
using namespace memc::test;
using memc::testing::QueuedDevice;

namespace {

/// The log's lines without what may differ between devices: the time and the peak (the staging
/// buffers are persistent bytes).
std::vector<std::string> logLines(const std::string &path) {
  std::string text, error;
  EXPECT_TRUE(readFile(path, text, error)) << error;
  std::vector<std::string> lines;
  static const std::regex timeAndPeak(R"("ms": [^,]*, "peak_bytes": [0-9]*)");
  size_t start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(std::regex_replace(text.substr(start, end - start), timeAndPeak, ""));
  return lines;
}

/// Every tensor of a checkpoint, by name.
std::map<std::string, std::string> checkpointTensors(const std::string &dir) {
  SafetensorsFile file;
  std::string error;
  EXPECT_TRUE(file.open(dir + "/checkpoint.safetensors", error)) << error;
  std::map<std::string, std::string> tensors;
  for (const SafetensorsTensor &tensor : file.tensors())
    tensors[tensor.name] = std::string(tensor.bytes.begin(), tensor.bytes.end());
  return tensors;
}

/// `fixture` compiled with `flags`, trained on `data` for 5 steps.
void trainsAsTheCpuDoes(const std::string &model, const std::vector<std::string> &flags,
                        const std::string &data) {
  const std::string dir = scratchDirectory(), program = dir + "/train";
  std::string output;
  ASSERT_EQ(run(memcCommand(model, flags, program), dir, output), 0) << output;
  Bundle bundle;
  std::string error;
  ASSERT_EQ(readBundle(program, bundle, error), BundleStatus::Found) << error;
  plan::Plan plain;
  ASSERT_TRUE(plain.ParseFromArray(bundle.plan.data(), static_cast<int>(bundle.plan.size())));
  SafetensorsFile weights;
  ASSERT_TRUE(weights.parse(bundle.weights, error)) << error;
  plan::Plan staged = plain;
  plan::addInputStaging(staged);

  auto train = [&](const plan::Plan &plan, Device &device, const std::string &name) {
    TrainingOptions options;
    options.dataPath = options.evalDataPath.emplace(data);
    options.steps = 5;
    options.evalEvery = 2;
    options.checkpointDir = dir + "/" + name;
    options.checkpointEvery = 3;
    options.logPath = dir + "/" + name + ".jsonl";
    options.note = [](const std::string &) {};
    std::string failure;
    EXPECT_TRUE(runTraining(plan, weights, device, options, failure)) << name << ": " << failure;
  };
  CpuDevice cpu(kernels::cpuKernels());
  train(plain, cpu, "cpu");
  const std::vector<std::string> expected = logLines(dir + "/cpu.jsonl");
  ASSERT_EQ(expected.size(), 5u);
  for (auto [late, name] : {std::pair{QueuedDevice::Late::Compute, "compute-late"},
                            std::pair{QueuedDevice::Late::Copies, "copies-late"}}) {
    QueuedDevice queued(kernels::cpuKernels(), late);
    train(staged, queued, name);
    EXPECT_EQ(logLines(dir + "/" + name + ".jsonl"), expected) << name;
    EXPECT_EQ(checkpointTensors(dir + "/" + name), checkpointTensors(dir + "/cpu")) << name;
  }
}

TEST(PipelinedTrainingTest, AccumulatingMlpTrainsAsOnTheCpu) {
  trainsAsTheCpuDoes("mlp",
                     {"--loss", "cross_entropy", "--optimizer", "adamw", "--grad-accum", "2"},
                     kData + "/mlp.data.npz");
}

TEST(PipelinedTrainingTest, Gpt2TrainsAsOnTheCpu) {
  trainsAsTheCpuDoes(
      "gpt2", {"--loss", "cross_entropy", "--optimizer", "adamw", "--freeze", "h.*.attn.bias"},
      kData + "/gpt2.data.npz");
}

} // namespace
