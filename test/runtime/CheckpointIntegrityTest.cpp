//===- CheckpointIntegrityTest.cpp - checkpoints' checksums and metadata --===//
#include "runtime/io/CheckpointIntegrity.h"

#include "HostArrays.h"

#include <gtest/gtest.h>

using namespace memc::runtime;

using memc::testing::floats;

namespace {

const CheckpointMetadata kFields{3, "0123456789abcdef", "mlp.onnx", "adamw"};

class CheckpointIntegrityTest : public ::testing::Test {
protected:
  HostArray weight = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  HostArray moment = floats({2, 3}, {0.5f, 0, 0, 0, 0, -0.25f});
  std::vector<TensorRef> tensors = {tensorRef("fc.weight", weight),
                                    tensorRef("fc.weight.exp_avg", moment)};

  std::string serialize(const std::map<std::string, std::string> &metadata) {
    std::string bytes, error;
    EXPECT_TRUE(serializeSafetensors(tensors, metadata, bytes, error)) << error;
    return bytes;
  }
  /// readCheckpointMetadata's message for `bytes` (empty when it accepts them).
  std::string problem(const std::string &bytes, CheckpointMetadata &fields) {
    SafetensorsFile file;
    std::string error;
    if (!file.parse(bytes, error))
      return error;
    return readCheckpointMetadata(file, fields, error) ? "" : error;
  }
  std::string problem(const std::string &bytes) {
    CheckpointMetadata fields;
    return problem(bytes, fields);
  }
};

TEST_F(CheckpointIntegrityTest, RoundTrips) {
  CheckpointMetadata fields;
  EXPECT_EQ(problem(serialize(checkpointMetadata(kFields, tensors)), fields), "");
  EXPECT_EQ(fields.step, 3);
  EXPECT_EQ(fields.program, kFields.program);
  EXPECT_EQ(fields.model, "mlp.onnx");
  EXPECT_EQ(fields.optimizer, "adamw");
}

// 19 of 20 bit flips once resumed silently. Now a flip is an error, or it changed nothing the
// checkpoint says: the same fields and the same tensors (the header's padding, say).
TEST_F(CheckpointIntegrityTest, EveryFlippedByteIsAnErrorOrChangesNothing) {
  std::string good = serialize(checkpointMetadata(kFields, tensors));
  SafetensorsFile original;
  std::string error;
  ASSERT_TRUE(original.parse(good, error)) << error;
  int refused = 0, harmless = 0;
  for (size_t at = 0; at < good.size(); ++at)
    for (int bit : {0, 3, 6}) {
      std::string bytes = good;
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      CheckpointMetadata fields;
      if (!problem(bytes, fields).empty()) {
        ++refused;
        continue;
      }
      ++harmless;
      SafetensorsFile file;
      ASSERT_TRUE(file.parse(bytes, error));
      EXPECT_EQ(file.metadata(), original.metadata()) << "byte " << at << " bit " << bit;
      ASSERT_EQ(file.tensors().size(), original.tensors().size());
      for (size_t i = 0; i < file.tensors().size(); ++i) {
        const SafetensorsTensor &a = file.tensors()[i], &b = original.tensors()[i];
        EXPECT_TRUE(a.name == b.name && a.dtypeName == b.dtypeName && a.shape == b.shape &&
                    a.bytes == b.bytes)
            << "byte " << at << " bit " << bit << " changed tensor '" << b.name << "'";
      }
    }
  EXPECT_GT(refused, 0);
  EXPECT_LT(harmless, refused / 10) << "most bytes matter";
}

TEST_F(CheckpointIntegrityTest, NamesTheCorruptedSection) {
  std::string good = serialize(checkpointMetadata(kFields, tensors));
  std::string data = good;
  data[data.size() - 1] ^= 1; // the last byte of the optimizer state
  EXPECT_EQ(problem(data), "tensor 'fc.weight.exp_avg' is corrupted (checksum mismatch)");
  std::string step = good;
  step.replace(step.find("\"step\":\"3\""), 10, "\"step\":\"7\"");
  EXPECT_EQ(problem(step), "section 'metadata' is corrupted (checksum mismatch)");
  std::map<std::string, std::string> edited = checkpointMetadata(kFields, tensors);
  edited["step"] = ""; // edited by hand, checksums left alone
  EXPECT_EQ(problem(serialize(edited)), "section 'metadata' is corrupted (checksum mismatch)");
}

TEST_F(CheckpointIntegrityTest, RefusesCheckpointsWithoutChecksums) {
  // What memc wrote before checkpoints carried checksums.
  std::string old = serialize({{"format", "memc-checkpoint"},
                               {"step", "3"},
                               {"program", kFields.program},
                               {"model", "mlp.onnx"},
                               {"optimizer", "adamw"}});
  EXPECT_NE(problem(old).find("the checkpoint carries no checksums: an older memc wrote it"),
            std::string::npos)
      << problem(old);
  EXPECT_NE(problem(serialize({{"format", "pt"}})).find("not a memc checkpoint"),
            std::string::npos);
}

// Checksums prove a checkpoint undamaged, not sensible: the fields are validated too, here in
// checkpoints sealed with valid checksums around bad values.
TEST_F(CheckpointIntegrityTest, ValidatesTheFieldsOfSealedCheckpoints) {
  auto sealed = [&](const std::string &key, const std::string &value) {
    std::map<std::string, std::string> metadata = checkpointMetadata(kFields, tensors);
    if (value == "<erase>")
      metadata.erase(key);
    else
      metadata[key] = value;
    sealCheckpointMetadata(metadata, tensors);
    return problem(serialize(metadata));
  };
  for (const char *step : {"", "-1", "+3", " 3", "3 ", "0x10", "3.0", "1e3", "9223372036854775808",
                           "99999999999999999999999", "<erase>"}) {
    std::string message = sealed("step", step);
    EXPECT_NE(message.find("is not a decimal integer from 0 to 9223372036854775807"),
              std::string::npos)
        << "step '" << step << "': " << message;
  }
  CheckpointMetadata fields;
  std::map<std::string, std::string> largest = checkpointMetadata(kFields, tensors);
  largest["step"] = "9223372036854775807";
  sealCheckpointMetadata(largest, tensors);
  EXPECT_EQ(problem(serialize(largest), fields), "");
  EXPECT_EQ(fields.step, INT64_MAX); // the runner refuses it: it is at or past any --steps
  for (const char *program : {"", "0123456789ABCDEF", "0123456789abcde", "0123456789abcdefa",
                              "0123456789abcdeg", "<erase>"})
    EXPECT_NE(sealed("program", program).find("is not 16 hex digits"), std::string::npos)
        << program;
  EXPECT_NE(sealed("model", "<erase>").find("no \"model\" entry"), std::string::npos);
  EXPECT_NE(sealed("optimizer", "<erase>").find("no \"optimizer\" entry"), std::string::npos);
}

} // namespace
