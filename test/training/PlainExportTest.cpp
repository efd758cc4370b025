//===- PlainExportTest.cpp - plain exports train only what can train -------===//
//
// Models exported with torch.onnx.export's defaults and no metadata (export_plain_fixtures.py)
// train for a few steps with AdamW and weight decay; the saved model and the checkpoint show that
// an additive -inf mask (a buffer, as it holds -inf) and a 0/1 mask used only through
// masked_fill (no gradient path) keep their exact values, carry no optimizer state and have no
// gradient in --dump-grads, while the weights around them train. Exports from the helper
// (export_helper_fixtures.py) with memc.padding_idx show the lookup's padding row untrained.
//
//===----------------------------------------------------------------------===//
#include "TrainingTestSupport.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using namespace memc::runtime;
using namespace memc::test;

namespace {

constexpr int64_t kBatch = 2, kSeq = 8, kVocab = 32;

/// Token ids (`input`, ids 0 to kVocab-1, 0 included) and next-token labels for two
/// micro-batches of the plain fixtures' shape.
NamedArrays tokenData(const std::string &input) {
  auto tokens = [](int64_t offset) {
    HostArray array;
    array.dtype = DType::I64;
    array.shape = {2 * kBatch, kSeq};
    array.bytes.resize(2 * kBatch * kSeq * sizeof(int64_t));
    for (int64_t i = 0; i < 2 * kBatch * kSeq; ++i)
      array.as<int64_t>()[i] = (i * 7 + offset) % kVocab;
    return array;
  };
  return {{input, tokens(0)}, {"labels", tokens(7)}};
}

class PlainExportTraining : public testing::Test {
protected:
  void SetUp() override { dir = scratchDirectory(); }

  /// Builds `model` with AdamW and weight decay, trains 4 steps, and opens what it saved.
  /// Helper exports have a dynamic batch, bound to the micro-batch for graph input `input`.
  void train(const std::string &model, const std::string &input = "idx", bool bindBatch = false) {
    std::string program = dir + "/" + model + ".train", data = dir + "/data.npz", error;
    // Plain exports are refused as folded unless accepted; what they then train is the point.
    std::vector<std::string> flags = {"--loss",         "cross_entropy", "--optimizer",
                                      "adamw",          "--lr",          "0.01",
                                      "--weight-decay", "0.1",           "--accept-folded-export"};
    if (bindBatch)
      flags.insert(flags.end(), {"--input-shape", input + "=" + std::to_string(kBatch) + "x" +
                                                      std::to_string(kSeq)});
    ASSERT_EQ(run(memcCommand(model, flags, program), dir, output), 0) << output;
    ASSERT_TRUE(writeNpz(data, tokenData(input), /*compress=*/false, error)) << error;
    std::filesystem::create_directories(dir + "/checkpoints");
    ASSERT_EQ(run(program + " --data " + data + " --steps 4 --save " + dir +
                      "/trained.safetensors --dump-grads " + dir + "/grads.npz --checkpoint " +
                      dir + "/checkpoints --checkpoint-every 4",
                  dir, output),
              0)
        << output;
    ASSERT_TRUE(saved.open(dir + "/trained.safetensors", error)) << error;
    ASSERT_TRUE(checkpoint.open(dir + "/checkpoints/checkpoint.safetensors", error)) << error;
    ASSERT_TRUE(readNpz(dir + "/grads.npz", gradients, error)) << error;
  }

  /// The first step's gradient of `name`, as floats.
  std::vector<float> gradient(const std::string &name) {
    for (const auto &[entry, array] : gradients)
      if (entry == name) {
        EXPECT_EQ(array.dtype, DType::F32);
        std::vector<float> values(array.bytes.size() / sizeof(float));
        std::memcpy(values.data(), array.bytes.data(), array.bytes.size());
        return values;
      }
    ADD_FAILURE() << "no gradient of " << name;
    return {};
  }

  /// Whether row `row` of a gradient with `columns` columns is all zero.
  static bool rowIsZero(const std::vector<float> &values, int64_t row, int64_t columns) {
    return std::all_of(values.begin() + row * columns, values.begin() + (row + 1) * columns,
                       [](float value) { return value == 0.0f; });
  }

  bool hasGradient(const std::string &name) {
    return std::any_of(gradients.begin(), gradients.end(),
                       [&](const auto &entry) { return entry.first == name; });
  }

  /// The saved values of `name`, as floats.
  std::vector<float> savedValues(const std::string &name) {
    const SafetensorsTensor *tensor = saved.find(name);
    EXPECT_NE(tensor, nullptr) << name;
    if (!tensor)
      return {};
    EXPECT_EQ(tensor->dtype, DType::F32);
    std::vector<float> values(tensor->bytes.size() / sizeof(float));
    std::memcpy(values.data(), tensor->bytes.data(), tensor->bytes.size());
    return values;
  }

  /// Names in the checkpoint that are state kept for `param` (`param`.SUFFIX).
  std::vector<std::string> stateOf(const std::string &param) {
    std::vector<std::string> names;
    for (const SafetensorsTensor &tensor : checkpoint.tensors())
      if (tensor.name.rfind(param + ".", 0) == 0)
        names.push_back(tensor.name);
    return names;
  }

  std::string dir, output;
  SafetensorsFile saved, checkpoint;
  NamedArrays gradients; // --dump-grads: the first step's, one per trained parameter
};

TEST_F(PlainExportTraining, InfiniteMaskIsABufferWithoutState) {
  ASSERT_NO_FATAL_FAILURE(train("plain_gpt"));
  std::vector<float> mask = savedValues("mask");
  ASSERT_EQ(mask.size(), size_t(kSeq * kSeq));
  for (int64_t i = 0; i < kSeq; ++i)
    for (int64_t j = 0; j < kSeq; ++j) {
      float value = mask[i * kSeq + j];
      if (j > i)
        EXPECT_TRUE(std::isinf(value) && value < 0) << i << "," << j << ": " << value;
      else
        EXPECT_EQ(value, 0.0f) << i << "," << j;
    }
  EXPECT_TRUE(stateOf("mask").empty());
  EXPECT_FALSE(hasGradient("mask"));
  EXPECT_TRUE(hasGradient("onnx::MatMul_33"));
  EXPECT_FALSE(stateOf("wte.weight").empty());
  EXPECT_FALSE(stateOf("onnx::MatMul_33").empty());
}

TEST_F(PlainExportTraining, MaskWithoutAGradientPathGetsNoStateAndNoWeightDecay) {
  ASSERT_NO_FATAL_FAILURE(train("plain_masked_fill"));
  std::vector<float> bias = savedValues("bias");
  ASSERT_EQ(bias.size(), size_t(kSeq * kSeq));
  for (int64_t i = 0; i < kSeq; ++i)
    for (int64_t j = 0; j < kSeq; ++j) // weight decay would have shrunk the ones
      EXPECT_EQ(bias[i * kSeq + j], j <= i ? 1.0f : 0.0f) << i << "," << j;
  EXPECT_TRUE(stateOf("bias").empty());
  EXPECT_FALSE(hasGradient("bias"));
  EXPECT_TRUE(hasGradient("qkv.weight"));
  EXPECT_FALSE(stateOf("qkv.weight").empty());
}

// The export helper's memc.padding_idx: the embedding lookup gives its padding row no gradient,
// although the data holds that id (PyTorch's nn.Embedding(padding_idx=0)); the other rows train.
TEST_F(PlainExportTraining, HelperPaddingRowGetsNoGradientFromTheLookup) {
  constexpr int64_t kDim = 16;
  ASSERT_NO_FATAL_FAILURE(train("helper_padding", "idx", /*bindBatch=*/true));
  std::vector<float> grad = gradient("0.weight");
  ASSERT_EQ(grad.size(), size_t(kVocab * kDim));
  EXPECT_TRUE(rowIsZero(grad, 0, kDim));
  EXPECT_FALSE(rowIsZero(grad, 7, kDim)); // id 7 is in the first micro-batch too
}

// A head tied to the embedding still gives the padding row its gradient; only the lookup's
// part is dropped.
TEST_F(PlainExportTraining, HelperPaddingRowOfATiedHeadKeepsTheHeadsGradient) {
  constexpr int64_t kDim = 16;
  ASSERT_NO_FATAL_FAILURE(train("helper_tied_lm", "input_ids", /*bindBatch=*/true));
  std::vector<float> grad = gradient("wte.weight");
  ASSERT_EQ(grad.size(), size_t(kVocab * kDim));
  EXPECT_FALSE(rowIsZero(grad, 0, kDim));
}

} // namespace
