//===- KernelContractTest.cpp - the contracts without any kernel ----------===//
//
// This test links the kernel contracts alone (no CPU kernels, no OpenBLAS), as the compiler
// does: every op's check and the CPU target's workspace rules must be usable without them.
//
//===----------------------------------------------------------------------===//
#include "kernels/KernelTargets.h"
#include "kernels/ops/OpContracts.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memc::kernels {
namespace {

TEST(KernelContracts, TheCpuTargetHasEveryOpsCheckAndNoRun) {
  const KernelTable *cpu = targetContracts(kCpuTarget);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->size(), opChecks().size());
  for (const auto &[name, contract] : *cpu) {
    EXPECT_EQ(contract.check, opChecks().at(name)) << name;
    EXPECT_FALSE(contract.run) << name;
  }
}

TEST(KernelContracts, AnUnknownTargetHasNone) { EXPECT_FALSE(targetContracts("cuda")); }

TEST(KernelContracts, SizeAConvWorkspaceWithoutTheKernels) {
  // conv's f32 columns: one block of (3 channels x 9 taps) rows by 16 output columns at least.
  KernelCall call;
  call.inputs = {{nullptr, DType::F32, {2, 3, 16, 16}}, {nullptr, DType::F32, {8, 3, 3, 3}}};
  call.outputs = {{nullptr, DType::F32, {2, 8, 16, 16}}};
  Attributes attributes;
  attributes.set("strides", std::vector<int64_t>{1, 1});
  attributes.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attributes.set("dilations", std::vector<int64_t>{1, 1});
  attributes.set("group", int64_t{1});
  call.attributes = &attributes;
  const Kernel &conv = targetContracts(kCpuTarget)->at("conv");
  std::string error;
  ASSERT_TRUE(conv.check(call, error)) << error;
  EXPECT_GE(workspaceBytes(conv, call), uint64_t{27 * 16 * sizeof(float)});
  EXPECT_EQ(workspaceBytes(targetContracts(kCpuTarget)->at("add"), call), 0u);
}

TEST(KernelContracts, ChecksRejectWithTheirMessages) {
  KernelCall call;
  call.inputs = {{nullptr, DType::F32, {2, 3}}, {nullptr, DType::I64, {2, 3}}};
  call.outputs = {{nullptr, DType::F32, {2, 3}}};
  std::string error;
  EXPECT_FALSE(opChecks().at("add")(call, error));
  EXPECT_NE(error.find("rhs"), std::string::npos) << error;
}

} // namespace
} // namespace memc::kernels
