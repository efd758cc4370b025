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

TEST(KernelContracts, AnUnknownTargetHasNone) { EXPECT_FALSE(targetContracts("tpu")); }

/// A 3x3 convolution's attributes: unit strides and dilations, same padding, one group.
Attributes sameConvAttributes() {
  Attributes attributes;
  attributes.set("strides", std::vector<int64_t>{1, 1});
  attributes.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attributes.set("dilations", std::vector<int64_t>{1, 1});
  attributes.set("group", int64_t{1});
  return attributes;
}

TEST(KernelContracts, SizeAConvWorkspaceWithoutTheKernels) {
  // conv's f32 columns: one block of (3 channels x 9 taps) rows by 16 output columns at least.
  KernelCall call;
  call.inputs = {{nullptr, DType::F32, {2, 3, 16, 16}}, {nullptr, DType::F32, {8, 3, 3, 3}}};
  call.outputs = {{nullptr, DType::F32, {2, 8, 16, 16}}};
  Attributes attributes = sameConvAttributes();
  call.attributes = &attributes;
  const Kernel &conv = targetContracts(kCpuTarget)->at("conv");
  std::string error;
  ASSERT_TRUE(conv.check(call, error)) << error;
  EXPECT_GE(workspaceBytes(conv, call), uint64_t{27 * 16 * sizeof(float)});
  EXPECT_EQ(workspaceBytes(targetContracts(kCpuTarget)->at("add"), call), 0u);
}

/// The CPU workspace of a 16 -> 16 channel 3x3 same-padded convolution kernel on `batch`
/// images of side `side`.
uint64_t convWorkspace(const std::string &kernel, int64_t batch, int64_t height) {
  TensorView activation{nullptr, DType::F32, {batch, 16, height, 256}};
  TensorView weight{nullptr, DType::F32, {16, 16, 3, 3}};
  KernelCall call;
  call.inputs = {activation, weight}; // conv: x, w; conv_grad_input: dy, w
  call.outputs = {activation};
  if (kernel == "conv_grad_weight") {
    call.inputs = {activation, activation}; // dy, x
    call.outputs = {weight};
  }
  Attributes attributes = sameConvAttributes();
  call.attributes = &attributes;
  const Kernel &contract = targetContracts(kCpuTarget)->at(kernel);
  std::string error;
  EXPECT_TRUE(contract.check(call, error)) << kernel << ": " << error;
  return workspaceBytes(contract, call);
}

TEST(KernelContracts, ConvWorkspaceIsATileNotTheUnfoldedInput) {
  // 144 column rows (16 channels x 9 taps) by one tile of output positions, whatever the image
  // and batch size: 4 times the image height and 4 times the batch ask for no more.
  // (Activations whose blocked copies pass kOneDnnMaxF32WorkspaceBytes: smaller ones run on
  // oneDNN.)
  for (const char *kernel : {"conv", "conv_grad_input", "conv_grad_weight"}) {
    uint64_t small = convWorkspace(kernel, 4, 256), large = convWorkspace(kernel, 16, 1024);
    EXPECT_EQ(small, large) << kernel;
    EXPECT_GE(small, uint64_t{144 * 256 * sizeof(float)}) << kernel;
    EXPECT_LE(large, uint64_t{144 * 4096 * sizeof(float)}) << kernel;
  }
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
