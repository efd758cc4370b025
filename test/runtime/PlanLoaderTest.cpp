//===- PlanLoaderTest.cpp - every plan validation rule --------------------===//
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/InputStaging.h"

#include "PlanBuilder.h"
#include "TestKernels.h"

#include <functional>
#include <gtest/gtest.h>

using namespace memc;
using namespace memc::runtime;
using memc::testing::PlanBuilder;
using memc::testing::referencePlan;
using memc::testing::testDevice;
using memc::testing::testKernels;

namespace {

std::string loadError(const PlanBuilder &builder) {
  std::string error;
  std::unique_ptr<LoadedPlan> loaded = loadPlan(builder.bytes(), testDevice(), error);
  EXPECT_FALSE(loaded) << "the plan was accepted";
  return error;
}

TEST(PlanLoaderTest, LoadsTheReferencePlan) {
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(referencePlan().bytes(), testDevice(), error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(plan->model, "reference");
  EXPECT_EQ(plan->steps.size(), 4u);
  EXPECT_EQ(plan->steps[0].kernel, &testKernels().at("add"));
  EXPECT_EQ(plan->parameters[0].source, "w.source");
  // x (0) lives before step 0 to step 0, t (2) only during step 0 before relu takes it over,
  // y (6) from step 3 to after the end.
  EXPECT_EQ(plan->liveRanges[0].first, -1);
  EXPECT_EQ(plan->liveRanges[0].last, 0);
  EXPECT_EQ(plan->liveRanges[2].first, 0);
  EXPECT_EQ(plan->liveRanges[2].last, 1);
  EXPECT_EQ(plan->liveRanges[6].first, 3);
  EXPECT_EQ(plan->liveRanges[6].last, 4);
  // relu's output takes over add's bytes: neither is an event at step 1.
  EXPECT_TRUE(plan->timeline.allocated[2].empty());
  EXPECT_EQ(plan->timeline.released[1], std::vector<uint32_t>{0});
}

TEST(PlanLoaderTest, RefusesGarbage) {
  std::string error;
  EXPECT_FALSE(loadPlan("\xff\xff\xff", testDevice(), error));
  EXPECT_NE(error.find("truncated or corrupted"), std::string::npos) << error;
}

TEST(PlanLoaderTest, RefusesAPlanForAnotherTarget) {
  PlanBuilder b = referencePlan();
  b.plan.set_target("cuda");
  EXPECT_EQ(loadError(b), "plan: the plan was compiled for target 'cuda', not for this device "
                          "'cpu' (recompile the model for this device)");
}

TEST(PlanLoaderTest, NamesBothFormatVersions) {
  PlanBuilder b = referencePlan();
  b.plan.set_format_version(plan::kPlanFormatVersion + 1);
  std::string error = loadError(b);
  EXPECT_NE(error.find("format version " + std::to_string(plan::kPlanFormatVersion + 1)),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("reads format version " + std::to_string(plan::kPlanFormatVersion)),
            std::string::npos)
      << error;
}

/// One broken rule: a change to the reference plan and a fragment of the expected message.
struct Rule {
  const char *name;
  std::function<void(PlanBuilder &)> breakIt;
  const char *message;
};

void PrintTo(const Rule &rule, std::ostream *os) { *os << rule.name; }

class PlanRule : public ::testing::TestWithParam<Rule> {};

TEST_P(PlanRule, IsEnforced) {
  PlanBuilder b = referencePlan();
  GetParam().breakIt(b);
  std::string error = loadError(b);
  EXPECT_NE(error.find(GetParam().message), std::string::npos)
      << "expected '" << GetParam().message << "', got: " << error;
  EXPECT_EQ(error.rfind("plan: ", 0), 0u) << error;
}

plan::Buffer &buffer(PlanBuilder &b, int index) { return *b.plan.mutable_buffers(index); }
plan::Step &step(PlanBuilder &b, int index) { return *b.plan.mutable_steps(index); }

const Rule kRules[] = {
    // Header.
    {"AlignmentNotPowerOfTwo", [](PlanBuilder &b) { b.plan.set_alignment(100); },
     "alignment 100 is not a power of two"},
    {"AlignmentZero", [](PlanBuilder &b) { b.plan.set_alignment(0); }, "alignment 0"},
    {"AlignmentHuge", [](PlanBuilder &b) { b.plan.set_alignment(uint64_t(1) << 40); }, "alignment"},
    // Buffers.
    {"UnknownDtype", [](PlanBuilder &b) { buffer(b, 0).set_dtype(static_cast<plan::DType>(9)); },
     "buffer 0 ('x'): unknown dtype 9"},
    {"UnknownRegion", [](PlanBuilder &b) { buffer(b, 0).set_region(static_cast<plan::Region>(7)); },
     "unknown region 7"},
    {"NegativeDim", [](PlanBuilder &b) { buffer(b, 0).set_shape(0, -4); }, "negative dim"},
    {"SizeOverflow",
     [](PlanBuilder &b) {
       buffer(b, 0).set_shape(0, int64_t(1) << 62);
       buffer(b, 0).add_shape(int64_t(1) << 62);
     },
     "too many elements"},
    {"SizeMismatch", [](PlanBuilder &b) { buffer(b, 0).set_size_bytes(12); },
     "size_bytes is 12 but f32 [4] takes 16"},
    {"ArenaOffsetUnaligned", [](PlanBuilder &b) { buffer(b, 0).set_offset(16); },
     "offset 16 in the arena region is not a multiple of 256"},
    {"PersistentOffsetUnaligned", [](PlanBuilder &b) { buffer(b, 1).set_offset(4); },
     "in the persistent region is not a multiple of 256"},
    {"ConstantOffsetUnaligned", [](PlanBuilder &b) { buffer(b, 5).set_offset(2); },
     "offset 2 in the constant region is not a multiple of 4"},
    {"BeyondArena", [](PlanBuilder &b) { b.plan.set_arena_bytes(260); },
     "exceed the 260-byte arena region"},
    {"BeyondPersistent", [](PlanBuilder &b) { b.plan.set_persistent_bytes(8); },
     "exceed the 8-byte persistent region"},
    {"BeyondConstants", [](PlanBuilder &b) { b.plan.mutable_constant_data()->resize(12); },
     "exceed the 12-byte constant region"},
    {"OffsetWrapsAround", [](PlanBuilder &b) { buffer(b, 0).set_offset(~uint64_t(255)); },
     "exceed"},
    // A crafted 4 GiB persistent region is refused before the executor zero-fills it.
    {"PersistentBeyondItsBuffers",
     [](PlanBuilder &b) { b.plan.set_persistent_bytes(uint64_t(4) << 30); },
     "persistent region of 4294967296 bytes, but its buffers reach only 16 (rounded up to the "
     "alignment, 256)"},
    {"PersistentPartialOverlap",
     [](PlanBuilder &b) {
       b.plan.set_persistent_bytes(768);
       b.buffer({128}, plan::PERSISTENT, 256, "big");
       b.buffer({4}, plan::PERSISTENT, 512, "inside");
     },
     "partly overlap in the persistent region"},
    // Views.
    {"ViewOfMissingBuffer", [](PlanBuilder &b) { buffer(b, 3).set_alias_of(40); },
     "buffer 3 ('u'): views buffer 40, which does not exist"},
    {"ViewCycle",
     [](PlanBuilder &b) {
       buffer(b, 2).set_alias_of(3);
       buffer(b, 3).set_alias_of(2);
     },
     "its chain of views (alias_of) has a cycle"},
    {"ViewElsewhere",
     [](PlanBuilder &b) { buffer(b, b.buffer({4}, plan::ARENA, 0, "v2")).set_alias_of(2); },
     "buffer 7 ('v2') views buffer 2 ('t') but does not have its region, offset and size"},
    {"ViewOfAnotherSize",
     [](PlanBuilder &b) { buffer(b, b.buffer({2}, plan::ARENA, 256, "half")).set_alias_of(2); },
     "does not have its region, offset and size"},
    {"WritesAView", [](PlanBuilder &b) { buffer(b, 3).set_alias_of(2); },
     "step 1 ('relu' from 'node1'): writes buffer 3 ('u'), which is a view"},
    {"InputIsAView",
     [](PlanBuilder &b) {
       b.input("x_view", b.view({2, 2}, 0, "x_view"));
     },
     "input 'x_view': buffer 7 ('x_view') is a view; bind the buffer it views"},
    {"ViewReadBeforeWrite",
     [](PlanBuilder &b) {
       // Read t through a view at step 0, before add writes t (in place, over the view).
       step(b, 0).set_inputs(1, b.view({4}, 2, "t_view"));
       step(b, 0).set_in_place(true);
     },
     "reads arena buffer 7 ('t_view'), a view of buffer 2 ('t'), before anything writes it"},
    {"ViewKeepsItsOwnerAlive",
     [](PlanBuilder &b) {
       b.output("x_view", b.view({2, 2}, 0, "x_view"));
     },
     "writes arena buffer 4 ('v') at bytes [0, 16), which overlap buffer 0 ('x')"},
    // Bindings.
    {"UnnamedInput", [](PlanBuilder &b) { b.plan.mutable_inputs(0)->set_name(""); },
     "an input binding has no name"},
    {"DuplicateOutput", [](PlanBuilder &b) { b.output("y", 6); }, "output 'y' is bound twice"},
    {"BindingBufferOutOfRange", [](PlanBuilder &b) { b.plan.mutable_outputs(0)->set_buffer(70); },
     "output 'y': buffer 70 does not exist (the plan has 7)"},
    {"ConstantInput", [](PlanBuilder &b) { b.plan.mutable_inputs(0)->set_buffer(5); },
     "inputs are arena or persistent buffers"},
    {"InputWithKind",
     [](PlanBuilder &b) { b.plan.mutable_inputs(0)->set_kind(plan::KIND_PARAMETER); },
     "inputs are arena or persistent buffers without source or kind"},
    {"ArenaParameter", [](PlanBuilder &b) { b.plan.mutable_parameters(0)->set_buffer(0); },
     "parameters live in the persistent (or host) region"},
    {"ParameterKind",
     [](PlanBuilder &b) {
       b.plan.mutable_parameters(0)->set_kind(static_cast<plan::BindingKind>(9));
     },
     "kind 9 is not a kind of parameter (1 parameter, 2 buffer, 3 optimizer_state, "
     "4 gradient_accumulator, 5 loss_scaler, 6 weight_copy)"},
    {"ParameterNamedLikeInput",
     [](PlanBuilder &b) {
       b.plan.set_persistent_bytes(512);
       b.parameter("x", b.buffer({4}, plan::PERSISTENT, 256));
     },
     "parameter 'x' has the name of an input"},
    {"InputAndParameterShareABuffer", [](PlanBuilder &b) { b.input("w_again", 1); },
     "already bound to another input or parameter"},
    {"OutputWithSource", [](PlanBuilder &b) { b.plan.mutable_outputs(0)->set_source("s"); },
     "only parameters have a source"},
    // ZeRO stage 3 shards: a parameter's, in a program of ranks, of the shard's size.
    {"ShardInOneProcess", [](PlanBuilder &b) { b.plan.mutable_parameters(0)->add_shard_of(7); },
     "parameter 'w': only a parameter of a program of ranks is a shard"},
    {"ShardOfAnInput",
     [](PlanBuilder &b) {
       b.plan.mutable_training()->set_world_size(2);
       b.plan.mutable_inputs(0)->add_shard_of(7);
     },
     "input 'x': only a parameter of a program of ranks is a shard"},
    {"ShardOfAnotherSize",
     [](PlanBuilder &b) {
       b.plan.mutable_training()->set_world_size(2);
       b.plan.mutable_parameters(0)->add_shard_of(16);
     },
     "parameter 'w': the shard of [16] over 2 ranks is [8], buffer 1 ('w') is [4]"},
    {"ShardOfNoShape",
     [](PlanBuilder &b) {
       b.plan.mutable_training()->set_world_size(2);
       b.plan.mutable_parameters(0)->add_shard_of(int64_t(1) << 62);
       b.plan.mutable_parameters(0)->add_shard_of(int64_t(1) << 62);
     },
     "is not a shape"},
    // Steps.
    {"UnknownKernel", [](PlanBuilder &b) { step(b, 1).set_kernel("softmax"); },
     "step 1 ('softmax' from 'node1'): the device has no kernel 'softmax'"},
    {"StepBufferOutOfRange", [](PlanBuilder &b) { step(b, 0).set_inputs(1, 99); },
     "input buffer 99 does not exist"},
    {"WritesAConstant", [](PlanBuilder &b) { b.step("copy", {0}, {5}); },
     "writes the constant buffer 5 ('c')"},
    {"WritesAPersistentInput",
     [](PlanBuilder &b) {
       b.plan.set_persistent_bytes(512);
       uint32_t in = b.buffer({4}, plan::PERSISTENT, 256, "pin");
       b.input("pin", in);
       b.step("copy", {6}, {in});
     },
     "writes the graph input buffer 7 ('pin')"},
    {"DuplicateAttribute", [](PlanBuilder &b) { PlanBuilder::setFloat(step(b, 2), "factor", 3); },
     "attribute 'factor' appears twice"},
    {"AttributeWithoutValue",
     [](PlanBuilder &b) { step(b, 2).add_attributes()->set_name("empty"); },
     "attribute 'empty' has no value"},
    {"KernelCheckFails", [](PlanBuilder &b) { step(b, 2).clear_attributes(); },
     "step 2 ('scale' from 'node2'): needs the float attribute 'factor'"},
    {"KernelCheckSeesShapes", [](PlanBuilder &b) { step(b, 0).mutable_inputs()->RemoveLast(); },
     "expects 2 inputs and 1 output"},
    {"OutputsShareBytes",
     [](PlanBuilder &b) {
       uint32_t other = b.buffer({4}, plan::ARENA, 256, "other");
       step(b, 3).add_outputs(other);
     },
     "outputs buffer 6 ('y') and buffer 7 ('other') share bytes"},
    {"AliasWithoutInPlace", [](PlanBuilder &b) { step(b, 1).set_in_place(false); },
     "output buffer 3 ('u') shares bytes with input buffer 2 ('t') but the step is not in place"},
    {"InPlacePartialOverlap",
     [](PlanBuilder &b) {
       b.plan.set_alignment(8);
       b.plan.set_persistent_bytes(16); // what its buffers reach at this alignment
       buffer(b, 3).set_offset(264);
     },
     "partly overlaps input"},
    {"InPlaceWithoutAlias", [](PlanBuilder &b) { step(b, 2).set_in_place(true); },
     "marked in place but no output has an input's bytes"},
    // Arena values.
    {"ReadBeforeWrite",
     [](PlanBuilder &b) {
       plan::Step first = b.plan.steps(0);
       *b.plan.mutable_steps(0) = b.plan.steps(1);
       *b.plan.mutable_steps(1) = first;
     },
     "step 0 ('relu' from 'node1') reads arena buffer 2 ('t') before anything writes it"},
    {"WrittenTwice", [](PlanBuilder &b) { b.step("copy", {6}, {4}); },
     "writes arena buffer 4 ('v'), which step 2 ('scale' from 'node2') already wrote"},
    {"InputOverwritten", [](PlanBuilder &b) { step(b, 2).set_outputs(0, 0); },
     "which the graph input binding already wrote"},
    {"OutputNeverWritten",
     [](PlanBuilder &b) { b.output("z", b.buffer({4}, plan::ARENA, 0, "z")); },
     "output 'z': arena buffer 7 ('z') is never written"},
    {"InPlaceInputStillLive", [](PlanBuilder &b) { b.output("t", 2); },
     "writes buffer 3 ('u') in place over buffer 2 ('t'), which is still read as a graph output"},
    {"LiveValuesCollide", [](PlanBuilder &b) { b.output("x", 0); },
     "step 2 ('scale' from 'node2') writes arena buffer 4 ('v') at bytes [0, 16), which "
     "overlap buffer 0 ('x') at [0, 16), live from the start to the end"},
    {"InputsCollide",
     [](PlanBuilder &b) {
       uint32_t x2 = b.buffer({4}, plan::ARENA, 0, "x2");
       b.input("x2", x2);
     },
     "the graph input binding writes arena buffer 7 ('x2')"},
};

INSTANTIATE_TEST_SUITE_P(Rules, PlanRule, ::testing::ValuesIn(kRules),
                         [](const ::testing::TestParamInfo<Rule> &info) {
                           return std::string(info.param.name);
                         });

TEST(PlanLoaderTest, AShardOfItsSizeLoads) {
  // 7 elements over 2 ranks: shards of 4, the last padded.
  PlanBuilder b = referencePlan();
  b.plan.mutable_training()->set_world_size(2);
  b.plan.mutable_parameters(0)->add_shard_of(7);
  std::string error;
  std::unique_ptr<LoadedPlan> loaded = loadPlan(b.bytes(), testDevice(), error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->parameters[0].shardOf, std::vector<int64_t>({7}));
}

TEST(PlanLoaderTest, PersistentInPlaceUpdatesAreAllowed) {
  // p = p + g, the shape of an optimizer update: the same persistent buffer in and out.
  PlanBuilder b;
  b.plan.set_arena_bytes(256);
  b.plan.set_persistent_bytes(256);
  uint32_t g = b.buffer({4}, plan::ARENA, 0, "g");
  uint32_t p = b.buffer({4}, plan::PERSISTENT, 0, "p");
  b.step("add", {p, g}, {p}, /*inPlace=*/true);
  b.input("g", g);
  b.parameter("p", p);
  b.output("p", p);
  std::string error;
  EXPECT_TRUE(loadPlan(b.bytes(), testDevice(), error)) << error;
  b.plan.mutable_steps(0)->set_in_place(false);
  EXPECT_NE(loadError(b).find("not in place"), std::string::npos);
}

TEST(PlanLoaderTest, OffloadedStateLivesInTheHostRegion) {
  // --offload-optimizer: an update of a parameter and its state in host memory, in place.
  PlanBuilder b;
  b.plan.set_arena_bytes(256);
  b.plan.set_host_bytes(512);
  uint32_t g = b.buffer({4}, plan::ARENA, 0, "g");
  uint32_t p = b.buffer({4}, plan::HOST, 0, "p");
  uint32_t m = b.buffer({4}, plan::HOST, 256, "p.momentum");
  b.step("add", {p, g}, {p}, /*inPlace=*/true);
  b.step("add", {m, g}, {m}, /*inPlace=*/true);
  b.input("g", g);
  b.parameter("p", p);
  b.parameter("p.momentum", m);
  b.output("p", p);
  std::string error;
  std::unique_ptr<LoadedPlan> loaded = loadPlan(b.bytes(), testDevice(), error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_EQ(loaded->hostBytes, 512u);
  EXPECT_EQ(loaded->buffers[p].region, Region::Host);
  // Its size is checked as the persistent region's: reached by its buffers, and no further.
  b.plan.set_host_bytes(uint64_t(4) << 30);
  EXPECT_NE(loadError(b).find("host region of 4294967296 bytes, but its buffers reach only 272"),
            std::string::npos)
      << loadError(b);
  b.plan.set_host_bytes(260);
  EXPECT_NE(loadError(b).find("exceed the 260-byte host region"), std::string::npos)
      << loadError(b);
  // Host buffers never partly overlap.
  b.plan.set_host_bytes(256);
  b.plan.mutable_buffers(m)->set_offset(0);
  b.plan.mutable_buffers(m)->set_shape(0, 8);
  b.plan.mutable_buffers(m)->set_size_bytes(32);
  EXPECT_NE(loadError(b).find("partly overlap in the host region"), std::string::npos)
      << loadError(b);
}

TEST(PlanLoaderTest, ZeroSizedBuffersTakeNoBytes) {
  PlanBuilder b;
  b.plan.set_arena_bytes(256);
  uint32_t x = b.buffer({0, 3}, plan::ARENA, 0, "x");
  uint32_t y = b.buffer({0, 3}, plan::ARENA, 0, "y");
  b.step("relu", {x}, {y});
  b.input("x", x);
  b.output("y", y);
  std::string error;
  EXPECT_TRUE(loadPlan(b.bytes(), testDevice(), error)) << error;
}

} // namespace

namespace {

/// x -> staged_copy (with a workspace of `workspaceBytes`, or none) -> y.
PlanBuilder stagedCopyPlan(int64_t workspaceBytes) {
  PlanBuilder b;
  b.plan.set_arena_bytes(1024);
  uint32_t x = b.buffer({4}, plan::ARENA, 0, "x");
  uint32_t y = b.buffer({4}, plan::ARENA, 256, "y");
  plan::Step &step = b.step("staged_copy", {x}, {y});
  if (workspaceBytes >= 0)
    step.set_workspace(b.buffer({workspaceBytes}, plan::ARENA, 512, "node0.workspace", plan::BOOL));
  b.input("x", x);
  b.output("y", y);
  return b;
}

TEST(PlanLoaderTest, WorkspaceLivesAtItsStep) {
  std::string error;
  std::unique_ptr<LoadedPlan> loaded = loadPlan(stagedCopyPlan(16).bytes(), testDevice(), error);
  ASSERT_TRUE(loaded) << error;
  EXPECT_TRUE(loaded->steps[0].hasWorkspace);
  EXPECT_EQ(loaded->liveRanges[2].first, 0);
  EXPECT_EQ(loaded->liveRanges[2].last, 0);
  EXPECT_EQ(loaded->timeline.allocated[1], (std::vector<uint32_t>{1, 2}));
}

TEST(PlanLoaderTest, RejectsTooSmallWorkspace) {
  std::string error = loadError(stagedCopyPlan(15));
  EXPECT_NE(error.find("step 0 ('staged_copy' from 'node0'): the kernel needs 16 bytes of "
                       "workspace but the step gives it buffer 2 ('node0.workspace') of 15 bytes"),
            std::string::npos)
      << error;
  error = loadError(stagedCopyPlan(-1));
  EXPECT_NE(error.find("step 0 ('staged_copy' from 'node0'): the kernel needs 16 bytes of "
                       "workspace but the step has none"),
            std::string::npos)
      << error;
}

TEST(PlanLoaderTest, WorkspaceMustBeAnArenaBufferOfItsOwn) {
  PlanBuilder persistent = stagedCopyPlan(16);
  persistent.plan.mutable_buffers(2)->set_region(plan::PERSISTENT);
  const plan::Buffer &workspace = persistent.plan.buffers(2);
  persistent.plan.set_persistent_bytes(
      (workspace.offset() + workspace.size_bytes() + plan::kPlanAlignment - 1) /
      plan::kPlanAlignment * plan::kPlanAlignment);
  EXPECT_NE(loadError(persistent).find("must be an arena buffer"), std::string::npos);
  PlanBuilder overlapping = stagedCopyPlan(16);
  overlapping.plan.mutable_buffers(2)->set_offset(256); // y's bytes
  EXPECT_NE(loadError(overlapping).find("overlap"), std::string::npos) << loadError(overlapping);
  PlanBuilder missing = stagedCopyPlan(16);
  missing.plan.mutable_steps(0)->set_workspace(7);
  EXPECT_NE(loadError(missing).find("workspace buffer 7 does not exist"), std::string::npos);
}

TEST(PlanLoaderTest, StagedInputsHaveAPersistentBufferOfTheirOwn) {
  PlanBuilder staged = referencePlan();
  plan::addInputStaging(staged.plan);
  // x's staging buffer (7) comes after w's 256 bytes.
  EXPECT_EQ(staged.plan.persistent_bytes(), 512u);
  EXPECT_EQ(staged.plan.buffers(7).offset(), 256u);
  EXPECT_EQ(staged.plan.buffers(7).category(), plan::INPUTS);
  std::string error;
  std::unique_ptr<LoadedPlan> plan = loadPlan(staged.bytes(), testDevice(), error);
  ASSERT_TRUE(plan) << error;
  EXPECT_EQ(plan->inputs[0].staging, 7u);
  EXPECT_FALSE(plan->parameters[0].staging);
}

TEST(PlanLoaderTest, RefusesStagingAnythingCouldTouch) {
  auto staged = [](const std::function<void(PlanBuilder &)> &change) {
    PlanBuilder b = referencePlan();
    plan::addInputStaging(b.plan);
    change(b);
    return loadError(b);
  };
  EXPECT_EQ(staged([](PlanBuilder &b) { b.plan.mutable_outputs(0)->set_staging(7); }),
            "plan: output 'y': only inputs are staged");
  EXPECT_EQ(staged([](PlanBuilder &b) { b.plan.mutable_inputs(0)->set_staging(9); }),
            "plan: input 'x': staging buffer 9 does not exist (the plan has 8)");
  EXPECT_EQ(staged([](PlanBuilder &b) { b.plan.mutable_inputs(0)->set_staging(2); }),
            "plan: input 'x': staging buffer 2 ('t') must be a persistent buffer that is not a "
            "view");
  EXPECT_EQ(staged([](PlanBuilder &b) { b.plan.mutable_buffers(7)->set_dtype(plan::I32); }),
            "plan: input 'x': staging buffer 7 ('x (staged)') is i32 [4], the input f32 [4]");
  EXPECT_EQ(staged([](PlanBuilder &b) { b.plan.mutable_inputs(0)->set_staging(1); }),
            "plan: input 'x': staging buffer 1 ('w') is already bound to an input or parameter");
  EXPECT_EQ(staged([](PlanBuilder &b) {
              b.plan.mutable_buffers(7)->set_offset(0);
              b.plan.set_persistent_bytes(256);
            }),
            "plan: input 'x': staging buffer 7 ('x (staged)') shares bytes with buffer 1 ('w')");
  EXPECT_EQ(staged([](PlanBuilder &b) { b.plan.mutable_steps(3)->set_inputs(1, 7); }),
            "plan: step 3 ('add' from 'node3'): uses buffer 7 ('x (staged)'), an input's "
            "staging buffer, which only the runtime's copies use");
}

} // namespace
