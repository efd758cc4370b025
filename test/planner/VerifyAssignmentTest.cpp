//===- VerifyAssignmentTest.cpp - the check every plan goes through -------===//
#include "compiler/planner/Assignment.h"

#include <gtest/gtest.h>

using namespace memc::planner;

namespace {

Assignment assignment(std::vector<uint64_t> offsets, uint64_t arena,
                      std::vector<int32_t> inPlaceSource = {}) {
  Assignment result;
  result.offsets = std::move(offsets);
  result.arenaBytes = arena;
  result.inPlaceSource = std::move(inPlaceSource);
  return result;
}

bool verifies(const std::vector<BufferRequest> &buffers, const Assignment &plan,
              const std::vector<InPlaceHint> &hints = {}, std::string *message = nullptr) {
  std::string error;
  bool ok = verifyAssignment(buffers, plan, error, kDefaultAlignment, hints);
  EXPECT_EQ(ok, error.empty()) << error;
  if (message)
    *message = error;
  return ok;
}

const std::vector<BufferRequest> kTwoOverlapping = {{300, 0, 2}, {256, 2, 4}};

TEST(VerifyAssignment, AcceptsDisjointBytes) {
  EXPECT_TRUE(verifies(kTwoOverlapping, assignment({0, 512}, 768)));
  EXPECT_TRUE(verifies(kTwoOverlapping, assignment({256, 0}, 768)));
}

TEST(VerifyAssignment, RejectsSharedBytesWhileBothLive) {
  std::string error;
  // The first buffer's 300 bytes round up to 512, so offset 256 collides.
  EXPECT_FALSE(verifies(kTwoOverlapping, assignment({0, 256}, 768), {}, &error));
  EXPECT_NE(error.find("buffer 1"), std::string::npos) << error;
  EXPECT_NE(error.find("buffer 0"), std::string::npos) << error;
  EXPECT_FALSE(verifies(kTwoOverlapping, assignment({256, 512}, 1024)));
}

TEST(VerifyAssignment, AllowsSharingBetweenDisjointLifetimes) {
  std::vector<BufferRequest> buffers = {{256, 0, 1}, {256, 2, 3}, {256, 4, 5}};
  EXPECT_TRUE(verifies(buffers, assignment({0, 0, 0}, 256)));
}

TEST(VerifyAssignment, FindsCollisionsBelowAndInsideABuffer) {
  // Three buffers stacked at steps 5-6, and a fourth that reaches down into the one below it or
  // covers the next two.
  std::vector<BufferRequest> buffers = {{1024, 0, 10}, {256, 0, 10}, {256, 5, 6}, {512, 5, 5}};
  EXPECT_TRUE(verifies(buffers, assignment({0, 1024, 1280, 1536}, 2048)));
  EXPECT_FALSE(verifies(buffers, assignment({0, 1024, 1280, 768}, 2048)));
  EXPECT_FALSE(verifies(buffers, assignment({0, 1024, 1280, 1024}, 2048)));
}

TEST(VerifyAssignment, ChecksAlignmentAndArenaBounds) {
  std::string error;
  EXPECT_FALSE(verifies(kTwoOverlapping, assignment({0, 600}, 1024), {}, &error));
  EXPECT_NE(error.find("aligned"), std::string::npos) << error;
  EXPECT_FALSE(verifies(kTwoOverlapping, assignment({0, 512}, 700), {}, &error));
  EXPECT_NE(error.find("beyond the arena"), std::string::npos) << error;
  EXPECT_FALSE(verifies(kTwoOverlapping, assignment({0}, 768)));
  EXPECT_FALSE(verifies({{256, 3, 2}}, assignment({0}, 256)));
}

TEST(VerifyAssignment, IgnoresEmptyBuffers) {
  std::vector<BufferRequest> buffers = {{0, 0, 9}, {256, 0, 9}};
  EXPECT_TRUE(verifies(buffers, assignment({0, 0}, 256)));
}

TEST(VerifyAssignment, AcceptsOfferedInPlacePairs) {
  // Buffer 1 overwrites buffer 0 at step 2, where both are live.
  std::vector<BufferRequest> buffers = {{256, 0, 2}, {256, 2, 4}, {256, 1, 3}};
  std::vector<InPlaceHint> hints = {{0, 1}};
  EXPECT_TRUE(verifies(buffers, assignment({0, 0, 256}, 512, {-1, 0, -1}), hints));
}

TEST(VerifyAssignment, RejectsInPlacePairsThatWereNotOfferedOrDoNotMeet) {
  std::vector<BufferRequest> buffers = {{256, 0, 2}, {256, 2, 4}, {256, 1, 3}, {256, 3, 5}};
  std::string error;
  EXPECT_FALSE(verifies(buffers, assignment({0, 0, 256, 512}, 768, {-1, 0, -1, -1}), {}, &error));
  EXPECT_NE(error.find("not offered"), std::string::npos) << error;
  // Buffer 3 starts at 3, not where buffer 0 ends.
  EXPECT_FALSE(verifies(buffers, assignment({0, 512, 256, 0}, 768, {-1, -1, -1, 0}),
                        {{0, 3}}, &error));
  EXPECT_NE(error.find("do not meet"), std::string::npos) << error;
  // A pair must share its offset.
  EXPECT_FALSE(verifies(buffers, assignment({0, 512, 256, 0}, 768, {-1, 0, -1, -1}), {{0, 1}}));
}

TEST(VerifyAssignment, AnInPlaceChainMustNotOverlapItsGrandparent) {
  // 0 -> 1 -> 2 in place, but 1 lives for one step only, so 0 and 2 are both live at step 2.
  std::vector<BufferRequest> buffers = {{256, 0, 2}, {256, 2, 2}, {256, 2, 4}};
  std::vector<InPlaceHint> hints = {{0, 1}, {1, 2}};
  std::string error;
  EXPECT_FALSE(verifies(buffers, assignment({0, 0, 0}, 256, {-1, 0, 1}), hints, &error));
  EXPECT_NE(error.find("buffer 0"), std::string::npos) << error;
  EXPECT_TRUE(verifies(buffers, assignment({0, 0, 256}, 512, {-1, 0, -1}), hints));
}

TEST(VerifyAssignment, ABufferLendsItsBytesOnce) {
  std::vector<BufferRequest> buffers = {{256, 0, 2}, {256, 2, 4}, {256, 2, 3}};
  std::vector<InPlaceHint> hints = {{0, 1}, {0, 2}};
  EXPECT_FALSE(verifies(buffers, assignment({0, 0, 0}, 256, {-1, 0, 0}), hints));
}

} // namespace
