//===- BytesTest.cpp - byte counts for people, both ways ------------------===//
#include "runtime/support/Bytes.h"

#include <gtest/gtest.h>

using namespace memc::runtime;

namespace {

TEST(FormatBytes, PrintsBinaryUnitsWithTwoDecimals) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(300 * 1024), "300.00 KiB");
  EXPECT_EQ(formatBytes(uint64_t{1} << 30), "1.00 GiB");
  EXPECT_EQ(formatBytes(uint64_t{3} << 50), "3072.00 TiB");
}

TEST(ParseByteSize, ReadsDecimalAndBinaryUnitsInAnyCase) {
  EXPECT_EQ(parseByteSize("1000000"), 1000000u);
  EXPECT_EQ(parseByteSize("24GiB"), uint64_t{24} << 30);
  EXPECT_EQ(parseByteSize("1.5GB"), 1500000000u);
  EXPECT_EQ(parseByteSize(" 512 mib "), uint64_t{512} << 20);
  EXPECT_EQ(parseByteSize("1KB"), 1000u);
  EXPECT_EQ(parseByteSize("0.5b"), 0u);
}

TEST(ParseByteSize, RejectsWhatIsNotASize) {
  for (const char *text : {"", "GiB", "24GiBs", "1.2.3MB", ".", "-1GB", "1e3", "2^30"})
    EXPECT_FALSE(parseByteSize(text)) << text;
  EXPECT_FALSE(parseByteSize("20000000TB")); // beyond 64 bits
}

} // namespace
