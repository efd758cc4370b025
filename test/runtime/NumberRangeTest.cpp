//===- NumberRangeTest.cpp - the values numeric flags accept --------------===//
#include "runtime/support/NumberRange.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace memc::runtime;

namespace {

TEST(NumberRange, RefusesNanInfinitiesAndOpenBounds) {
  NumberRange positive{0, INFINITY, false};
  EXPECT_TRUE(isInRange(1e-3, positive));
  EXPECT_FALSE(isInRange(0, positive));
  EXPECT_FALSE(isInRange(NAN, positive));
  EXPECT_FALSE(isInRange(INFINITY, positive));
  NumberRange beta{0, 1, true, false};
  EXPECT_TRUE(isInRange(0, beta));
  EXPECT_FALSE(isInRange(1, beta));
  EXPECT_FALSE(isInRange(-0.5, beta));
}

TEST(NumberRange, DescribesEachKindOfRange) {
  EXPECT_EQ(describeRange({0, INFINITY, false}), "a finite number > 0");
  EXPECT_EQ(describeRange({0, INFINITY}), "a finite number >= 0");
  EXPECT_EQ(describeRange({0, 1, true, false}), "a number in [0, 1)");
  EXPECT_EQ(describeRange({1, 65536, true, true, true}), "an integer from 1 to 65536");
  EXPECT_EQ(rangeError("--lr", {0, INFINITY, false}, formatNumber(INFINITY)),
            "--lr must be a finite number > 0, got 'inf'");
}

TEST(NumberRange, ParsesWholeIntegersAndNeverClamps) {
  NumberRange steps{1, kMaxFlagCount, true, true, true};
  int64_t value = -1;
  EXPECT_TRUE(parseIntegerInRange("1099511627776", steps, value));
  EXPECT_EQ(value, int64_t{1} << 40);
  for (const char *text : {"0", "1099511627777", "9223372036854775807", "9223372036854775808",
                           "99999999999999999999", "-1", "1e3", "12abc", "", " 5", "0x10"})
    EXPECT_FALSE(parseIntegerInRange(text, steps, value)) << text;
  EXPECT_EQ(value, int64_t{1} << 40) << "a refused text leaves the value alone";
}

} // namespace
