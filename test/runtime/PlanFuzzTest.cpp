//===- PlanFuzzTest.cpp - damaged plans fail cleanly or run safely --------===//
//
// Truncates and bit-flips a valid plan. Every variant must either be refused with a message or
// pass validation; variants that pass are executed (when small enough to allocate), which is the
// real test of the validator: whatever it accepts must be safe to run.
//
//===----------------------------------------------------------------------===//
#include "runtime/device/cpu/CpuDevice.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/PlanLoader.h"

#include "PlanBuilder.h"
#include "TestKernels.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <random>
#include <set>

using namespace memc;
using namespace memc::runtime;
using memc::testing::referencePlan;
using memc::testing::testDevice;
using memc::testing::testKernels;

namespace {

/// Runs an accepted plan on zero inputs and parameters: every step of it must succeed.
void runAccepted(std::unique_ptr<LoadedPlan> plan) {
  if (plan->arenaBytes + plan->persistentBytes > (1u << 20))
    return;
  NamedArrays inputs;
  for (const PlanBinding &input : plan->inputs) {
    const PlanBuffer &buffer = plan->buffers[input.buffer];
    HostArray array;
    array.dtype = buffer.dtype;
    array.shape = buffer.shape;
    array.bytes.assign(buffer.size, 0);
    inputs.emplace_back(input.name, std::move(array));
  }
  std::vector<HostArray> parameterArrays;
  std::set<std::string> sources;
  for (const PlanBinding &parameter : plan->parameters) {
    const PlanBuffer &buffer = plan->buffers[parameter.buffer];
    if (!sources.insert(parameter.source).second)
      return; // two parameters from one source, perhaps of different shapes: skip
    parameterArrays.push_back({buffer.dtype, buffer.shape, std::vector<uint8_t>(buffer.size)});
  }
  std::vector<TensorRef> parameters;
  for (size_t i = 0; i < plan->parameters.size(); ++i)
    parameters.push_back(tensorRef(plan->parameters[i].source, parameterArrays[i]));
  std::string weightBytes, error;
  ASSERT_TRUE(serializeSafetensors(parameters, {}, weightBytes, error)) << error;
  SafetensorsFile weights;
  ASSERT_TRUE(weights.parse(weightBytes, error)) << error;

  CpuDevice device(testKernels());
  std::unique_ptr<Executor> executor =
      Executor::create(std::move(plan), device, ExecutorOptions(), error);
  ASSERT_TRUE(executor) << error;
  NamedArrays outputs;
  EXPECT_TRUE(executor->loadParameters(weights, error)) << error;
  EXPECT_TRUE(executor->bindInputs(inputs, error)) << error;
  EXPECT_TRUE(executor->run(error)) << error;
  EXPECT_TRUE(executor->readOutputs(outputs, error)) << error;
  EXPECT_LE(executor->stats().arenaHighWaterBytes, executor->stats().arenaBytes);
}

/// Loads `bytes`, runs them if accepted; returns whether they were.
bool check(std::string_view bytes) {
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(bytes, testDevice(), error);
  if (!plan) {
    EXPECT_FALSE(error.empty());
    return false;
  }
  runAccepted(std::move(plan));
  return true;
}

/// The plans fuzzed: the reference plan and one with a view.
class PlanFuzzTest : public ::testing::TestWithParam<memc::testing::PlanBuilder (*)()> {};

TEST_P(PlanFuzzTest, Truncations) {
  std::string bytes = GetParam()().bytes();
  for (size_t size = 0; size < bytes.size(); ++size)
    check(std::string_view(bytes).substr(0, size));
}

TEST_P(PlanFuzzTest, SingleBitFlips) {
  std::string bytes = GetParam()().bytes();
  size_t accepted = 0;
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string flipped = bytes;
    flipped[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    accepted += check(flipped);
  }
  // Flips in names, locations, constants and spare sizes leave valid plans: those ran.
  EXPECT_GT(accepted, 0u);
  std::printf("%zu of %zu single-bit flips were valid plans and ran\n", accepted,
              bytes.size() * 8);
}

TEST_P(PlanFuzzTest, RandomCorruptions) {
  std::string bytes = GetParam()().bytes();
  std::mt19937 random(1234);
  for (int round = 0; round < 20000; ++round) {
    std::string damaged = bytes;
    int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = random() % damaged.size();
      switch (random() % 3) {
      case 0:
        damaged[at] = static_cast<char>(random());
        break;
      case 1:
        damaged.erase(at, 1 + random() % 4);
        break;
      default:
        damaged.insert(at, 1, static_cast<char>(random()));
        break;
      }
      if (damaged.empty())
        break;
    }
    check(damaged);
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, PlanFuzzTest,
                         ::testing::Values(&memc::testing::referencePlan,
                                           &memc::testing::viewPlan));

} // namespace
