//===- SafetensorsTest.cpp - the safetensors reader and writer ------------===//
#include "runtime/io/Safetensors.h"
#include "runtime/support/Bytes.h"

#include "HostArrays.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace memc::runtime;

using memc::testing::floats;

namespace {

/// A file with the given JSON header and `dataSize` zero data bytes.
std::string fileWithHeader(const std::string &header, size_t dataSize) {
  std::string bytes;
  appendLittleEndian<uint64_t>(bytes, header.size());
  return bytes + header + std::string(dataSize, '\0');
}

std::string parseError(const std::string &bytes) {
  SafetensorsFile file;
  std::string error;
  EXPECT_FALSE(file.parse(bytes, error));
  return error;
}

TEST(SafetensorsTest, RoundTrips) {
  HostArray weight = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  HostArray bias;
  bias.dtype = DType::I64;
  bias.shape = {};
  bias.bytes.assign(8, 0);
  bias.bytes[0] = 42;
  HostArray empty = floats({0, 4}, {});
  std::string bytes, error;
  ASSERT_TRUE(serializeSafetensors(
      {tensorRef("weight", weight), tensorRef("bias \"quoted\"", bias), tensorRef("empty", empty)},
      {{"format", "pt"}}, bytes, error))
      << error;
  EXPECT_EQ(readLittleEndian<uint64_t>(bytes.data()) % 8, 0u);

  SafetensorsFile file;
  ASSERT_TRUE(file.parse(bytes, error)) << error;
  ASSERT_EQ(file.tensors().size(), 3u);
  EXPECT_EQ(file.metadata().at("format"), "pt");
  const SafetensorsTensor *w = file.find("weight");
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->supported);
  EXPECT_EQ(w->dtype, DType::F32);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(w->bytes.data(), weight.bytes.data(), 24), 0);
  const SafetensorsTensor *b = file.find("bias \"quoted\"");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->dtype, DType::I64);
  EXPECT_TRUE(b->shape.empty());
  EXPECT_EQ(readLittleEndian<uint64_t>(b->bytes.data()), 42u);
  EXPECT_EQ(file.find("empty")->bytes.size(), 0u);
  EXPECT_EQ(file.find("missing"), nullptr);
}

TEST(SafetensorsTest, ReadsAFileWrittenByPython) {
  SafetensorsFile file;
  std::string error;
  ASSERT_TRUE(file.open(MEMC_RUNTIME_TEST_DATA "/python.safetensors", error)) << error;
  EXPECT_EQ(file.metadata().at("format"), "pt");
  const SafetensorsTensor *weight = file.find("weight");
  ASSERT_TRUE(weight);
  EXPECT_EQ(weight->shape, (std::vector<int64_t>{3, 2}));
  float values[6];
  std::memcpy(values, weight->bytes.data(), sizeof(values));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(values[i], static_cast<float>(i));
  EXPECT_EQ(file.find("bias")->dtype, DType::F16);
  EXPECT_EQ(readLittleEndian<uint16_t>(file.find("bias")->bytes.data()), 0xbc00); // -1.0
  EXPECT_EQ(readLittleEndian<uint64_t>(file.find("steps")->bytes.data()), 12u);
}

TEST(SafetensorsTest, ListsUnsupportedDtypes) {
  SafetensorsFile file;
  std::string error;
  ASSERT_TRUE(file.parse(
      fileWithHeader(R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})", 16), error))
      << error;
  EXPECT_FALSE(file.find("d")->supported);
  EXPECT_EQ(file.find("d")->dtypeName, "F64");
}

TEST(SafetensorsTest, RejectsMalformedFiles) {
  auto entry = [](const std::string &name, const std::string &dtype, const std::string &shape,
                  int begin, int end) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
           ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
  };
  struct Case {
    std::string bytes;
    const char *message;
  } cases[] = {
      {"abc", "truncated"},
      {std::string("\xff\xff\xff\xff\x00\x00\x00\x00", 8), "exceeds"},
      {fileWithHeader("{", 0), "malformed JSON"},
      {fileWithHeader("[]", 0), "not a JSON object"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("a", "F32", "[2]", 0, 8) +
                          "}",
                      8),
       "duplicate key"},
      {fileWithHeader("{" + entry("a", "X99", "[2]", 0, 8) + "}", 8), "unknown dtype"},
      {fileWithHeader("{" + entry("a", "F32", "[-2]", 0, 8) + "}", 8), "non-negative"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 0, 12) + "}", 12), "needs 8"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 0, 8) + "}", 4), "outside"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 8, 0) + "}", 8), "outside"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) +
                          "}",
                      12),
       "overlap"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 4, 12) + "}", 12), "a hole"},
      {fileWithHeader("{" + entry("a", "F32", "[2]", 0, 8) + "}", 9), "cover 8 of the 9"},
      {fileWithHeader("{" + entry("a", "F32", "[4611686018427387904,4]", 0, 8) + "}", 8),
       "too large"},
      {fileWithHeader(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})", 4),
       "unknown field"},
      {fileWithHeader(R"({"a":{"dtype":"F32","shape":[1]}})", 4), "needs dtype"},
      {fileWithHeader(R"({"__metadata__":{"k":1}})", 0), "not a string"},
      {fileWithHeader(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4),
       "two non-negative"},
  };
  for (const Case &c : cases) {
    std::string error = parseError(c.bytes);
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "expected '" << c.message << "', got: " << error;
  }
}

TEST(SafetensorsTest, WriterRefusesBadTensors) {
  HostArray a = floats({2}, {1, 2});
  std::string bytes, error;
  EXPECT_FALSE(serializeSafetensors({tensorRef("a", a), tensorRef("a", a)}, {}, bytes, error));
  EXPECT_NE(error.find("twice"), std::string::npos) << error;
  EXPECT_FALSE(serializeSafetensors({tensorRef("__metadata__", a)}, {}, bytes, error));
  a.shape = {3};
  EXPECT_FALSE(serializeSafetensors({tensorRef("a", a)}, {}, bytes, error));
  EXPECT_NE(error.find("needs"), std::string::npos) << error;
}

// The rule the writer applies, which the training loop checks before the first step (a name
// refused only at --save lost the trained weights).
TEST(SafetensorsTest, NameRuleRefusesEmptyReservedAndRepeatedNames) {
  std::string error;
  EXPECT_TRUE(checkTensorNames({"w", "w.alias", "b"}, error)) << error;
  EXPECT_FALSE(checkTensorNames({"w", ""}, error));
  EXPECT_NE(error.find("named \"\""), std::string::npos) << error;
  EXPECT_FALSE(checkTensorNames({"__metadata__"}, error));
  EXPECT_NE(error.find("__metadata__"), std::string::npos) << error;
  EXPECT_FALSE(checkTensorNames({"w", "b", "w"}, error));
  EXPECT_NE(error.find("\"w\" twice"), std::string::npos) << error;
}

TEST(SafetensorsTest, TruncationsNeverCrash) {
  HostArray a = floats({2, 2}, {1, 2, 3, 4});
  std::string bytes, error;
  ASSERT_TRUE(serializeSafetensors({tensorRef("a", a), tensorRef("b", a)}, {{"k", "v"}}, bytes,
                                   error));
  for (size_t size = 0; size < bytes.size(); ++size) {
    SafetensorsFile file;
    EXPECT_FALSE(file.parse(std::string_view(bytes).substr(0, size), error)) << size;
  }
}

TEST(SafetensorsTest, OpenNamesTheMissingFile) {
  SafetensorsFile file;
  std::string error;
  EXPECT_FALSE(file.open("/nonexistent/w.safetensors", error));
  EXPECT_NE(error.find("/nonexistent/w.safetensors"), std::string::npos) << error;
}

} // namespace
