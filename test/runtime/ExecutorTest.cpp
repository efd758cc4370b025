//===- ExecutorTest.cpp - running hand-built plans ------------------------===//
#include "runtime/exec/Executor.h"

#include "runtime/device/cpu/CpuDevice.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/InputStaging.h"
#include "runtime/plan/PlanLoader.h"

#include "HostArrays.h"
#include "PlanBuilder.h"
#include "TestKernels.h"
#include "test/support/QueuedDevice.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace memc;
using namespace memc::runtime;
using memc::testing::PlanBuilder;
using memc::testing::QueuedDevice;
using memc::testing::referencePlan;
using memc::testing::testKernels;

using memc::testing::floats;

namespace {

std::vector<float> valuesOf(const HostArray &array) {
  std::vector<float> values(array.bytes.size() / 4);
  std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
  return values;
}

/// y = x, failing on a negative element of x.
PlanBuilder positivePlan() {
  PlanBuilder b;
  b.plan.set_arena_bytes(512);
  uint32_t x = b.buffer({4}, plan::ARENA, 0, "x");
  uint32_t y = b.buffer({4}, plan::ARENA, 256, "y");
  b.step("positive", {x}, {y});
  b.input("x", x);
  b.output("y", y);
  return b;
}

class ExecutorTest : public ::testing::Test {
protected:
  CpuDevice device{testKernels()};
  std::string weightBytes;
  SafetensorsFile weights;

  /// Weights with the given tensors (all f32).
  void makeWeights(const std::vector<std::pair<std::string, HostArray>> &tensors) {
    std::vector<TensorRef> refs;
    for (const auto &[name, array] : tensors)
      refs.push_back(tensorRef(name, array));
    std::string error;
    ASSERT_TRUE(serializeSafetensors(refs, {}, weightBytes, error)) << error;
    ASSERT_TRUE(weights.parse(weightBytes, error)) << error;
  }

  std::unique_ptr<Executor> create(const PlanBuilder &builder, ExecutorOptions options = {}) {
    std::string error;
    std::unique_ptr<LoadedPlan> plan = loadPlan(builder.bytes(), device, error);
    EXPECT_TRUE(plan) << error;
    if (!plan)
      return nullptr;
    std::unique_ptr<Executor> executor = Executor::create(std::move(plan), device, options, error);
    EXPECT_TRUE(executor) << error;
    return executor;
  }

  /// Runs the executor on x and returns y.
  std::vector<float> runOn(Executor &executor, std::vector<float> x) {
    std::string error;
    NamedArrays outputs;
    EXPECT_TRUE(executor.bindInputs({{"x", floats({4}, x)}}, error)) << error;
    EXPECT_TRUE(executor.run(error)) << error;
    EXPECT_TRUE(executor.readOutputs(outputs, error)) << error;
    if (outputs.size() != 1)
      return {};
    EXPECT_EQ(outputs[0].first, "y");
    return valuesOf(outputs[0].second);
  }
};

TEST_F(ExecutorTest, RunsTheReferencePlan) {
  makeWeights({{"w.source", floats({4}, {0.5, 0.5, 0.5, 0.5})}});
  std::unique_ptr<Executor> executor = create(referencePlan());
  ASSERT_TRUE(executor);
  std::string error;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  // t = x + w; u = relu(t) in place; v = 2u over x's bytes; y = v + [1, 2, 3, 4] over u's.
  EXPECT_EQ(runOn(*executor, {1, -2, 3, -4}), (std::vector<float>{4, 2, 10, 4}));
  // Inputs are bound anew for each run; the arena's reuse does not leak between runs.
  EXPECT_EQ(runOn(*executor, {0, 1, 2, 3}), (std::vector<float>{2, 5, 8, 11}));
}

TEST_F(ExecutorTest, MeasuresTheArena) {
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}});
  std::unique_ptr<Executor> executor = create(referencePlan());
  ASSERT_TRUE(executor);
  std::string error;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  runOn(*executor, {1, 2, 3, 4});
  const ExecutionStats &stats = executor->stats();
  EXPECT_EQ(stats.arenaBytes, 512u);
  EXPECT_EQ(stats.persistentBytes, 256u);
  EXPECT_EQ(stats.constantBytes, 16u);
  EXPECT_EQ(stats.arenaLowerBoundBytes, 32u);
  // Two f32[4] values at most are live at once (x and t, v and y: relu's output takes over
  // t's bytes), and the values at offset 256 reach byte 272.
  EXPECT_EQ(stats.peakLiveArenaBytes, 32u);
  EXPECT_EQ(stats.arenaHighWaterBytes, 272u);
  EXPECT_EQ(stats.steps, 4u);
  EXPECT_TRUE(stats.stepSeconds.empty());
  EXPECT_NE(formatSummary(stats).find("high-water 272 B, peak live 32 B"), std::string::npos)
      << formatSummary(stats);
}

TEST_F(ExecutorTest, TimesStepsOnRequest) {
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}});
  ExecutorOptions options;
  options.timeSteps = true;
  std::unique_ptr<Executor> executor = create(referencePlan(), options);
  ASSERT_TRUE(executor);
  std::string error;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  runOn(*executor, {1, 2, 3, 4});
  EXPECT_EQ(executor->stats().stepSeconds.size(), 4u);
}

TEST_F(ExecutorTest, PeakCountsEveryLiveValue) {
  // Three values live at once in a 768-byte arena: a, b and c = a + b.
  PlanBuilder b;
  b.plan.set_arena_bytes(768);
  uint32_t x = b.buffer({8}, plan::ARENA, 0, "x");
  uint32_t a = b.buffer({8}, plan::ARENA, 256, "a");
  uint32_t c = b.buffer({8}, plan::ARENA, 512, "c");
  uint32_t y = b.buffer({8}, plan::ARENA, 256, "y");
  b.step("relu", {x}, {a});
  b.step("add", {x, a}, {c});
  b.step("relu", {c}, {y}, /*inPlace=*/false);
  b.input("x", x);
  b.output("y", y);
  // y reuses a's bytes: a dies at step 1, y is written at step 2.
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  std::string error;
  NamedArrays outputs;
  ASSERT_TRUE(executor->bindInputs({{"x", floats({8}, {1, -1, 2, -2, 3, -3, 4, -4})}}, error));
  ASSERT_TRUE(executor->run(error)) << error;
  ASSERT_TRUE(executor->readOutputs(outputs, error)) << error;
  EXPECT_EQ(valuesOf(outputs[0].second), (std::vector<float>{2, 0, 4, 0, 6, 0, 8, 0}));
  EXPECT_EQ(executor->stats().peakLiveArenaBytes, 96u);
  EXPECT_EQ(executor->stats().arenaHighWaterBytes, 544u);
}

TEST_F(ExecutorTest, ViewsReadTheBytesTheyView) {
  makeWeights({{"w", floats({4}, {10, 20, 30, 40})}});
  std::unique_ptr<Executor> executor = create(memc::testing::viewPlan());
  ASSERT_TRUE(executor);
  std::string error;
  NamedArrays outputs;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  ASSERT_TRUE(executor->bindInputs({{"x", floats({2, 2}, {1, -2, 3, -4})}}, error)) << error;
  ASSERT_TRUE(executor->run(error)) << error;
  ASSERT_TRUE(executor->readOutputs(outputs, error)) << error;
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(valuesOf(outputs[0].second), (std::vector<float>{11, 20, 33, 40}));
  EXPECT_EQ(outputs[1].first, "t_flat");
  EXPECT_EQ(outputs[1].second.shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(valuesOf(outputs[1].second), (std::vector<float>{1, 0, 3, 0}));
  // The view adds no bytes: x and t, then t and y.
  EXPECT_EQ(executor->stats().peakLiveArenaBytes, 32u);
  EXPECT_EQ(executor->stats().arenaHighWaterBytes, 272u);
}

TEST_F(ExecutorTest, PersistentStateSurvivesRuns) {
  // p += g each run, in place in the persistent region; p is also an output.
  PlanBuilder b;
  b.plan.set_arena_bytes(256);
  b.plan.set_persistent_bytes(256);
  uint32_t g = b.buffer({4}, plan::ARENA, 0, "g");
  uint32_t p = b.buffer({4}, plan::PERSISTENT, 0, "p");
  b.step("add", {p, g}, {p}, /*inPlace=*/true);
  b.input("x", g);
  b.parameter("p", p);
  b.output("y", p);
  makeWeights({{"p", floats({4}, {1, 1, 1, 1})}});
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  std::string error;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  EXPECT_EQ(runOn(*executor, {1, 2, 3, 4}), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(runOn(*executor, {1, 2, 3, 4}), (std::vector<float>{3, 5, 7, 9}));
}

TEST_F(ExecutorTest, InputErrorsNameEveryProblem) {
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}});
  PlanBuilder b = referencePlan();
  b.plan.set_arena_bytes(1024);
  b.input("x2", b.buffer({2, 2}, plan::ARENA, 512, "x2"));
  b.input("x3", b.buffer({3}, plan::ARENA, 768, "x3"));
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  HostArray wrongDtype = floats({2, 2}, {1, 2, 3, 4});
  wrongDtype.dtype = DType::I32;
  std::string error;
  EXPECT_FALSE(executor->bindInputs(
      {{"x2", wrongDtype}, {"x3", floats({4}, {1, 2, 3, 4})}, {"bogus", floats({1}, {1})}}, error));
  EXPECT_NE(error.find("input 'x' is missing (expected f32 [4])"), std::string::npos) << error;
  EXPECT_NE(error.find("input 'x2': expected f32 [2, 2], given i32 [2, 2]"), std::string::npos)
      << error;
  EXPECT_NE(error.find("input 'x3': expected f32 [3], given f32 [4]"), std::string::npos) << error;
  EXPECT_NE(error.find("'bogus' is not an input"), std::string::npos) << error;
}

TEST_F(ExecutorTest, ParameterErrorsNameEveryProblem) {
  PlanBuilder b = referencePlan();
  b.plan.set_persistent_bytes(768);
  b.parameter("bias", b.buffer({2}, plan::PERSISTENT, 256, "bias"));
  b.parameter("scale", b.buffer({2}, plan::PERSISTENT, 512, "scale"));
  HostArray wrongShape = floats({3}, {1, 2, 3});
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}, {"bias", wrongShape}});
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  std::string error;
  EXPECT_FALSE(executor->loadParameters(weights, error));
  EXPECT_NE(error.find("parameter 'bias': expected f32 [2], the weights have F32 [3]"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("parameter 'scale': missing, expected f32 [2]"), std::string::npos) << error;
  EXPECT_FALSE(executor->bindInputs({{"x", floats({4}, {1, 2, 3, 4})}}, error) &&
               executor->run(error));
  EXPECT_NE(error.find("parameters are not loaded"), std::string::npos) << error;
}

TEST_F(ExecutorTest, EnforcesTheRunProtocol) {
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}});
  std::unique_ptr<Executor> executor = create(referencePlan());
  ASSERT_TRUE(executor);
  std::string error;
  NamedArrays outputs;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  EXPECT_FALSE(executor->run(error));
  EXPECT_NE(error.find("inputs are not bound"), std::string::npos) << error;
  EXPECT_FALSE(executor->readOutputs(outputs, error));
  runOn(*executor, {1, 2, 3, 4});
  // A second run needs its inputs again: the first run reused their bytes.
  EXPECT_FALSE(executor->run(error));
  // New inputs may overwrite the outputs' bytes: outputs are gone.
  ASSERT_TRUE(executor->bindInputs({{"x", floats({4}, {1, 2, 3, 4})}}, error));
  EXPECT_FALSE(executor->readOutputs(outputs, error));
}

TEST_F(ExecutorTest, ReportsAKernelsDataDependentFailureWithItsStep) {
  PlanBuilder b = positivePlan();
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  std::string error;
  ASSERT_TRUE(executor->bindInputs({{"x", floats({4}, {1, -2, 3, 4})}}, error)) << error;
  EXPECT_FALSE(executor->run(error));
  EXPECT_EQ(error, "step 0 ('positive' from 'node0') failed: element 1 is negative");
  // The failure was taken from the stream's slot: the next run starts clean.
  EXPECT_EQ(runOn(*executor, {1, 2, 3, 4}), (std::vector<float>{1, 2, 3, 4}));
}

TEST_F(ExecutorTest, RefusesPlansLoadedForAnotherDevice) {
  kernels::KernelTable otherTable = testKernels();
  CpuDevice otherDevice(otherTable);
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(referencePlan().bytes(), otherDevice, error);
  ASSERT_TRUE(plan) << error;
  EXPECT_FALSE(Executor::create(std::move(plan), device, {}, error));
  EXPECT_NE(error.find("another device"), std::string::npos) << error;
}

TEST_F(ExecutorTest, ReportsAllocationFailure) {
  PlanBuilder b = referencePlan();
  b.plan.set_arena_bytes(uint64_t(1) << 62);
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(b.bytes(), device, error);
  ASSERT_TRUE(plan) << error;
  EXPECT_FALSE(Executor::create(std::move(plan), device, {}, error));
  EXPECT_NE(error.find("cannot allocate the arena"), std::string::npos) << error;
}

/// A device whose kernels report failures only when the stream synchronizes, as a GPU's do
/// (a DeviceErrorRecord in device code): step 2 fails, learnt at the end of the run.
class LateFailureDevice : public CpuDevice {
public:
  using CpuDevice::CpuDevice;
  std::unique_ptr<Stream> createStream(std::string &) override {
    return std::make_unique<LateStream>();
  }
  class LateStream : public Stream {
  public:
    bool synchronize(std::string &) override {
      if (context.step == 3 && !reported) {
        reported = true;
        context.errors.record("index 9 (at position 0) out of range for dimension 0 of size 4", 2);
      }
      return true;
    }
    bool reported = false;
  };
};

TEST_F(ExecutorTest, ALateFailureNamesItsStep) {
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}});
  LateFailureDevice late(testKernels());
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(referencePlan().bytes(), late, error);
  ASSERT_TRUE(plan) << error;
  std::unique_ptr<Executor> executor = Executor::create(std::move(plan), late, {}, error);
  ASSERT_TRUE(executor) << error;
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  ASSERT_TRUE(executor->bindInputs({{"x", floats({4}, {1, 2, 3, 4})}}, error)) << error;
  EXPECT_FALSE(executor->run(error));
  EXPECT_EQ(error, "step 2 ('scale' from 'node2') failed: index 9 (at position 0) out of range for "
                   "dimension 0 of size 4");
}

/// A device with less memory free than the reference plan's 512 + 256 + 16 bytes.
class SmallDevice : public CpuDevice {
public:
  using CpuDevice::CpuDevice;
  std::optional<uint64_t> freeBytes() const override { return 700; }
  DeviceProperties properties() const override { return {"a small device", 0, 1024}; }
};

TEST_F(ExecutorTest, RefusesAPlanLargerThanTheFreeDeviceMemory) {
  SmallDevice small(testKernels());
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(referencePlan().bytes(), small, error);
  ASSERT_TRUE(plan) << error;
  EXPECT_FALSE(Executor::create(std::move(plan), small, {}, error));
  EXPECT_EQ(error, "the plan needs 784 B of device memory (arena 512 B, persistent 256 B, "
                   "constants 16 B) but a small device has 700 B free (recompile with a "
                   "--vram-budget below that)");
}

/// Each x through submit and collect, as many runs in flight as the executor allows: the
/// outputs y in the order of the xs.
std::vector<std::vector<float>> pipelined(Executor &executor,
                                          const std::vector<std::vector<float>> &xs) {
  std::vector<std::vector<float>> ys;
  std::string error;
  auto collectOne = [&] {
    NamedArrays outputs;
    EXPECT_TRUE(executor.collect(outputs, error)) << error;
    ys.push_back(outputs.size() == 1 ? valuesOf(outputs[0].second) : std::vector<float>{});
  };
  for (const std::vector<float> &x : xs) {
    if (executor.runsInFlight() == executor.pipelineDepth())
      collectOne();
    EXPECT_TRUE(executor.submit({{"x", floats({4}, x)}}, error)) << error;
  }
  while (executor.runsInFlight() > 0)
    collectOne();
  return ys;
}

const std::vector<std::vector<float>> kManyXs = {
    {1, -2, 3, -4}, {0, 1, 2, 3}, {-1, -1, 5, 0.25}, {7, 6, -5, 4}, {2, 2, 2, 2}};

TEST_F(ExecutorTest, PipelinedRunsGiveEachRunsOutputs) {
  makeWeights({{"w.source", floats({4}, {0.5, 0.5, 0.5, 0.5})}});
  std::unique_ptr<Executor> one = create(referencePlan()), pipelinedOne = create(referencePlan());
  ASSERT_TRUE(one && pipelinedOne);
  std::string error;
  ASSERT_TRUE(one->loadParameters(weights, error)) << error;
  ASSERT_TRUE(pipelinedOne->loadParameters(weights, error)) << error;
  EXPECT_EQ(pipelinedOne->pipelineDepth(), 2u);
  std::vector<std::vector<float>> expected;
  for (const std::vector<float> &x : kManyXs)
    expected.push_back(runOn(*one, x));
  EXPECT_EQ(pipelined(*pipelinedOne, kManyXs), expected);
}

TEST_F(ExecutorTest, StagedInputsArriveInOrderWhicheverStreamRunsLate) {
  makeWeights({{"w.source", floats({4}, {0.5, 0.5, 0.5, 0.5})}});
  std::unique_ptr<Executor> one = create(referencePlan());
  ASSERT_TRUE(one);
  std::string error;
  ASSERT_TRUE(one->loadParameters(weights, error)) << error;
  std::vector<std::vector<float>> expected;
  for (const std::vector<float> &x : kManyXs)
    expected.push_back(runOn(*one, x));
  PlanBuilder staged = referencePlan();
  plan::addInputStaging(staged.plan);
  for (QueuedDevice::Late late : {QueuedDevice::Late::Compute, QueuedDevice::Late::Copies}) {
    QueuedDevice queued(testKernels(), late);
    std::unique_ptr<LoadedPlan> plan = loadPlan(staged.bytes(), queued, error);
    ASSERT_TRUE(plan) << error;
    std::unique_ptr<Executor> executor = Executor::create(std::move(plan), queued, {}, error);
    ASSERT_TRUE(executor) << error;
    ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
    EXPECT_EQ(pipelined(*executor, kManyXs), expected)
        << (late == QueuedDevice::Late::Compute ? "compute late" : "copies late");
  }
}

TEST_F(ExecutorTest, EnforcesThePipelineProtocol) {
  makeWeights({{"w.source", floats({4}, {0, 0, 0, 0})}});
  std::unique_ptr<Executor> executor = create(referencePlan());
  ASSERT_TRUE(executor);
  std::string error;
  NamedArrays outputs;
  EXPECT_FALSE(executor->submit({{"x", floats({4}, {1, 2, 3, 4})}}, error));
  EXPECT_EQ(error, "the parameters are not loaded");
  ASSERT_TRUE(executor->loadParameters(weights, error)) << error;
  EXPECT_FALSE(executor->collect(outputs, error));
  EXPECT_EQ(error, "no run to collect: submit one first");
  ASSERT_TRUE(executor->submit({{"x", floats({4}, {1, 2, 3, 4})}}, error)) << error;
  ASSERT_TRUE(executor->submit({{"x", floats({4}, {1, 2, 3, 4})}}, error)) << error;
  EXPECT_FALSE(executor->submit({{"x", floats({4}, {1, 2, 3, 4})}}, error));
  EXPECT_EQ(error, "already 2 runs in flight (collect one first)");
  // Whatever reads or writes the regions waits until the runs are collected.
  EXPECT_FALSE(executor->bindInputs({{"x", floats({4}, {1, 2, 3, 4})}}, error));
  EXPECT_EQ(error, "submitted runs are still in flight (collect them first)");
  EXPECT_FALSE(executor->readParameters(outputs, error));
  EXPECT_FALSE(executor->loadParameters(weights, error));
  ASSERT_TRUE(executor->collect(outputs, error)) << error;
  EXPECT_FALSE(executor->submit({{"y", floats({4}, {1, 2, 3, 4})}}, error));
  EXPECT_NE(error.find("input 'x' is missing"), std::string::npos) << error;
  ASSERT_TRUE(executor->collect(outputs, error)) << error;
  EXPECT_TRUE(executor->readParameters(outputs, error)) << error;
  // Timed steps must not mix two runs' marks: one run at a time.
  ExecutorOptions timed;
  timed.profile = true;
  EXPECT_EQ(create(referencePlan(), timed)->pipelineDepth(), 1u);
}

TEST_F(ExecutorTest, APipelinedRunsLateFailureNamesItsStep) {
  PlanBuilder b = positivePlan();
  plan::addInputStaging(b.plan);
  QueuedDevice queued(testKernels(), QueuedDevice::Late::Compute);
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(b.bytes(), queued, error);
  ASSERT_TRUE(plan) << error;
  std::unique_ptr<Executor> executor = Executor::create(std::move(plan), queued, {}, error);
  ASSERT_TRUE(executor) << error;
  NamedArrays outputs;
  ASSERT_TRUE(executor->submit({{"x", floats({4}, {1, 2, 3, 4})}}, error)) << error;
  ASSERT_TRUE(executor->submit({{"x", floats({4}, {1, -2, 3, 4})}}, error)) << error;
  ASSERT_TRUE(executor->collect(outputs, error)) << error;
  EXPECT_EQ(valuesOf(outputs[0].second), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_FALSE(executor->collect(outputs, error));
  EXPECT_EQ(error, "step 0 ('positive' from 'node0') failed: element 1 is negative");
}

TEST_F(ExecutorTest, ScalarInputsReachKernelsInHostMemoryToo) {
  // y = gated_copy(x, gate): the kernel reads the gate from its host copy, which every run
  // binds anew (run and submit alike).
  PlanBuilder b;
  b.plan.set_arena_bytes(768);
  uint32_t x = b.buffer({4}, plan::ARENA, 0, "x");
  uint32_t gate = b.buffer({}, plan::ARENA, 256, "gate");
  uint32_t y = b.buffer({4}, plan::ARENA, 512, "y");
  b.step("gated_copy", {x, gate}, {y});
  b.input("x", x);
  b.input("gate", gate);
  b.output("y", y);
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  std::string error;
  NamedArrays outputs;
  const HostArray values = floats({4}, {1, 2, 3, 4});
  const std::vector<float> zeros(4, 0.0f);
  for (float open : {1.0f, 0.0f, 1.0f}) {
    ASSERT_TRUE(executor->bindInputs({{"x", values}, {"gate", floats({}, {open})}}, error))
        << error;
    ASSERT_TRUE(executor->run(error) && executor->readOutputs(outputs, error)) << error;
    EXPECT_EQ(valuesOf(outputs[0].second), open > 0 ? valuesOf(values) : zeros);
  }
  ASSERT_TRUE(executor->submit({{"x", values}, {"gate", floats({}, {0.0f})}}, error)) << error;
  ASSERT_TRUE(executor->submit({{"x", values}, {"gate", floats({}, {1.0f})}}, error)) << error;
  ASSERT_TRUE(executor->collect(outputs, error)) << error;
  EXPECT_EQ(valuesOf(outputs[0].second), zeros);
  ASSERT_TRUE(executor->collect(outputs, error)) << error;
  EXPECT_EQ(valuesOf(outputs[0].second), valuesOf(values));
}

TEST_F(ExecutorTest, OnlyGraphInputsHaveHostCopies) {
  // The gate is computed by a step: no host copy, and the kernel says so.
  PlanBuilder b;
  b.plan.set_arena_bytes(1024);
  uint32_t x = b.buffer({4}, plan::ARENA, 0, "x");
  uint32_t g = b.buffer({}, plan::ARENA, 256, "g");
  uint32_t gate = b.buffer({}, plan::ARENA, 512, "gate");
  uint32_t y = b.buffer({4}, plan::ARENA, 768, "y");
  b.step("relu", {g}, {gate});
  b.step("gated_copy", {x, gate}, {y});
  b.input("x", x);
  b.input("g", g);
  b.output("y", y);
  std::unique_ptr<Executor> executor = create(b);
  ASSERT_TRUE(executor);
  std::string error;
  ASSERT_TRUE(
      executor->bindInputs({{"x", floats({4}, {1, 2, 3, 4})}, {"g", floats({}, {1})}}, error))
      << error;
  EXPECT_FALSE(executor->run(error));
  EXPECT_EQ(error, "step 1 ('gated_copy' from 'node1') failed: the gate's value is not known on "
                   "the host");
}

} // namespace
