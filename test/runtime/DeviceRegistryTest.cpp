//===- DeviceRegistryTest.cpp - naming devices, and device error records --===//
#include "runtime/device/cpu/CpuDevice.h"

#include "kernels/DeviceError.h"

#include "TestKernels.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace memc;
using namespace memc::runtime;

namespace {

/// A registry whose "gpu" factory remembers the ordinal it was asked for.
struct Registry {
  DeviceRegistry registry;
  int asked = -1;
  Registry() {
    registerCpuDevice(registry, memc::testing::testKernels());
    registry.add("gpu", [this](int ordinal, std::string &error) -> std::unique_ptr<Device> {
      asked = ordinal;
      error = "no such device here";
      return nullptr;
    });
  }
};

TEST(DeviceRegistry, ANameMayCarryAnOrdinal) {
  Registry r;
  std::string error;
  EXPECT_FALSE(r.registry.create("gpu:3", error));
  EXPECT_EQ(r.asked, 3);
  EXPECT_EQ(error, "cannot create device 'gpu:3': no such device here");
  EXPECT_FALSE(r.registry.create("gpu", error));
  EXPECT_EQ(r.asked, 0);
  EXPECT_TRUE(r.registry.create("cpu:0", error)) << error;
}

TEST(DeviceRegistry, RefusesBadOrdinalsAndUnknownNames) {
  Registry r;
  std::string error;
  for (const char *name : {"gpu:", "gpu:x", "gpu:-1", "gpu:99999"}) {
    EXPECT_FALSE(r.registry.create(name, error)) << name;
    EXPECT_EQ(error,
              "device '" + std::string(name) + "': expected NAME or NAME:K with K a device number");
  }
  EXPECT_EQ(r.asked, -1);
  EXPECT_FALSE(r.registry.create("cpu:1", error));
  EXPECT_EQ(error,
            "cannot create device 'cpu:1': the host is one device: cpu (or cpu:0), not cpu:1");
  EXPECT_FALSE(r.registry.create("tpu", error));
  EXPECT_EQ(error, "unknown device 'tpu' (this build has: cpu, gpu)");
}

TEST(DeviceError, RecordsSayWhatTheCpuKernelsSay) {
  kernels::DeviceErrorRecord record;
  record.code = kernels::kIndexOutOfRange;
  int64_t index[] = {-12, 5, 1, 10};
  std::memcpy(record.values, index, sizeof index);
  EXPECT_EQ(kernels::describeDeviceError(record),
            "index -12 (at position 5) out of range for dimension 1 of size 10");
  record.code = kernels::kLabelOutOfRange;
  int64_t label[] = {50257, 3, 50257, 0};
  std::memcpy(record.values, label, sizeof label);
  EXPECT_EQ(kernels::describeDeviceError(record),
            "label 50257 at position 3 is outside [0, 50257)");
  record.code = kernels::kStepBelowOne;
  double step = 0;
  std::memcpy(&record.values[0], &step, sizeof step);
  EXPECT_EQ(kernels::describeDeviceError(record),
            "the step number must be at least 1, got 0.000000");
}

TEST(Stream, TheCpusEventsHaveHappened) {
  CpuDevice device(memc::testing::testKernels());
  std::string error;
  std::unique_ptr<Stream> copies = device.createStream(error), compute = device.createStream(error);
  std::unique_ptr<Event> uploaded = copies->record(error);
  ASSERT_TRUE(uploaded) << error;
  EXPECT_TRUE(compute->waitFor(*uploaded, error)) << error;
  void *host = nullptr;
  ASSERT_TRUE(device.allocateHost(0, host, error)) << error;
  device.deallocateHost(host);
}

} // namespace
