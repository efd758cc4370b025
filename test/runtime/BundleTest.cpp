//===- BundleTest.cpp - programs appended to the runner -------------------===//
#include "runtime/bundle/Bundle.h"

#include "runtime/support/Bytes.h"
#include "runtime/support/Crc32c.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace memc::runtime;

namespace {

class BundleTest : public ::testing::Test {
protected:
  std::string directory;
  void SetUp() override {
    directory = ::testing::TempDir() + "/bundle_test_" + std::to_string(getpid());
    mkdir(directory.c_str(), 0755);
  }
  void TearDown() override { std::system(("rm -rf '" + directory + "'").c_str()); }

  std::string path(const std::string &name) const { return directory + "/" + name; }

  std::string write(const std::string &name, const std::string &bytes) {
    std::string error;
    EXPECT_TRUE(writeFileAtomically(path(name), {bytes}, 0755, error)) << error;
    return path(name);
  }

  std::string read(const std::string &file) {
    std::string bytes, error;
    EXPECT_TRUE(readFile(file, bytes, error)) << error;
    return bytes;
  }
};

TEST_F(BundleTest, RoundTrips) {
  std::string runner = write("runner", "#!/bin/false\nnot really a runner\n");
  std::string error;
  ASSERT_TRUE(writeBundle(runner, path("program"), "PLAN", "WEIGHTS!", error)) << error;
  struct stat info;
  ASSERT_EQ(stat(path("program").c_str(), &info), 0);
  EXPECT_TRUE(info.st_mode & S_IXUSR);

  Bundle bundle;
  ASSERT_EQ(readBundle(path("program"), bundle, error), BundleStatus::Found) << error;
  EXPECT_EQ(bundle.plan, "PLAN");
  EXPECT_EQ(bundle.weights, "WEIGHTS!");
  std::string bytes = read(path("program")), runnerBytes = read(runner);
  EXPECT_EQ(bytes.size(), runnerBytes.size() + 4 + 8 + kBundleFooterSize);
  EXPECT_EQ(bytes.substr(0, runnerBytes.size()), runnerBytes);
}

TEST_F(BundleTest, PlainFilesCarryNoBundle) {
  Bundle bundle;
  std::string error;
  EXPECT_EQ(readBundle(write("plain", "hello"), bundle, error), BundleStatus::Absent);
  EXPECT_EQ(readBundle(write("empty", ""), bundle, error), BundleStatus::Absent);
  // The real runner: its ELF image ends where the file ends.
  EXPECT_EQ(readBundle(MEMC_RUNNER_PATH, bundle, error), BundleStatus::Absent) << error;
  EXPECT_EQ(readBundle(path("missing"), bundle, error), BundleStatus::Invalid);
}

TEST_F(BundleTest, RefusesToBundleABundle) {
  std::string error;
  ASSERT_TRUE(writeBundle(write("runner", "runner"), path("program"), "P", "W", error));
  EXPECT_FALSE(writeBundle(path("program"), path("again"), "P", "W", error));
  EXPECT_NE(error.find("already carries"), std::string::npos) << error;
}

TEST_F(BundleTest, ReportsUnwritableOutput) {
  std::string error;
  EXPECT_FALSE(writeBundle(write("runner", "runner"), "/nonexistent/dir/program", "P", "W", error));
  EXPECT_NE(error.find("/nonexistent/dir"), std::string::npos) << error;
  EXPECT_FALSE(writeBundle(path("no-runner"), path("program"), "P", "W", error));
  EXPECT_NE(error.find("no-runner"), std::string::npos) << error;
}

/// Rewrites the footer field at `at` (bytes from the footer's start) and, unless told not to,
/// the footer's checksum, so that the check behind it is what rejects the file.
std::string patchFooter(std::string bytes, size_t at, uint64_t value, size_t width = 8,
                        bool reseal = true) {
  size_t footer = bytes.size() - kBundleFooterSize;
  for (size_t i = 0; i < width; ++i)
    bytes[footer + at + i] = static_cast<char>((value >> (8 * i)) & 0xff);
  if (reseal) {
    uint32_t crc = crc32c(std::string_view(bytes).substr(footer + 4));
    for (size_t i = 0; i < 4; ++i)
      bytes[footer + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  }
  return bytes;
}

TEST_F(BundleTest, DetectsDamagedFooters) {
  std::string error;
  ASSERT_TRUE(writeBundle(write("runner", "runner bytes"), path("program"), "PLAN", "WEIGHTS",
                          error));
  std::string good = read(path("program"));
  struct Case {
    std::string bytes;
    const char *message;
  } cases[] = {
      {patchFooter(good, 24, 7, 4), "bundle version 7"},
      {patchFooter(good, 28, good.size()), "outside the file"},
      {patchFooter(good, 36, ~uint64_t(0)), "outside the file"},
      {patchFooter(good, 52, 1000), "outside the file"},
      {patchFooter(good, 44, 12), "overlap"},
      {patchFooter(good, 28, 13, 8, /*reseal=*/false), "footer is corrupted (checksum mismatch)"},
      {patchFooter(good, 4, 0, 4), "section 'runner' is corrupted (checksum mismatch)"},
      {patchFooter(good, 8, 0, 4), "section 'plan' is corrupted (checksum mismatch)"},
      {patchFooter(good, 12, 0, 4), "section 'weights' is corrupted (checksum mismatch)"},
  };
  for (const Case &c : cases) {
    std::string_view plan, weights;
    std::string message;
    EXPECT_EQ(parseBundle(c.bytes, plan, weights, message), BundleStatus::Invalid) << c.message;
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "expected '" << c.message << "', got: " << message;
  }
}

// One flipped byte once zeroed a bias or switched GELU's approximation with exit code 0: every
// byte is now covered by a checksum or is the magic.
TEST_F(BundleTest, EveryFlippedByteOfTheProgramIsAnError) {
  std::string error;
  ASSERT_TRUE(writeBundle(write("runner", "runner bytes"), path("program"), "PLAN BYTES",
                          "WEIGHT BYTES", error));
  std::string good = read(path("program"));
  for (size_t at = 0; at < good.size(); ++at)
    for (int bit : {0, 7}) {
      std::string bytes = good;
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      std::string_view plan, weights;
      std::string message;
      BundleStatus status = parseBundle(bytes, plan, weights, message);
      // A damaged magic makes the file look like a plain runner; memc-runner then notices the
      // bytes after its ELF image (DetectsTruncatedProgramsOfRealRunners).
      bool inMagic = at >= good.size() - kBundleMagicFromEnd &&
                     at < good.size() - kBundleMagicFromEnd + sizeof(kBundleMagic);
      EXPECT_EQ(status, inMagic ? BundleStatus::Absent : BundleStatus::Invalid)
          << "byte " << at << " bit " << bit;
    }
}

// Version 1 programs (no checksums; the footer began at the magic) are refused by name.
TEST_F(BundleTest, RefusesProgramsOfAnOlderMemc) {
  std::string bytes = "runner bytesPLANWEIGHTS";
  bytes.append(kBundleMagic, sizeof(kBundleMagic));
  appendLittleEndian<uint32_t>(bytes, 1);
  for (uint64_t field : {12, 4, 16, 7})
    appendLittleEndian<uint64_t>(bytes, field);
  std::string_view plan, weights;
  std::string message;
  EXPECT_EQ(parseBundle(bytes, plan, weights, message), BundleStatus::Invalid);
  EXPECT_NE(message.find("compiled by an older memc (bundle version 1"), std::string::npos)
      << message;
  EXPECT_NE(message.find("compile it again"), std::string::npos) << message;
}

TEST_F(BundleTest, DetectsTruncatedProgramsOfRealRunners) {
  std::string error;
  ASSERT_TRUE(writeBundle(MEMC_RUNNER_PATH, path("program"), "PLAN", "WEIGHTS", error)) << error;
  std::string bytes = read(path("program"));
  Bundle bundle;
  ASSERT_EQ(readBundle(path("program"), bundle, error), BundleStatus::Found) << error;
  for (size_t cut : {size_t(1), kBundleFooterSize, kBundleFooterSize + 5}) {
    std::string_view plan, weights;
    std::string message;
    EXPECT_EQ(parseBundle(std::string_view(bytes).substr(0, bytes.size() - cut), plan, weights,
                          message),
              BundleStatus::Invalid)
        << cut;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
}

} // namespace
