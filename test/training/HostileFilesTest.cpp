//===- HostileFilesTest.cpp - programs given files that are not files ----===//
//
// A compiled program (and the plain memc-runner) refuses, with exit code 1 and a message naming
// the file, any input that is a FIFO, a directory or a device (reading a FIFO would block forever)
// and any output target that exists and is not a regular file (renaming over /dev/null would
// replace the device); the FIFO is left a FIFO. Every command runs under `timeout 30`: a hang shows
// as exit code 124, not as a stuck test. A killed write's temporaries of a checkpoint or --save
// target are removed by the next run writing that target.
//
//===----------------------------------------------------------------------===//
#include "../runtime/ZipBomb.h"
#include "TrainingTestSupport.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace memc::runtime;
using namespace memc::test;
namespace fs = std::filesystem;

namespace {

class HostileFiles : public testing::Test {
protected:
  void SetUp() override {
    dir = scratchDirectory();
    trainer = dir + "/mlp.train";
    fifo = dir + "/fifo";
    data = kData + "/mlp.data.npz";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, trainer), dir, output), 0)
        << output;
  }

  /// Runs `command` under a timeout; returns its exit status (124 if it hung).
  int runPromptly(const std::string &command) { return run("timeout 30 " + command, dir, output); }

  void expectRefused(const std::string &command, const std::string &message) {
    EXPECT_EQ(runPromptly(command), 1) << command << "\n" << output;
    EXPECT_NE(output.find(message), std::string::npos) << command << "\n" << output;
    struct stat info;
    ASSERT_EQ(stat(fifo.c_str(), &info), 0);
    EXPECT_TRUE(S_ISFIFO(info.st_mode)) << command << " replaced the FIFO";
  }

  std::string dir, trainer, fifo, data, output;
};

TEST_F(HostileFiles, InputsThatAreNotRegularFilesAreRefusedPromptly) {
  std::string isFifo = "'" + fifo + "' is a FIFO, not a regular file";
  expectRefused(trainer + " --data " + fifo + " --steps 1", isFifo);
  expectRefused(trainer + " --data " + dir + " --steps 1", "is a directory, not a regular file");
  expectRefused(trainer + " --data /dev/zero --steps 1",
                "'/dev/zero' is a character device, not a regular file");
  fs::create_directories(dir + "/resume");
  ASSERT_EQ(mkfifo((dir + "/resume/checkpoint.safetensors").c_str(), 0600), 0);
  expectRefused(trainer + " --data " + data + " --steps 2 --resume " + dir + "/resume",
                "is a FIFO, not a regular file");

  std::string inferer = dir + "/mlp.infer";
  ASSERT_EQ(run(memcCommand("mlp", {"--mode=infer"}, inferer), dir, output), 0) << output;
  expectRefused(inferer + " --inputs " + fifo, isFifo);

  std::string runner = kBin + "/memc-runner";
  expectRefused(runner + " --plan " + fifo + " --inputs " + data, isFifo);
  expectRefused(runner + " --plan " + data + " --weights " + fifo + " --inputs " + data, isFifo);
}

TEST_F(HostileFiles, OutputsOntoWhatIsNotARegularFileAreRefused) {
  std::string train = trainer + " --data " + data + " --steps 1";
  std::string notRegular = "it exists and is not a regular file";
  for (const std::string &target : {fifo, std::string("/dev/null")}) {
    expectRefused(train + " --log " + target, notRegular);
    expectRefused(train + " --save " + target, notRegular);
    expectRefused(train + " --dump-grads " + target, notRegular);
  }
  fs::create_directories(dir + "/checkpoints");
  ASSERT_EQ(mkfifo((dir + "/checkpoints/checkpoint.safetensors").c_str(), 0600), 0);
  expectRefused(train + " --checkpoint " + dir + "/checkpoints", notRegular);

  std::string inferer = dir + "/mlp.infer", inputs = dir + "/inputs.npz", error;
  ASSERT_EQ(run(memcCommand("mlp", {"--mode=infer"}, inferer), dir, output), 0) << output;
  NamedArrays arrays;
  ASSERT_TRUE(readNpz(data, arrays, error)) << error;
  // The first micro-batch of the input; the labels are no input of the inference program.
  arrays.resize(1);
  HostArray &input = arrays[0].second;
  input.shape[0] = 4;
  input.bytes.resize(4 * 16 * sizeof(float));
  ASSERT_TRUE(writeNpz(inputs, arrays, false, error)) << error;
  ASSERT_EQ(runPromptly(inferer + " --inputs " + inputs + " --outputs " + dir + "/out.npz"), 0)
      << output;
  expectRefused(inferer + " --inputs " + inputs + " --outputs " + fifo, notRegular);
  expectRefused(inferer + " --inputs " + inputs + " --outputs /dev/null", notRegular);
}

TEST_F(HostileFiles, AKilledWritesTemporariesAreRemovedByTheNextRun) {
  std::string checkpoints = dir + "/checkpoints", saved = dir + "/trained.safetensors";
  fs::create_directories(checkpoints);
  std::vector<std::string> stale = {checkpoints + "/checkpoint.safetensors.tmp.k1LLed",
                                    saved + ".tmp.Q2w3E4"};
  std::vector<std::string> kept = {checkpoints + "/notes.txt.tmp.k1LLed",
                                   checkpoints + "/checkpoint.safetensors.tmp.mine",
                                   dir + "/trained.onnx.tmp.Q2w3E4"};
  for (const std::string &path : stale)
    std::ofstream(path) << "half a checkpoint";
  for (const std::string &path : kept)
    std::ofstream(path) << "not memc's";
  ASSERT_EQ(runPromptly(trainer + " --data " + data + " --steps 2 --checkpoint " + checkpoints +
                        " --checkpoint-every 1 --save " + saved),
            0)
      << output;
  for (const std::string &path : stale)
    EXPECT_FALSE(fs::exists(path)) << path;
  for (const std::string &path : kept)
    EXPECT_TRUE(fs::exists(path)) << path;
  SafetensorsFile trained;
  std::string error;
  EXPECT_TRUE(trained.open(saved, error)) << error;
  EXPECT_EQ(runPromptly(trainer + " --data " + data + " --steps 3 --resume " + checkpoints), 0)
      << output;
}

// The zip bomb as --data: exit 1 naming the trick, in an address space of 3 GB (the four entries
// claim 8 GiB; the program needs a few hundred MB).
TEST_F(HostileFiles, ZipBombDataIsRefusedInBoundedMemory) {
  std::string bomb = dir + "/bomb.npz";
  std::ofstream(bomb, std::ios::binary)
      << memc::testing::zipBomb({"input.npy", "labels.npy", "c.npy", "d.npy"});
  EXPECT_EQ(run("bash -c 'ulimit -v 3000000 && exec timeout 30 " + trainer + " --data " + bomb +
                    " --steps 1'",
                dir, output),
            1)
      << output;
  EXPECT_NE(output.find(bomb + ": npz: entries 'input.npy' and 'labels.npy' overlap"),
            std::string::npos)
      << output;
}

} // namespace
