//===- CudaTargetTest.cpp - the CUDA target's record ----------------------===//
#include "kernels/KernelTargets.h"
#include "kernels/ops/OpContracts.h"

#include <gtest/gtest.h>

namespace memc::kernels {
namespace {

TEST(CudaTarget, IsKnownWithGpuConstantAlignment) {
  const Target *cuda = findTarget(kCudaTarget);
  ASSERT_TRUE(cuda);
  EXPECT_EQ(cuda->constantAlignment, 256u);
  EXPECT_EQ(findTarget(kCpuTarget)->constantAlignment, 64u);
}

TEST(CudaTarget, EveryOpItListsHasASharedCheck) {
  const KernelTable *contracts = targetContracts(kCudaTarget);
  ASSERT_TRUE(contracts);
  EXPECT_EQ(contracts->size(), cudaTarget().ops().size());
  for (const auto &[name, op] : cudaTarget().ops())
    EXPECT_TRUE(opChecks().count(name)) << name << " is not an op";
}

} // namespace
} // namespace memc::kernels
