//===- OutputCollisionFuzzTest.cpp - outputs aimed at inputs, runs sharing a folder ===//
//
// Generated cases of two classes from issue 22, with fixed seeds:
//  - an output (--log, --dump-grads, --save, --checkpoint's file) aimed at an input (the program,
//    its --data, the --resume checkpoint) through another spelling of the path: as given, with
//    "./" or "dir/../", a symbolic link, a hard link. Each must exit 1 saying the output would
//    replace the input (or, for --save, refusing the file name), the input byte for byte as it
//    was, and no temporary left.
//  - two runs started a random few milliseconds apart on one --checkpoint folder. Each ends with
//    exit 0 or with exit 1 saying another run uses the folder; never both refused, never a
//    crash; afterwards the folder resumes and holds no temporary.
// The counts are printed for docs/reliability.md.
//
//===----------------------------------------------------------------------===//
#include "TrainingTestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace memc::test;
namespace fs = std::filesystem;

namespace {

std::string contents(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

/// Files named like memc's temporaries (TARGET.tmp.XXXXXX) anywhere under `dir`.
std::vector<std::string> temporariesUnder(const std::string &dir) {
  std::vector<std::string> found;
  for (const fs::directory_entry &entry : fs::recursive_directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp.") != std::string::npos)
      found.push_back(entry.path().string());
  return found;
}

class OutputCollisionFuzz : public testing::Test {
protected:
  void SetUp() override {
    dir = scratchDirectory();
    trainer = dir + "/mlp.train";
    data = dir + "/data.npz";
    resume = dir + "/resume";
    fs::copy_file(kData + "/mlp.data.npz", data);
    ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, trainer), dir, output), 0)
        << output;
    ASSERT_EQ(run(trainer + " --data " + data + " --steps 2 --checkpoint " + resume, dir, output),
              0)
        << output;
  }

  std::string dir, trainer, data, resume, output;
};

TEST_F(OutputCollisionFuzz, OutputsAimedAtInputsAreRefusedAndTheInputsKept) {
  std::mt19937_64 random(0xc0111de);
  const std::string checkpoint = resume + "/checkpoint.safetensors";
  const std::vector<std::string> inputs = {trainer, data, checkpoint};
  const std::vector<std::string> spellings = {"as given", "./", "dir/../", "symlink", "hardlink"};
  const std::vector<std::string> flags = {"--log", "--dump-grads", "--save", "--checkpoint"};
  std::vector<std::string> before;
  for (const std::string &input : inputs)
    before.push_back(contents(input));

  constexpr int kCases = 48;
  int sameFile = 0, badName = 0;
  for (int c = 0; c < kCases; ++c) {
    const std::string &target = inputs[random() % inputs.size()];
    const std::string &spelling = spellings[random() % spellings.size()];
    const std::string &flag = flags[random() % flags.size()];
    // Where the output goes: the target spelled another way. --checkpoint writes
    // FOLDER/checkpoint.safetensors, so its case puts the other spelling in a folder of its own.
    std::string caseDir = dir + "/case" + std::to_string(c);
    fs::create_directories(caseDir + "/sub");
    std::string name =
        flag == "--checkpoint" ? "checkpoint.safetensors" : fs::path(target).filename().string();
    std::string alias;
    if (spelling == "as given" || flag == "--checkpoint") {
      alias = caseDir + "/" + name;
      if (spelling == "hardlink")
        fs::create_hard_link(target, alias);
      else
        fs::create_symlink(target, alias);
    } else if (spelling == "./") {
      alias = fs::path(target).parent_path().string() + "/./" + name;
    } else if (spelling == "dir/../") {
      fs::create_directories(fs::path(target).parent_path() / "sub");
      alias = fs::path(target).parent_path().string() + "/sub/../" + name;
    } else if (spelling == "symlink") {
      alias = caseDir + "/" + name;
      fs::create_symlink(target, alias);
    } else {
      alias = caseDir + "/" + name;
      fs::create_hard_link(target, alias);
    }
    if (spelling == "as given" && flag != "--checkpoint") {
      fs::remove(alias);
      alias = target;
    }
    std::string out = flag == "--checkpoint" ? caseDir : alias;
    std::string command = "timeout 30 " + trainer + " --data " + data + " --steps 3 " + flag + " " +
                          out + (target == checkpoint ? " --resume " + resume : "");
    int status = run(command, dir, output);
    EXPECT_EQ(status, 1) << command << "\n" << output;
    bool named = output.find("which this run reads: write it elsewhere") != std::string::npos;
    // --save names its format by the extension, and none of the inputs' names has one.
    bool refusedName = flag == "--save" && output.find("--save") != std::string::npos &&
                       output.find("error:") != std::string::npos;
    EXPECT_TRUE(named || refusedName) << command << "\n" << output;
    sameFile += named;
    badName += !named && refusedName;
    for (size_t i = 0; i < inputs.size(); ++i)
      EXPECT_EQ(contents(inputs[i]), before[i]) << command << " changed " << inputs[i];
    EXPECT_EQ(temporariesUnder(dir), std::vector<std::string>{}) << command;
  }
  std::printf(
      "output collision fuzz: %d tried, %d refused as replacing an input, %d refused for the "
      "--save name, inputs unchanged\n",
      kCases, sameFile, badName);
  EXPECT_GT(sameFile, kCases / 2);
}

TEST_F(OutputCollisionFuzz, RunsSharingACheckpointFolderNeverBreakIt) {
  std::mt19937_64 random(0xf01de5);
  constexpr int kTrials = 8;
  int serial = 0, refused = 0;
  for (int t = 0; t < kTrials; ++t) {
    std::string folder = dir + "/shared" + std::to_string(t);
    fs::create_directories(folder);
    std::string train = "timeout 60 " + trainer + " --data " + data +
                        " --steps 300 --checkpoint-every 1 --checkpoint " + folder;
    double delay = static_cast<double>(random() % 300) / 1000;
    // Both exit codes on one line: "A B".
    std::string command = "(" + train + " > " + folder + "/a.log 2>&1; echo $? > " + folder +
                          "/a.rc) & sleep " + std::to_string(delay) + "; " + train + " > " +
                          folder + "/b.log 2>&1; echo $? > " + folder + "/b.rc; wait; cat " +
                          folder + "/a.rc " + folder + "/b.rc | tr '\\n' ' '";
    ASSERT_EQ(run(command, dir, output), 0) << output;
    int first = -1, second = -1;
    std::istringstream(output) >> first >> second;
    std::string logs = contents(folder + "/a.log") + contents(folder + "/b.log");
    bool bothRan = first == 0 && second == 0;
    bool oneRefused = (first == 0) != (second == 0) && (first | second) == 1 &&
                      logs.find("another run is using this folder") != std::string::npos;
    EXPECT_TRUE(bothRan || oneRefused) << "exit codes " << first << " " << second << "\n" << logs;
    serial += bothRan;
    refused += oneRefused;
    EXPECT_EQ(temporariesUnder(folder), std::vector<std::string>{});
    EXPECT_EQ(run("timeout 60 " + trainer + " --data " + data + " --steps 301 --resume " + folder,
                  dir, output),
              0)
        << output;
  }
  std::printf("shared checkpoint folder fuzz: %d trials, %d one after the other, %d with the "
              "second refused, every folder resumed\n",
              kTrials, serial, refused);
}

} // namespace
