//===- CudaDeviceTest.cpp - the CUDA device, with or without a GPU --------===//
//
// Build machines have no GPU: there, creating "cuda" must fail with the CUDA runtime's reason.
// On a GPU host (tools/gpu-check.sh) the same test checks the device's memory rules.
//
//===----------------------------------------------------------------------===//
#include "runtime/device/cuda/CudaDevice.h"
#include "kernels/cuda/CudaKernels.h"
#include "kernels/cuda/CudaTarget.h"
#include "runtime/device/AvailableDevices.h"

#include <gtest/gtest.h>

using namespace memc;
using namespace memc::runtime;

namespace {

TEST(CudaKernels, RunEveryOpOfTheTargetAndNoOther) {
  // An op the record lists without a run would pass the compiler and fail at load.
  const kernels::KernelTable &table = kernels::cudaKernels();
  EXPECT_EQ(table.size(), kernels::cudaTarget().ops().size());
  for (const auto &[name, op] : kernels::cudaTarget().ops()) {
    auto kernel = table.find(name);
    ASSERT_NE(kernel, table.end()) << name << " has no CUDA run function";
    EXPECT_TRUE(kernel->second.run && kernel->second.check) << name;
    EXPECT_EQ(kernel->second.workspace, op.workspace) << name;
    EXPECT_EQ(kernel->second.limits, op.limits) << name;
  }
}

TEST(CudaDevice, AlignsAddressesUp) {
  EXPECT_EQ(alignAddress(0x1000, 4096), 0x1000u);
  EXPECT_EQ(alignAddress(0x1100, 4096), 0x2000u);
  EXPECT_EQ(alignAddress(0x1100, 256), 0x1100u);
}

TEST(CudaDevice, IsCreatedOrSaysWhyNot) {
  DeviceRegistry registry;
  registerAvailableDevices(registry);
  EXPECT_EQ(registry.names(), std::vector<std::string>{"cuda"});
  std::string error;
  std::unique_ptr<Device> device = registry.create("cuda", error);
  if (!device) {
    EXPECT_EQ(error.rfind("cannot create device 'cuda': no usable GPU: ", 0), 0u) << error;
    return;
  }
  // A GPU: zero bytes ask the driver for nothing, real ones are aligned as asked.
  EXPECT_NE(device->properties().description.find("cuda:0"), std::string::npos);
  void *memory = reinterpret_cast<void *>(1);
  ASSERT_TRUE(device->allocate(0, 256, memory, error)) << error;
  EXPECT_EQ(memory, nullptr);
  ASSERT_TRUE(device->allocate(1000, 1 << 16, memory, error)) << error;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % (1 << 16), 0u);
  device->deallocate(memory);
  EXPECT_FALSE(registry.create("cuda:4096", error));
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
}

} // namespace
