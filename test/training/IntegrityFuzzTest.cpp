//===- IntegrityFuzzTest.cpp - damaged programs and checkpoints fail cleanly ===//
//
// Flips bits and truncates, at positions drawn from fixed seeds, a small compiled inference
// program, a small training program and a checkpoint, and runs each copy under a 30 s timeout
// (which only a real hang reaches). Every copy must exit with code 1 and a message, or, where
// the damage provably changed nothing, exit 0 with exactly the clean copy's outputs; a signal, a
// hang, or any other exit 0 (silent) fails the test. Every byte of a program is under a checksum,
// so no damage to one is harmless; a checkpoint's is when it parses to the same metadata and
// tensors (the header's padding, say) and training ends with the same weights. Each test prints its counts, which
// docs/reliability.md records. Flips land in the appended program (plan, weights, footer), not in
// the runner's machine code, and each section gets its share of them.
//
//===----------------------------------------------------------------------===//
#include "TrainingTestSupport.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Files.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <random>

using namespace memc::runtime;
using namespace memc::test;

namespace {

/// Long enough for any of these runs on a loaded machine; only a hang reaches it.
constexpr const char *kTimeout = "timeout 30 ";
constexpr int kTimedOut = 124;

std::string readBytes(const std::string &path) {
  std::string bytes, error;
  EXPECT_TRUE(readFile(path, bytes, error)) << error;
  return bytes;
}

/// A region of a file that damage is drawn from, and how many flips it gets.
struct Region {
  const char *name;
  size_t begin, end;
  int flips;
};

struct Counts {
  int tried = 0, cleanError = 0, harmless = 0, crash = 0, hang = 0, silent = 0;
  std::string summary(const char *what) const {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "%s: %d tried, %d clean errors, %d harmless (exit 0, same outputs), %d "
                  "crashes, %d hangs, %d silent",
                  what, tried, cleanError, harmless, crash, hang, silent);
    return text;
  }
};

class IntegrityFuzz : public testing::Test {
protected:
  void SetUp() override { dir = scratchDirectory(); }

  /// Writes `damaged` to `path`, runs `command` and sorts the outcome into `counts`; `same`
  /// says whether an exit-0 run was harmless: the damage changed nothing that matters and the
  /// run produced the clean outputs.
  void trial(const std::string &path, const std::string &damaged, unsigned mode,
             const std::string &command, const std::function<bool(const std::string &)> &same,
             const std::string &what, Counts &counts) {
    std::string error, output;
    std::filesystem::remove_all(dir + "/out");
    std::filesystem::create_directories(dir + "/out");
    ASSERT_TRUE(writeFileAtomically(path, {damaged}, mode, error)) << error;
    int status = run(kTimeout + command, dir, output);
    ++counts.tried;
    if (status == 1 && output.find("error: ") != std::string::npos) {
      ++counts.cleanError;
    } else if (status == 0 && same(damaged)) {
      ++counts.harmless;
    } else if (status == kTimedOut) {
      ++counts.hang;
      ADD_FAILURE() << what << ": hangs";
    } else if (status == 0 || status == 1) {
      ++counts.silent;
      ADD_FAILURE() << what << ": exit " << status << " without a message or with other outputs\n"
                    << output;
    } else {
      ++counts.crash;
      ADD_FAILURE() << what << ": exit status " << status << "\n" << output;
    }
  }

  /// Flips one random bit at random positions of each region, then truncates the file at
  /// `truncations` random lengths from `truncateFrom` on, running each copy.
  void fuzz(const std::string &path, const std::string &good, unsigned mode, uint64_t seed,
            const std::vector<Region> &regions, size_t truncateFrom, int truncations,
            const std::string &command, const std::function<bool(const std::string &)> &same, Counts &counts) {
    std::mt19937_64 random(seed);
    for (const Region &region : regions)
      for (int i = 0; i < region.flips; ++i) {
        size_t at = region.begin + random() % (region.end - region.begin);
        int bit = static_cast<int>(random() % 8);
        std::string damaged = good;
        damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
        trial(path, damaged, mode, command, same,
              std::string(region.name) + " byte " + std::to_string(at) + " bit " +
                  std::to_string(bit),
              counts);
      }
    for (int i = 0; i < truncations; ++i) {
      size_t length = truncateFrom + random() % (good.size() - truncateFrom);
      trial(path, good.substr(0, length), mode, command, same,
            "truncated to " + std::to_string(length) + " bytes", counts);
    }
    ASSERT_TRUE(writeFileAtomically(path, {good}, mode, error)) << error;
  }

  /// Fuzzes the program at `program`, whose clean `command` must exit 0, with the given number
  /// of flips in its plan, weights and footer and of truncations after its runner. Every byte of
  /// a program is under a checksum: no exit 0 is harmless.
  void fuzzProgram(const std::string &program, const std::string &command, uint64_t seed,
                   int planFlips, int weightsFlips, int footerFlips, int truncations,
                   const char *what) {
    std::filesystem::create_directories(dir + "/out");
    ASSERT_EQ(run(command, dir, output), 0) << output;
    Bundle bundle;
    ASSERT_EQ(readBundle(program, bundle, error), BundleStatus::Found) << error;
    const char *start = bundle.file->bytes().data();
    size_t plan = static_cast<size_t>(bundle.plan.data() - start);
    size_t weights = static_cast<size_t>(bundle.weights.data() - start);
    size_t footer = bundle.file->bytes().size() - kBundleFooterSize;
    std::vector<Region> regions = {
        {"plan", plan, plan + bundle.plan.size(), planFlips},
        {"weights", weights, weights + bundle.weights.size(), weightsFlips},
        {"footer", footer, footer + kBundleFooterSize, footerFlips}};
    std::string good(bundle.file->bytes());
    bundle.file.reset();
    Counts counts;
    fuzz(program, good, 0755, seed, regions, plan, truncations, command,
         [](const std::string &) { return false; }, counts);
    finish(what, counts, planFlips + weightsFlips + footerFlips + truncations);
  }

  void finish(const char *what, const Counts &counts, int expected) {
    std::printf("integrity fuzz: %s\n", counts.summary(what).c_str());
    EXPECT_EQ(counts.tried, expected);
    EXPECT_EQ(counts.crash + counts.hang + counts.silent, 0) << counts.summary(what);
  }

  std::string dir, output, error;
};

TEST_F(IntegrityFuzz, DamagedInferenceProgramsFailCleanly) {
  std::string program = dir + "/mlp.run";
  ASSERT_EQ(run(memcCommand("mlp", {"--mode=infer"}, program), dir, output), 0) << output;
  NamedArrays recorded, inputs;
  ASSERT_TRUE(readNpz(kFixtures + "/mlp.io.npz", recorded, error)) << error;
  for (auto &[name, array] : recorded)
    if (name == "input")
      inputs.emplace_back(name, array);
  ASSERT_TRUE(writeNpz(dir + "/inputs.npz", inputs, /*compress=*/false, error)) << error;
  fuzzProgram(program,
              program + " --inputs " + dir + "/inputs.npz --outputs " + dir + "/out/outputs.npz",
              20261201, 110, 110, 40, 40, "inference program (mlp)");
}

TEST_F(IntegrityFuzz, DamagedTrainingProgramsFailCleanly) {
  std::string program = dir + "/mlp.train";
  ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, program), dir, output), 0)
      << output;
  fuzzProgram(program,
              program + " --data " + kData + "/mlp.data.npz --steps 2 --log " + dir +
                  "/out/log.jsonl --save " + dir + "/out/trained.onnx",
              20261202, 50, 30, 10, 10, "training program (mlp, --save .onnx)");
}

TEST_F(IntegrityFuzz, DamagedCheckpointsFailCleanly) {
  std::string program = dir + "/mlp.train", checkpoints = dir + "/checkpoints";
  ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, program), dir, output), 0)
      << output;
  std::string data = " --data " + kData + "/mlp.data.npz";
  std::filesystem::create_directories(checkpoints);
  ASSERT_EQ(run(program + data + " --steps 3 --checkpoint " + checkpoints, dir, output), 0)
      << output;
  std::string checkpoint = checkpoints + "/checkpoint.safetensors";
  std::string command = program + data + " --steps 5 --resume " + checkpoints +
                        " --save " + dir + "/out/trained.safetensors";
  std::filesystem::create_directories(dir + "/out");
  ASSERT_EQ(run(command, dir, output), 0) << output;
  std::string cleanSaved = readBytes(dir + "/out/trained.safetensors");
  std::string good = readBytes(checkpoint);
  SafetensorsFile parsed;
  ASSERT_TRUE(parsed.parse(good, error)) << error;
  size_t dataStart = static_cast<size_t>(parsed.tensors().front().bytes.data() - good.data());
  std::vector<Region> regions = {{"header", 0, dataStart, 130},
                                 {"tensors", dataStart, good.size(), 120}};
  Counts counts;
  auto sameCheckpoint = [&](const std::string &damaged) {
    SafetensorsFile file;
    std::string ignored;
    if (!file.parse(damaged, ignored) || file.metadata() != parsed.metadata() ||
        file.tensors().size() != parsed.tensors().size())
      return false;
    for (size_t i = 0; i < file.tensors().size(); ++i) {
      const SafetensorsTensor &a = file.tensors()[i], &b = parsed.tensors()[i];
      if (a.name != b.name || a.dtypeName != b.dtypeName || a.shape != b.shape ||
          a.bytes != b.bytes)
        return false;
    }
    return readBytes(dir + "/out/trained.safetensors") == cleanSaved;
  };
  fuzz(checkpoint, good, 0644, 20261203, regions, 0, 50, command, sameCheckpoint, counts);
  finish("checkpoint (mlp after 3 steps, resumed to 5)", counts, 300);
}

} // namespace
