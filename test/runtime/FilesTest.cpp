//===- FilesTest.cpp - the one place files are opened and replaced --------===//
//
// Readers refuse anything but a regular file without blocking (a FIFO with no writer would wait
// forever); writers refuse to replace a target that exists and is not a regular file, remove only
// their own target's stale temporaries, and report every failed write of a streamed output.
// Devices are only ever opened here, never replaced: /dev/full is opened directly for the
// full-disk case.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Files.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace memc::runtime;
namespace fs = std::filesystem;

namespace {

class FilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::path(::testing::TempDir()) / ("files_test_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    fifo = (dir / "fifo").string();
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string path(const std::string &name) const { return (dir / name).string(); }
  void touch(const std::string &name) { std::ofstream(path(name)) << "stale"; }

  fs::path dir;
  std::string fifo;
};

// Each of these returns at once; a regression would block on the FIFO, which the alarm turns
// into a failure (SIGALRM ends the test binary) instead of a hang.
TEST_F(FilesTest, ReadersRefuseAFifoOrADirectoryWithoutBlocking) {
  alarm(30);
  std::string error, bytes;
  EXPECT_EQ(openRegularFileForReading(fifo, error), -1);
  EXPECT_EQ(error, "'" + fifo + "' is a FIFO, not a regular file");
  EXPECT_FALSE(readFile(fifo, bytes, error));
  EXPECT_EQ(MappedFile::open(fifo, error), nullptr);
  EXPECT_NE(error.find("is a FIFO"), std::string::npos) << error;
  EXPECT_EQ(MappedFile::open(dir.string(), error), nullptr);
  EXPECT_EQ(error, "'" + dir.string() + "' is a directory, not a regular file");
  EXPECT_EQ(MappedFile::open("/dev/null", error), nullptr);
  EXPECT_EQ(error, "'/dev/null' is a character device, not a regular file");
  alarm(0);
}

TEST_F(FilesTest, AtomicWritesRefuseToReplaceWhatIsNotARegularFile) {
  std::string error;
  for (const std::string &target : {fifo, std::string("/dev/null"), dir.string()}) {
    EXPECT_FALSE(writeFileAtomically(target, {"bytes"}, 0644, error)) << target;
    EXPECT_EQ(error.rfind("cannot write '" + target + "': it exists and is not a regular file", 0),
              0u)
        << error;
    EXPECT_FALSE(prepareOutputFile(target, error)) << target;
  }
  struct stat info;
  ASSERT_EQ(stat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
  ASSERT_EQ(stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  EXPECT_TRUE(writeFileAtomically(path("out"), {"first"}, 0644, error)) << error;
  EXPECT_TRUE(writeFileAtomically(path("out"), {"second"}, 0644, error)) << error;
  std::string bytes;
  ASSERT_TRUE(readFile(path("out"), bytes, error)) << error;
  EXPECT_EQ(bytes, "second");
}

// Only `target`.tmp.XXXXXX (six letters or digits), only beside the target, only regular files.
TEST_F(FilesTest, StaleTemporariesOfTheTargetAreRemoved) {
  for (const char *name :
       {"out.npz.tmp.a1B2c3", "out.npz.tmp.ZZZZZZ", "out.npz.tmp.abc", "out.npz.tmp.abcdefg",
        "out.npz.tmp.ab-def", "other.npz.tmp.a1B2c3", "xout.npz.tmp.a1B2c3", "out.npz"})
    touch(name);
  fs::create_directory(path("out.npz.tmp.Dir123"));
  std::string error;
  ASSERT_TRUE(prepareOutputFile(path("out.npz"), error)) << error;
  std::set<std::string> left;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir))
    left.insert(entry.path().filename().string());
  EXPECT_EQ(left,
            (std::set<std::string>{"fifo", "out.npz", "out.npz.tmp.abc", "out.npz.tmp.abcdefg",
                                   "out.npz.tmp.ab-def", "other.npz.tmp.a1B2c3",
                                   "xout.npz.tmp.a1B2c3", "out.npz.tmp.Dir123"}));
  touch("out.npz.tmp.q9W8e7");
  ASSERT_TRUE(writeFileAtomically(path("out.npz"), {"new"}, 0644, error)) << error;
  EXPECT_FALSE(fs::exists(path("out.npz.tmp.q9W8e7")));
}

TEST_F(FilesTest, StreamedFileReportsAFullDisk) {
  int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::unique_ptr<StreamedFile> full = StreamedFile::adopt(fd, "full.log");
  std::string error;
  EXPECT_FALSE(full->write("{\"step\": 1}\n", error));
  EXPECT_EQ(error, "cannot write 'full.log': No space left on device");
  EXPECT_TRUE(full->close(error));
  EXPECT_FALSE(full->write("more", error));
}

TEST_F(FilesTest, StreamedFileReportsAPipeWithoutReader) {
  int ends[2];
  ASSERT_EQ(pipe(ends), 0);
  ::close(ends[0]);
  // Without SIGPIPE ignored the write would kill the test; the runner's writes are to files.
  sighandler_t previous = signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<StreamedFile> pipeOut = StreamedFile::adopt(ends[1], "pipe.log");
  std::string error;
  EXPECT_FALSE(pipeOut->write("line\n", error));
  EXPECT_EQ(error, "cannot write 'pipe.log': Broken pipe");
  signal(SIGPIPE, previous);
}

TEST_F(FilesTest, StreamedFileTruncatesARegularFileAndRefusesOthers) {
  std::string error;
  touch("log.jsonl");
  std::unique_ptr<StreamedFile> log = StreamedFile::create(path("log.jsonl"), error);
  ASSERT_NE(log, nullptr) << error;
  ASSERT_TRUE(log->write("a\n", error)) << error;
  ASSERT_TRUE(log->write("b\n", error)) << error;
  ASSERT_TRUE(log->close(error)) << error;
  std::string bytes;
  ASSERT_TRUE(readFile(path("log.jsonl"), bytes, error)) << error;
  EXPECT_EQ(bytes, "a\nb\n");
  for (const std::string &target : {fifo, std::string("/dev/null"), dir.string()}) {
    EXPECT_EQ(StreamedFile::create(target, error), nullptr) << target;
    EXPECT_NE(error.find("it exists and is not a regular file"), std::string::npos) << error;
  }
}

} // namespace
