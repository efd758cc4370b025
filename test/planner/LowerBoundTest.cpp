//===- LowerBoundTest.cpp - alignment and the live-bytes lower bound ------===//
#include "compiler/planner/LiveRange.h"

#include <gtest/gtest.h>

using namespace memc::planner;

namespace {

TEST(AlignTo, RoundsUpToMultiples) {
  EXPECT_EQ(alignTo(0, 256), 0u);
  EXPECT_EQ(alignTo(1, 256), 256u);
  EXPECT_EQ(alignTo(256, 256), 256u);
  EXPECT_EQ(alignTo(257, 256), 512u);
  EXPECT_EQ(alignTo(10, 12), 12u); // not only powers of two
  EXPECT_EQ(alignTo(7, 0), 7u);
  EXPECT_EQ(alignTo(7, 1), 7u);
}

TEST(LowerBound, EmptyIsZero) { EXPECT_EQ(lowerBound({}), 0u); }

TEST(LowerBound, SumsTheBuffersLiveAtTheBusiestStep) {
  // Step 0: 1 KiB + 256; step 1: 1 KiB + 512 (inclusive ranges); step 2: 512.
  std::vector<BufferRequest> buffers = {{1024, 0, 1}, {100, 0, 0}, {512, 1, 2}};
  EXPECT_EQ(lowerBound(buffers), 1024u + 512u);
  EXPECT_EQ(lowerBound(buffers, 1), 1024u + 512u);
  EXPECT_EQ(lowerBound(buffers, 2048), 4096u);
}

TEST(LowerBound, BuffersMeetingAtAStepAreLiveTogether) {
  // One ends at step 3, the other starts at step 3: both are live there.
  EXPECT_EQ(lowerBound({{256, 0, 3}, {256, 3, 5}}), 512u);
  EXPECT_EQ(lowerBound({{256, 0, 2}, {256, 3, 5}}), 256u);
}

TEST(LowerBound, StepsNeedNotBeDenseOrPositive) {
  std::vector<BufferRequest> buffers = {
      {256, -1'000'000'000'000, 5}, {256, 4, 1'000'000'000'000}, {256, INT64_MAX, INT64_MAX}};
  EXPECT_EQ(lowerBound(buffers), 512u);
}

} // namespace
