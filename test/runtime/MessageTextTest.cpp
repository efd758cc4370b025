//===- MessageTextTest.cpp - long runs in messages are cut ----------------===//
#include "runtime/support/MessageText.h"

#include <gtest/gtest.h>

using namespace memc::runtime;

TEST(MessageTextTest, KeepsOrdinaryTextAndCutsLongRuns) {
  EXPECT_EQ(shortenLongRuns("node 'conv1': Conv: bad pads\n  note"),
            "node 'conv1': Conv: bad pads\n  note");
  std::string edge(kMaxQuotedRun, 'a');
  EXPECT_EQ(shortenLongRuns(edge), edge);
  std::string huge = "x" + std::string(1000000, 'n') + "y";
  std::string cut = shortenLongRuns("node '" + huge + "': Hardmax: unsupported");
  EXPECT_LT(cut.size(), 600u);
  EXPECT_EQ(cut.substr(0, 7), "node 'x");
  // The run is 'x...y': with its quotes and colon; 200 bytes stay at each end.
  EXPECT_NE(cut.find("[... " + std::to_string(huge.size() + 3 - 400) + " bytes ...]"),
            std::string::npos)
      << cut;
  EXPECT_NE(cut.find("ny': Hardmax: unsupported"), std::string::npos) << cut;
}
