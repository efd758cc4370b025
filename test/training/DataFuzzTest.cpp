//===- DataFuzzTest.cpp - corrupted data files given to programs ---------===//
//
// A bounded, deterministic fuzz of the data files programs read: the inputs of an inference
// program (.npz stored and deflated), the data set of a training program (the .npz numpy wrote)
// and the weights of the plain memc-runner (.safetensors). Each file is mutated with fixed seeds
// (single bit flips, truncations, edits of its size fields) and given to the program under
// `timeout 30`. Every case must end in
//   - exit 1 with an error message (a clean error), or
//   - exit 0 with exactly the output of the unchanged file (the mutation changed no meaning:
//     a zip timestamp, a JSON space), or
//   - for a byte inside a safetensors tensor's data only, exit 0 with other output: the format
//     has no checksum, so a weight changed in the file is a weight, not a corruption to detect;
// never a signal, a hang or a silent exit 0 with other results. The counts are printed (and
// recorded in docs/reliability.md).
//
//===----------------------------------------------------------------------===//
#include "../runtime/PlanBuilder.h"
#include "TrainingTestSupport.h"
#include "runtime/io/Files.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"
#include "runtime/support/Bytes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <random>

using namespace memc::runtime;
using namespace memc::test;

namespace {

/// The file's bytes, empty if it cannot be read (an output a failed run did not write).
std::string readAll(const std::string &path) {
  std::string bytes, error;
  return readFile(path, bytes, error) ? bytes : std::string();
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::string error;
  ASSERT_TRUE(writeFileAtomically(path, {bytes}, 0644, error)) << error;
}

/// Byte offsets of the little-endian size and offset fields of a zip archive (local headers,
/// central directory, end record) and of each .npy header's length, found by walking the
/// archive as it was written (the clean file).
std::vector<std::pair<size_t, size_t>> zipSizeFields(const std::string &zip) {
  std::vector<std::pair<size_t, size_t>> fields; // offset, width
  size_t end = zip.size() - 22;
  size_t central = readLittleEndian<uint32_t>(zip.data() + end + 16);
  for (size_t at : {end + 10, end + 12, end + 16})
    fields.push_back({at, at == end + 10 ? 2 : 4});
  for (size_t at = central; at + 46 <= end;) {
    for (size_t field : {20, 24, 28, 30, 42})
      fields.push_back({at + field, field == 28 || field == 30 ? 2 : 4});
    size_t local = readLittleEndian<uint32_t>(zip.data() + at + 42);
    for (size_t field : {18, 22, 26, 28})
      fields.push_back({local + field, field >= 26 ? 2 : 4});
    size_t data = local + 30 + readLittleEndian<uint16_t>(zip.data() + local + 26) +
                  readLittleEndian<uint16_t>(zip.data() + local + 28);
    if (readLittleEndian<uint16_t>(zip.data() + at + 10) == 0) // stored: the .npy is readable
      fields.push_back({data + 8, 2});
    at += 46 + readLittleEndian<uint16_t>(zip.data() + at + 28) +
          readLittleEndian<uint16_t>(zip.data() + at + 30) +
          readLittleEndian<uint16_t>(zip.data() + at + 32);
  }
  return fields;
}

/// The safetensors header length and every digit run in its JSON header (shapes, offsets).
std::vector<std::pair<size_t, size_t>> safetensorsSizeFields(const std::string &file) {
  std::vector<std::pair<size_t, size_t>> fields = {{0, 8}};
  size_t headerEnd = 8 + readLittleEndian<uint64_t>(file.data());
  for (size_t at = 8; at < headerEnd; ++at)
    if (std::isdigit(static_cast<unsigned char>(file[at])) &&
        !std::isdigit(static_cast<unsigned char>(file[at - 1])))
      fields.push_back({at, 0}); // width 0: a decimal number in text
  return fields;
}

struct Mutation {
  std::string bytes;
  /// Whether every changed byte lies in [dataStart, size): meaning may change undetectably.
  bool onlyTensorData = false;
};

/// The mutations of one file: `flips` single bit flips, `cuts` truncations and `edits` size-field
/// edits, all drawn from `seed`.
std::vector<Mutation> mutations(const std::string &clean, uint32_t seed, int flips, int cuts,
                                int edits, const std::vector<std::pair<size_t, size_t>> &fields,
                                size_t dataStart) {
  std::mt19937 random(seed);
  auto below = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); };
  std::vector<Mutation> out;
  for (int i = 0; i < flips; ++i) {
    size_t bit = below(clean.size() * 8);
    Mutation m{clean, bit / 8 >= dataStart};
    m.bytes[bit / 8] = static_cast<char>(m.bytes[bit / 8] ^ (1 << (bit % 8)));
    out.push_back(m);
  }
  for (int i = 0; i < cuts; ++i)
    out.push_back({clean.substr(0, i == 0 ? 0 : below(clean.size())), false});
  const uint64_t values[] = {0, 1, 0xff, 0xffff, 0xffffffff, ~uint64_t(0), uint64_t(1) << 31};
  for (int i = 0; i < edits; ++i) {
    auto [at, width] = fields[below(fields.size())];
    Mutation m{clean, false};
    if (width == 0) { // a decimal number: replace its first digit
      m.bytes[at] = static_cast<char>('0' + (m.bytes[at] - '0' + 1 + below(9)) % 10);
    } else {
      uint64_t old = 0;
      std::memcpy(&old, clean.data() + at, width);
      uint64_t value = below(3) == 0 ? old + 1 : below(3) == 0 ? old - 1 : values[below(7)];
      std::memcpy(m.bytes.data() + at, &value, width);
    }
    out.push_back(m);
  }
  return out;
}

struct Counts {
  int tried = 0, cleanError = 0, sameOutput = 0, changedWeights = 0, crash = 0, hang = 0,
      silent = 0;
};

/// One data file, one program: `run(file)` runs the program on `file` and returns its status,
/// `output()` what it produced to compare.
class DataFuzz : public testing::Test {
protected:
  void SetUp() override { dir = scratchDirectory(); }

  int runPromptly(const std::string &command) { return run("timeout 30 " + command, dir, output); }

  /// Runs every mutation of `clean` through `command(path)`, whose result `result()` reads.
  void fuzz(const std::string &what, const std::string &clean, std::vector<Mutation> cases,
            const std::function<std::string(const std::string &)> &command,
            const std::function<std::string()> &result) {
    std::string path = dir + "/case", cleanResult;
    writeAll(path, clean);
    ASSERT_EQ(runPromptly(command(path)), 0) << what << " (unchanged)\n" << output;
    cleanResult = result();
    ASSERT_FALSE(cleanResult.empty()) << what;
    Counts counts;
    for (size_t i = 0; i < cases.size(); ++i) {
      writeAll(path, cases[i].bytes);
      std::remove((dir + "/out.npz").c_str());
      int status = runPromptly(command(path));
      ++counts.tried;
      std::string label = what + " case " + std::to_string(i);
      if (status == 1 && output.find("error: ") != std::string::npos) {
        ++counts.cleanError;
      } else if (status == 0 && result() == cleanResult) {
        ++counts.sameOutput;
      } else if (status == 0 && cases[i].onlyTensorData) {
        ++counts.changedWeights;
      } else if (status == 124) {
        ++counts.hang;
        ADD_FAILURE() << label << " hung";
      } else if (status == 0) {
        ++counts.silent;
        ADD_FAILURE() << label << ": exit 0 with other output";
      } else {
        ++counts.crash;
        ADD_FAILURE() << label << ": exit status " << status << "\n" << output;
      }
    }
    // The mutations must reach the readers' checks, or the test proves nothing.
    EXPECT_GT(counts.cleanError, counts.tried / 2) << what;
    std::printf("[ counts   ] %s: tried %d, clean error %d, same output %d, changed weights %d, "
                "crash %d, hang %d, silent %d\n",
                what.c_str(), counts.tried, counts.cleanError, counts.sameOutput,
                counts.changedWeights, counts.crash, counts.hang, counts.silent);
  }

  /// The inputs of mlp's inference program: the first micro-batch of its data set.
  std::string inferenceInputs(bool compress) {
    NamedArrays arrays;
    std::string error, bytes;
    EXPECT_TRUE(readNpz(kData + "/mlp.data.npz", arrays, error)) << error;
    arrays.resize(1);
    arrays[0].second.shape[0] = 4;
    arrays[0].second.bytes.resize(4 * 16 * sizeof(float));
    EXPECT_TRUE(serializeNpz(arrays, compress, bytes, error)) << error;
    return bytes;
  }

  std::string dir, output;
};

TEST_F(DataFuzz, InferenceInputs) {
  std::string program = dir + "/mlp.infer";
  ASSERT_EQ(run(memcCommand("mlp", {"--mode=infer"}, program), dir, output), 0) << output;
  auto command = [&](const std::string &path) {
    return program + " --inputs " + path + " --outputs " + dir + "/out.npz";
  };
  auto result = [&] { return readAll(dir + "/out.npz"); };
  for (bool compress : {false, true}) {
    std::string clean = inferenceInputs(compress);
    fuzz(compress ? "inputs.npz (deflated)" : "inputs.npz (stored)", clean,
         mutations(clean, compress ? 11 : 7, 50, 10, 20, zipSizeFields(clean), clean.size()),
         command, result);
  }
}

TEST_F(DataFuzz, TrainingData) {
  std::string program = dir + "/mlp.train";
  ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, program), dir, output), 0)
      << output;
  std::string clean = readAll(kData + "/mlp.data.npz");
  // The loss of the one step, as the program prints it.
  auto result = [&] {
    size_t at = output.find("step 1 loss ");
    return at == std::string::npos ? std::string() : output.substr(at, output.find('\n', at) - at);
  };
  fuzz(
      "mlp.data.npz (numpy's)", clean,
      mutations(clean, 23, 50, 10, 20, zipSizeFields(clean), clean.size()),
      [&](const std::string &path) { return program + " --data " + path + " --steps 1"; }, result);
}

TEST_F(DataFuzz, RunnerWeights) {
  std::string plan = dir + "/tiny.plan", inputs = dir + "/in.npz", error;
  ASSERT_TRUE(writeFileAtomically(plan, {memc::testing::addReluPlan().bytes()}, 0644, error));
  HostArray x, w;
  x.shape = w.shape = {2, 3};
  x.bytes.resize(24);
  w.bytes.resize(24);
  float xs[] = {1, -2, 3, -4, 5, -6}, ws[] = {1, 1, 1, -1, -1, -1};
  std::memcpy(x.bytes.data(), xs, 24);
  std::memcpy(w.bytes.data(), ws, 24);
  ASSERT_TRUE(writeNpz(inputs, {{"x", x}}, false, error)) << error;
  ASSERT_TRUE(
      writeSafetensors(dir + "/w.safetensors", {tensorRef("w", w)}, {{"format", "pt"}}, error))
      << error;
  std::string clean = readAll(dir + "/w.safetensors");
  size_t dataStart = 8 + readLittleEndian<uint64_t>(clean.data());
  fuzz(
      "w.safetensors", clean,
      mutations(clean, 31, 50, 10, 20, safetensorsSizeFields(clean), dataStart),
      [&](const std::string &path) {
        return kBin + "/memc-runner --plan " + plan + " --weights " + path + " --inputs " + inputs +
               " --outputs " + dir + "/out.npz";
      },
      [&] { return readAll(dir + "/out.npz"); });
}

} // namespace
