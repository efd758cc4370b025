//===- Crc32cTest.cpp - the checksum of programs and checkpoints ----------===//
#include "runtime/support/Crc32c.h"

#include <gtest/gtest.h>

#include <random>

using namespace memc::runtime;

namespace {

TEST(Crc32c, MatchesTheStandardCheckValues) {
  // The check value of CRC-32C (RFC 3720, B.4) and the iSCSI test vectors.
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32cPortable("123456789"), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  EXPECT_EQ(crc32c(""), 0u);
}

TEST(Crc32c, HardwareAndTableAgreeAtEveryLengthAndAlignment) {
  std::mt19937 random(7);
  std::string bytes(300, '\0');
  for (char &byte : bytes)
    byte = static_cast<char>(random());
  for (size_t begin = 0; begin < 9; ++begin)
    for (size_t size = 0; begin + size <= bytes.size(); size += 7) {
      std::string_view part = std::string_view(bytes).substr(begin, size);
      ASSERT_EQ(crc32c(part), crc32cPortable(part)) << begin << "+" << size;
    }
}

// Inputs of three 8 KiB blocks and more go through the interleaved streams and their join.
TEST(Crc32c, HardwareAndTableAgreeOnInterleavedBlocks) {
  std::mt19937 random(11);
  std::string bytes(5 * 24576 + 100, '\0');
  for (char &byte : bytes)
    byte = static_cast<char>(random());
  for (size_t size : {24575, 24576, 24577, 24576 + 8, 2 * 24576 + 13, 5 * 24576 + 99})
    for (size_t begin : {0, 1})
      ASSERT_EQ(crc32c(std::string_view(bytes).substr(begin, size), 0x1234u),
                crc32cPortable(std::string_view(bytes).substr(begin, size), 0x1234u))
          << begin << "+" << size;
}

TEST(Crc32c, ContinuesFromThePreviousBytes) {
  std::string a = "the plan, ", b = "then the weights";
  EXPECT_EQ(crc32c(b, crc32c(a)), crc32c(a + b));
  EXPECT_EQ(crc32cPortable(b, crc32cPortable(a)), crc32c(a + b));
}

TEST(Crc32c, EveryFlippedBitChangesTheChecksum) {
  std::string bytes = "weights of a bias that must not silently become zero";
  uint32_t good = crc32c(bytes);
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      ASSERT_NE(crc32c(flipped), good) << i << ":" << bit;
    }
}

TEST(Crc32c, HexRoundTripsAndRefusesAnythingElse) {
  EXPECT_EQ(crc32cHex(0xE3069283u), "e3069283");
  EXPECT_EQ(crc32cHex(0x1u), "00000001");
  uint32_t crc = 0;
  EXPECT_TRUE(parseCrc32cHex("e3069283", crc));
  EXPECT_EQ(crc, 0xE3069283u);
  for (const char *bad : {"", "e306928", "e30692830", "E3069283", "e306928g", " 3069283"})
    EXPECT_FALSE(parseCrc32cHex(bad, crc)) << bad;
}

} // namespace
