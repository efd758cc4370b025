//===- WeightStoreTest.cpp - indexing and reading initializers ------------===//
//
// The scanner's offsets must give exactly the bytes protobuf parsed, for the exported fixtures
// and for hand-written wire format; every malformed model or data file must end in an error
// that names the initializer.
//
//===----------------------------------------------------------------------===//

#include "compiler/importer/NonFiniteScan.h"
#include "compiler/importer/WeightStore.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fs = std::filesystem;
using memc::StoredTensor;
using memc::WeightStore;

namespace {

std::string fixture(const std::string &name) { return std::string(MEMC_FIXTURES_DIR) + "/" + name; }

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeAll(const fs::path &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

onnx::ModelProto loadModel(const std::string &path) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(readAll(path))) << path;
  return model;
}

std::vector<char> bytesOf(const std::string &text) { return {text.begin(), text.end()}; }

std::string floatBytes(std::vector<float> values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

onnx::TensorProto *addInitializer(onnx::ModelProto &model, const std::string &name,
                                  int32_t dataType, std::vector<int64_t> dims) {
  onnx::TensorProto *tensor = model.mutable_graph()->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(dataType);
  for (int64_t dim : dims)
    tensor->add_dims(dim);
  return tensor;
}

void setExternal(onnx::TensorProto *tensor,
                 std::vector<std::pair<std::string, std::string>> entries) {
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto &[key, value] : entries) {
    onnx::StringStringEntryProto *entry = tensor->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
}

// Minimal protobuf wire writer for hand-made model files.
std::string varint(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out.push_back(static_cast<char>(byte | (value ? 0x80 : 0)));
  } while (value);
  return out;
}
std::string tag(uint64_t field, uint64_t wireType) { return varint(field << 3 | wireType); }
std::string lengthDelimited(uint64_t field, const std::string &payload) {
  return tag(field, 2) + varint(payload.size()) + payload;
}

/// Each test gets its own directory for the model and data files it writes.
class WeightStoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::path(::testing::TempDir()) / "memc-weightstore" /
          (std::string(info->test_suite_name()) + "." + info->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string save(const onnx::ModelProto &model, const std::string &name = "model.onnx") {
    std::string bytes;
    EXPECT_TRUE(model.SerializeToString(&bytes));
    writeAll(dir / name, bytes);
    return (dir / name).string();
  }

  /// Saves `model`, indexes it and returns the error ("" on success).
  std::string indexError(const onnx::ModelProto &model) {
    std::string path = save(model);
    std::string error;
    bool ok = store.index(model, path, error);
    EXPECT_EQ(ok, error.empty()) << error;
    return ok ? "" : error;
  }

  fs::path dir;
  WeightStore store;
};

//===----------------------------------------------------------------------===//
// raw_data located by the wire scanner
//===----------------------------------------------------------------------===//

class EmbeddedFixtureTest : public WeightStoreTest,
                            public ::testing::WithParamInterface<const char *> {};

TEST_P(EmbeddedFixtureTest, ScannedOffsetsGiveTheParsedRawData) {
  std::string path = fixture(GetParam());
  onnx::ModelProto model = loadModel(path);
  std::string error;
  ASSERT_TRUE(store.index(model, path, error)) << error;
  const onnx::GraphProto &graph = model.graph();
  ASSERT_GT(graph.initializer_size(), 0);
  ASSERT_EQ(store.tensors().size(), size_t(graph.initializer_size()));
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const onnx::TensorProto &proto = graph.initializer(i);
    const StoredTensor &tensor = store.tensors()[i];
    SCOPED_TRACE(proto.name());
    EXPECT_EQ(tensor.name, proto.name());
    EXPECT_EQ(store.find(proto.name()), &tensor);
    EXPECT_EQ(tensor.dataType, proto.data_type());
    EXPECT_EQ(tensor.shape, std::vector<int64_t>(proto.dims().begin(), proto.dims().end()));
    EXPECT_EQ(tensor.file, path);
    EXPECT_TRUE(tensor.inlineBytes.empty());
    std::vector<char> bytes;
    ASSERT_TRUE(store.read(tensor, bytes, error)) << error;
    EXPECT_EQ(bytes, bytesOf(proto.raw_data()));
  }
  EXPECT_EQ(store.find("no such initializer"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EmbeddedFixtureTest,
                         ::testing::Values("mlp.onnx", "gpt2.onnx", "bert.onnx", "llama.onnx",
                                           "resnet.onnx", "resnet_bn.onnx", "dedup_identity.onnx",
                                           "optional_inputs.onnx"));

// Protobuf merges a repeated `graph`, keeps the last of a repeated name or raw_data and skips a
// known field with the wrong wire type; the scanner must agree with all of it.
TEST_F(WeightStoreTest, ScannerFollowsProtobufMergeRules) {
  std::string first = floatBytes({1, 2});
  std::string second = floatBytes({3, 4, 5});
  std::string unknownFields = tag(100, 5) + "abcd" + tag(101, 1) + "abcdefgh" + tag(102, 0) +
                              varint(300) + lengthDelimited(103, "skipped");
  std::string tensorA = lengthDelimited(9, floatBytes({9, 9})) + unknownFields +
                        lengthDelimited(8, "stale") + tag(1, 0) + varint(2) + tag(2, 0) +
                        varint(1) + lengthDelimited(9, first) + lengthDelimited(8, "a") +
                        tag(9, 0) + varint(7);
  std::string tensorB = lengthDelimited(8, "b") + tag(2, 0) + varint(1) + unknownFields +
                        lengthDelimited(9, second) + tag(1, 0) + varint(3);
  std::string graph1 = lengthDelimited(2, "g") + lengthDelimited(5, tensorA) + unknownFields;
  std::string graph2 = tag(7, 0) + varint(1) + lengthDelimited(5, tensorB);
  std::string file = tag(1, 0) + varint(8) + lengthDelimited(7, graph1) + tag(7, 0) + varint(5) +
                     unknownFields + lengthDelimited(7, graph2) + lengthDelimited(8, "");
  writeAll(dir / "handmade.onnx", file);

  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(file));
  ASSERT_EQ(model.graph().initializer_size(), 2);
  ASSERT_EQ(model.graph().initializer(0).raw_data(), first);
  ASSERT_EQ(model.graph().initializer(1).raw_data(), second);

  std::string error;
  ASSERT_TRUE(store.index(model, (dir / "handmade.onnx").string(), error)) << error;
  std::vector<char> bytes;
  ASSERT_TRUE(store.read(*store.find("a"), bytes, error)) << error;
  EXPECT_EQ(bytes, bytesOf(first));
  ASSERT_TRUE(store.read(*store.find("b"), bytes, error)) << error;
  EXPECT_EQ(bytes, bytesOf(second));
  EXPECT_EQ(store.find("b")->shape, std::vector<int64_t>{3});
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

TEST_F(WeightStoreTest, ExternalDataMatchesTheDataFileAndTheEmbeddedExport) {
  std::string path = fixture("mlp_external.onnx");
  onnx::ModelProto model = loadModel(path);
  // Both fixtures export the same seeded MLP, so their weights agree byte for byte.
  onnx::ModelProto embedded = loadModel(fixture("mlp.onnx"));
  std::string data = readAll(fixture("mlp_external.onnx.data"));
  std::string error;
  ASSERT_TRUE(store.index(model, path, error)) << error;
  ASSERT_EQ(store.tensors().size(), size_t(model.graph().initializer_size()));
  for (const onnx::TensorProto &proto : embedded.graph().initializer()) {
    SCOPED_TRACE(proto.name());
    const StoredTensor *tensor = store.find(proto.name());
    ASSERT_NE(tensor, nullptr);
    EXPECT_EQ(fs::path(tensor->file).filename(), "mlp_external.onnx.data");
    ASSERT_LE(tensor->offset + tensor->length, data.size());
    std::vector<char> bytes;
    ASSERT_TRUE(store.read(*tensor, bytes, error)) << error;
    EXPECT_EQ(bytes, bytesOf(data.substr(tensor->offset, tensor->length)));
    EXPECT_EQ(bytes, bytesOf(proto.raw_data()));
  }
}

TEST_F(WeightStoreTest, ExternalLengthDefaultsToTheShapeAndLocationMayBeNormalized) {
  writeAll(dir / "w.bin", "xxxx" + floatBytes({1, 2, 3}));
  onnx::ModelProto model;
  setExternal(addInitializer(model, "w", onnx::TensorProto::FLOAT, {3}),
              {{"location", "sub/../w.bin"}, {"offset", "4"}, {"checksum", "ignored"}});
  ASSERT_EQ(indexError(model), "");
  std::vector<char> bytes;
  std::string error;
  ASSERT_TRUE(store.read(*store.find("w"), bytes, error)) << error;
  EXPECT_EQ(bytes, bytesOf(floatBytes({1, 2, 3})));
}

TEST_F(WeightStoreTest, MissingExternalFileIsAnError) {
  onnx::ModelProto model;
  setExternal(addInitializer(model, "fc.weight", onnx::TensorProto::FLOAT, {4}),
              {{"location", "absent.bin"}});
  EXPECT_EQ(indexError(model), "initializer 'fc.weight': external data file 'absent.bin' does "
                               "not exist");
  EXPECT_EQ(store.find("fc.weight"), nullptr);
}

TEST_F(WeightStoreTest, ShortExternalFileIsAnError) {
  writeAll(dir / "w.bin", std::string(100, '\0'));
  onnx::ModelProto model;
  setExternal(addInitializer(model, "fc.weight", onnx::TensorProto::FLOAT, {32, 32}),
              {{"location", "w.bin"}, {"offset", "0"}, {"length", "4096"}});
  EXPECT_EQ(indexError(model),
            "initializer 'fc.weight': external data file 'w.bin' is 100 bytes, needs 4096 at "
            "offset 0");
}

TEST_F(WeightStoreTest, ExternalOffsetPastTheEndIsAnError) {
  writeAll(dir / "w.bin", std::string(16, '\0'));
  onnx::ModelProto model;
  setExternal(addInitializer(model, "b", onnx::TensorProto::FLOAT, {2}),
              {{"location", "w.bin"}, {"offset", "12"}});
  EXPECT_EQ(indexError(model),
            "initializer 'b': external data file 'w.bin' is 16 bytes, needs 8 at offset 12");
}

TEST_F(WeightStoreTest, ExternalLengthMustMatchTheShape) {
  writeAll(dir / "w.bin", std::string(64, '\0'));
  onnx::ModelProto model;
  setExternal(addInitializer(model, "b", onnx::TensorProto::FLOAT, {4}),
              {{"location", "w.bin"}, {"length", "32"}});
  EXPECT_EQ(indexError(model), "initializer 'b': external data length is 32 bytes, shape [4] of "
                               "FLOAT needs 16");
}

TEST_F(WeightStoreTest, MalformedExternalOffsetIsAnError) {
  writeAll(dir / "w.bin", std::string(64, '\0'));
  for (const char *offset : {"-4", "0x10", "", "99999999999999999999999"}) {
    onnx::ModelProto model;
    setExternal(addInitializer(model, "b", onnx::TensorProto::FLOAT, {4}),
                {{"location", "w.bin"}, {"offset", offset}});
    EXPECT_NE(indexError(model).find("initializer 'b': external data offset"), std::string::npos)
        << offset;
  }
}

TEST_F(WeightStoreTest, ExternalLocationMustStayInTheModelDirectory) {
  fs::create_directories(dir / "models");
  writeAll(dir / "w.bin", std::string(16, '\0'));
  for (const char *location : {"../w.bin", "a/../../w.bin", "./../w.bin", "..", ""}) {
    onnx::ModelProto model;
    setExternal(addInitializer(model, "w", onnx::TensorProto::FLOAT, {4}),
                {{"location", location}});
    std::string path = save(model, "models/model.onnx");
    std::string error;
    EXPECT_FALSE(store.index(model, path, error)) << location;
    EXPECT_EQ(error.rfind("initializer 'w': external data ", 0), 0u) << error;
  }
  onnx::ModelProto model;
  setExternal(addInitializer(model, "w", onnx::TensorProto::FLOAT, {4}),
              {{"location", (dir / "w.bin").string()}});
  EXPECT_NE(indexError(model).find("must be a relative path"), std::string::npos);
}

TEST_F(WeightStoreTest, ExternalDataMayNotBeASymlink) {
  writeAll(dir / "w.bin", std::string(16, '\0'));
  fs::create_symlink(dir / "w.bin", dir / "link.bin");
  onnx::ModelProto model;
  setExternal(addInitializer(model, "w", onnx::TensorProto::FLOAT, {4}),
              {{"location", "link.bin"}});
  EXPECT_EQ(indexError(model), "initializer 'w': external data file 'link.bin' is not a regular "
                               "file");
}

// Only the real path counts: a folder on the way that is a symlink out of the model's directory
// is refused (naming the initializer, the location and where it leads); symlinked folders that
// stay inside, and a model directory reached through a symlink, are fine.
TEST_F(WeightStoreTest, ExternalDataBehindASymlinkedFolderMustStayInTheModelDirectory) {
  fs::create_directories(dir / "models" / "real");
  fs::create_directories(dir / "outside");
  writeAll(dir / "outside" / "w.bin", std::string(16, '\0'));
  writeAll(dir / "models" / "real" / "w.bin", std::string(16, '\0'));
  fs::create_directory_symlink(dir / "outside", dir / "models" / "linkdir");
  fs::create_directory_symlink(dir / "models" / "real", dir / "models" / "inside");
  fs::create_directory_symlink(dir / "models", dir / "alias");
  auto indexAt = [&](const std::string &location, const std::string &modelPath) {
    onnx::ModelProto model;
    setExternal(addInitializer(model, "w", onnx::TensorProto::FLOAT, {4}),
                {{"location", location}});
    std::string path = save(model, modelPath), error;
    WeightStore fresh;
    return fresh.index(model, path, error) ? std::string() : error;
  };
  std::string outside = fs::canonical(dir / "outside" / "w.bin").string();
  std::string models = fs::canonical(dir / "models").string();
  EXPECT_EQ(indexAt("linkdir/w.bin", "models/model.onnx"),
            "initializer 'w': external data file 'linkdir/w.bin' is '" + outside +
                "', outside the model's directory '" + models + "'");
  EXPECT_EQ(indexAt("inside/w.bin", "models/model.onnx"), "");
  EXPECT_EQ(indexAt("real/w.bin", "alias/model.onnx"), "");
  EXPECT_NE(indexAt("linkdir/w.bin", "alias/model.onnx").find("outside the model's directory"),
            std::string::npos);
}

TEST_F(WeightStoreTest, ExternalDataWithRawDataIsAnError) {
  writeAll(dir / "w.bin", std::string(16, '\0'));
  onnx::ModelProto model;
  onnx::TensorProto *tensor = addInitializer(model, "w", onnx::TensorProto::FLOAT, {4});
  setExternal(tensor, {{"location", "w.bin"}});
  tensor->set_raw_data(std::string(16, '\0'));
  EXPECT_EQ(indexError(model), "initializer 'w': data is external but raw_data is also set");
}

TEST_F(WeightStoreTest, ReadReportsADataFileThatDisappeared) {
  writeAll(dir / "w.bin", std::string(16, '\0'));
  onnx::ModelProto model;
  setExternal(addInitializer(model, "w", onnx::TensorProto::FLOAT, {4}), {{"location", "w.bin"}});
  ASSERT_EQ(indexError(model), "");
  fs::remove(dir / "w.bin");
  std::vector<char> bytes;
  std::string error;
  EXPECT_FALSE(store.read(*store.find("w"), bytes, error));
  EXPECT_EQ(error.rfind("initializer 'w': cannot read 16 bytes at offset 0", 0), 0u) << error;
}

//===----------------------------------------------------------------------===//
// Typed value fields
//===----------------------------------------------------------------------===//

TEST_F(WeightStoreTest, TypedFieldsBecomeLittleEndianBytes) {
  onnx::ModelProto model;
  onnx::TensorProto *f32 = addInitializer(model, "f32", onnx::TensorProto::FLOAT, {2});
  f32->add_float_data(1.0f);
  f32->add_float_data(-2.5f);
  addInitializer(model, "f64", onnx::TensorProto::DOUBLE, {})->add_double_data(1.0);
  onnx::TensorProto *i64 = addInitializer(model, "i64", onnx::TensorProto::INT64, {2});
  i64->add_int64_data(-1);
  i64->add_int64_data(0x0102030405060708);
  addInitializer(model, "i32", onnx::TensorProto::INT32, {1})->add_int32_data(-2);
  addInitializer(model, "i16", onnx::TensorProto::INT16, {1})->add_int32_data(-3);
  addInitializer(model, "i8", onnx::TensorProto::INT8, {1})->add_int32_data(-4);
  addInitializer(model, "u8", onnx::TensorProto::UINT8, {1})->add_int32_data(200);
  onnx::TensorProto *flags = addInitializer(model, "bool", onnx::TensorProto::BOOL, {2});
  flags->add_int32_data(1);
  flags->add_int32_data(0);
  addInitializer(model, "f16", onnx::TensorProto::FLOAT16, {1})->add_int32_data(0x3c00);
  addInitializer(model, "bf16", onnx::TensorProto::BFLOAT16, {1})->add_int32_data(0xbf80);
  ASSERT_EQ(indexError(model), "");

  auto expect = [&](const char *name, std::string bytes) {
    const StoredTensor *tensor = store.find(name);
    ASSERT_NE(tensor, nullptr) << name;
    EXPECT_TRUE(tensor->file.empty()) << name;
    EXPECT_EQ(tensor->length, bytes.size()) << name;
    std::vector<char> read;
    std::string error;
    ASSERT_TRUE(store.read(*tensor, read, error)) << error;
    EXPECT_EQ(read, bytesOf(bytes)) << name;
  };
  expect("f32", std::string("\x00\x00\x80\x3f\x00\x00\x20\xc0", 8));
  expect("f64", std::string("\x00\x00\x00\x00\x00\x00\xf0\x3f", 8));
  expect("i64", std::string(8, '\xff') + std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  expect("i32", "\xfe\xff\xff\xff");
  expect("i16", "\xfd\xff");
  expect("i8", "\xfc");
  expect("u8", "\xc8");
  expect("bool", std::string("\x01\x00", 2));
  expect("f16", std::string("\x00\x3c", 2));
  expect("bf16", "\x80\xbf");
}

TEST_F(WeightStoreTest, EmptyTensorNeedsNoData) {
  onnx::ModelProto model;
  addInitializer(model, "empty", onnx::TensorProto::FLOAT, {0, 5});
  ASSERT_EQ(indexError(model), "");
  const StoredTensor *tensor = store.find("empty");
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->length, 0u);
  std::vector<char> bytes(3);
  std::string error;
  ASSERT_TRUE(store.read(*tensor, bytes, error)) << error;
  EXPECT_TRUE(bytes.empty());
}

TEST_F(WeightStoreTest, TensorWithElementsButNoDataIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {2, 3});
  EXPECT_EQ(indexError(model), "initializer 'w': has no data");
}

TEST_F(WeightStoreTest, TypedFieldCountMustMatchTheShape) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::INT64, {3})->add_int64_data(1);
  EXPECT_EQ(indexError(model),
            "initializer 'w': int64_data is 8 bytes, shape [3] of INT64 needs 24");
}

TEST_F(WeightStoreTest, ValuesInTheWrongTypedFieldAreAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {1})->add_int64_data(1);
  EXPECT_EQ(indexError(model), "initializer 'w': values are stored in a field that FLOAT does "
                               "not use (expected float_data)");
}

//===----------------------------------------------------------------------===//
// Metadata validation
//===----------------------------------------------------------------------===//

TEST_F(WeightStoreTest, NegativeDimensionIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {2, -1});
  EXPECT_EQ(indexError(model), "initializer 'w': negative dimension -1");
}

TEST_F(WeightStoreTest, ElementCountOverflowIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {int64_t(1) << 40, int64_t(1) << 30});
  EXPECT_EQ(indexError(model), "initializer 'w': element count of shape overflows int64");
  onnx::ModelProto bytes;
  addInitializer(bytes, "w", onnx::TensorProto::DOUBLE, {int64_t(1) << 61});
  EXPECT_EQ(indexError(bytes), "initializer 'w': byte size of shape overflows int64");
}

TEST_F(WeightStoreTest, RawDataLengthMustMatchTheShape) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {2, 2})->set_raw_data(floatBytes({1, 2}));
  EXPECT_EQ(indexError(model), "initializer 'w': raw_data is 8 bytes, shape [2, 2] of FLOAT "
                               "needs 16");
}

TEST_F(WeightStoreTest, UnsupportedDataTypeIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "s", onnx::TensorProto::STRING, {1})->add_string_data("x");
  EXPECT_EQ(indexError(model), "initializer 's': unsupported data type STRING");
  onnx::ModelProto unknown;
  addInitializer(unknown, "u", 99, {});
  EXPECT_EQ(indexError(unknown), "initializer 'u': unsupported data type data type 99");
}

TEST_F(WeightStoreTest, DuplicateNamesAreAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {1})->set_raw_data(floatBytes({1}));
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {1})->set_raw_data(floatBytes({2}));
  EXPECT_EQ(indexError(model), "initializer 'w': defined more than once");
}

TEST_F(WeightStoreTest, UnnamedInitializerIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "", onnx::TensorProto::FLOAT, {1})->add_float_data(1);
  EXPECT_EQ(indexError(model), "initializer #0 has no name");
}

TEST_F(WeightStoreTest, FailedIndexLeavesTheStoreEmpty) {
  std::string path = fixture("mlp.onnx");
  std::string error;
  ASSERT_TRUE(store.index(loadModel(path), path, error)) << error;
  ASSERT_FALSE(store.tensors().empty());
  onnx::ModelProto broken;
  addInitializer(broken, "w", onnx::TensorProto::FLOAT, {-1});
  EXPECT_NE(indexError(broken), "");
  EXPECT_TRUE(store.tensors().empty());
}

//===----------------------------------------------------------------------===//
// Malformed model files seen by the scanner
//===----------------------------------------------------------------------===//

// Every cut that ends inside the initializers leaves the scanner unable to find them all.
TEST_F(WeightStoreTest, TruncatedModelFileIsAnError) {
  std::string path = fixture("mlp.onnx");
  onnx::ModelProto model = loadModel(path);
  std::string error;
  ASSERT_TRUE(store.index(model, path, error)) << error;
  uint64_t lastByte = 0;
  for (const StoredTensor &tensor : store.tensors())
    lastByte = std::max(lastByte, tensor.offset + tensor.length);
  std::string bytes = readAll(path);
  std::string cutPath = (dir / "cut.onnx").string();
  for (uint64_t cut = 0; cut < lastByte; ++cut) {
    writeAll(cutPath, bytes.substr(0, cut));
    ASSERT_FALSE(store.index(model, cutPath, error)) << "cut at " << cut;
    ASSERT_FALSE(error.empty());
  }
  writeAll(cutPath, bytes.substr(0, lastByte - 1));
  EXPECT_FALSE(store.index(model, cutPath, error));
  EXPECT_EQ(error.rfind("model file '" + cutPath + "' is malformed at byte ", 0), 0u) << error;
}

TEST_F(WeightStoreTest, MissingModelFileIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {1})->set_raw_data(floatBytes({1}));
  std::string error;
  EXPECT_FALSE(store.index(model, (dir / "absent.onnx").string(), error));
  EXPECT_NE(error.find("cannot open model file"), std::string::npos) << error;
}

TEST_F(WeightStoreTest, ModelFileThatDiffersFromTheParsedModelIsAnError) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {1})->set_raw_data(floatBytes({1}));
  onnx::ModelProto other = model;
  other.mutable_graph()->mutable_initializer(0)->set_name("v");
  std::string path = save(other);
  std::string error;
  EXPECT_FALSE(store.index(model, path, error));
  EXPECT_EQ(error, "initializer 'w': model file '" + path + "' has 'v' in its place");
  other.mutable_graph()->add_initializer()->set_name("x");
  path = save(other);
  EXPECT_FALSE(store.index(model, path, error));
  EXPECT_EQ(error, "model file '" + path + "' holds 2 initializers, the parsed model 1");
}

// Wire-level corruption: the parsed model is valid, the file next to it is not.
TEST_F(WeightStoreTest, MalformedWireFormatIsAnErrorNotACrash) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {1})->set_raw_data(floatBytes({1}));
  std::string tensor = lengthDelimited(8, "w") + lengthDelimited(9, floatBytes({1}));
  struct Case {
    const char *what;
    std::string bytes;
    const char *reason;
  } cases[] = {
      {"varint overflow", tag(1, 0) + std::string(10, '\xff') + "\x01", "varint overflows"},
      {"10th varint byte too big", tag(1, 0) + std::string(9, '\xff') + "\x02", "varint overflows"},
      {"group start", tag(7, 3) + lengthDelimited(5, tensor), "group fields"},
      {"group end inside tensor", lengthDelimited(7, lengthDelimited(5, tensor + tag(4, 4))),
       "group fields"},
      {"wire type 7", tag(3, 7), "invalid wire type 7"},
      {"field number 0", tag(0, 0) + varint(1), "invalid field number 0"},
      {"graph longer than file", tag(7, 2) + varint(1000) + lengthDelimited(5, tensor),
       "runs past the end"},
      {"tensor longer than graph",
       tag(7, 2) + varint(tensor.size() + 2) + tag(5, 2) + varint(tensor.size() + 5) + tensor,
       "runs past the end"},
      {"raw_data longer than tensor",
       lengthDelimited(7, tag(5, 2) + varint(7) + lengthDelimited(8, "w") + tag(9, 2) + varint(40) +
                              "abcd"),
       "runs past the end"},
      {"fixed64 past end", lengthDelimited(7, tag(20, 1) + "abc"), "fixed-width field"},
      {"unterminated varint", tag(1, 0) + "\x80", "varint runs past"},
      {"huge length", tag(7, 2) + varint(~uint64_t(0)), "runs past the end"},
  };
  for (const Case &c : cases) {
    writeAll(dir / "bad.onnx", c.bytes);
    std::string error;
    EXPECT_FALSE(store.index(model, (dir / "bad.onnx").string(), error)) << c.what;
    EXPECT_NE(error.find("is malformed at byte"), std::string::npos) << c.what << ": " << error;
    EXPECT_NE(error.find(c.reason), std::string::npos) << c.what << ": " << error;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Reading in pieces: byte ranges and the inf/NaN scan
//===----------------------------------------------------------------------===//

TEST_F(WeightStoreTest, ReadRangeGivesThatPieceAndRefusesRangesPastTheEnd) {
  onnx::ModelProto model;
  addInitializer(model, "w", onnx::TensorProto::FLOAT, {4})->set_raw_data(floatBytes({1, 2, 3, 4}));
  ASSERT_EQ(indexError(model), "");
  std::vector<char> piece;
  std::string error;
  ASSERT_TRUE(store.readRange(*store.find("w"), 4, 8, piece, error)) << error;
  EXPECT_EQ(piece, bytesOf(floatBytes({2, 3})));
  EXPECT_FALSE(store.readRange(*store.find("w"), 12, 8, piece, error));
  EXPECT_NE(error.find("initializer 'w': "), std::string::npos) << error;
}

TEST_F(WeightStoreTest, NonFiniteValuesAreFoundInEveryFloatTypeAndAcrossChunks) {
  onnx::ModelProto model;
  // More elements than one chunk of the scan, the inf in the last one.
  std::vector<float> big(300000, 0.5f);
  addInitializer(model, "big_finite", onnx::TensorProto::FLOAT, {int64_t(big.size())})
      ->set_raw_data(floatBytes(big));
  big.back() = -INFINITY;
  addInitializer(model, "big_inf", onnx::TensorProto::FLOAT, {int64_t(big.size())})
      ->set_raw_data(floatBytes(big));
  addInitializer(model, "f32_nan", onnx::TensorProto::FLOAT, {2})
      ->set_raw_data(floatBytes({1.0f, NAN}));
  addInitializer(model, "f64_inf", onnx::TensorProto::DOUBLE, {1})->add_double_data(-INFINITY);
  addInitializer(model, "f16_nan", onnx::TensorProto::FLOAT16, {2})
      ->set_raw_data(std::string("\x00\x3c\x01\x7e", 4));
  addInitializer(model, "f16_max", onnx::TensorProto::FLOAT16, {1})->add_int32_data(0x7bff);
  addInitializer(model, "bf16_inf", onnx::TensorProto::BFLOAT16, {1})->add_int32_data(0xff80);
  addInitializer(model, "i32_all_ones", onnx::TensorProto::INT32, {1})->add_int32_data(-1);
  ASSERT_EQ(indexError(model), "");
  auto holds = [&](const char *name) {
    bool result = false;
    std::string error;
    EXPECT_TRUE(memc::holdsNonFiniteValue(store, *store.find(name), result, error)) << error;
    return result;
  };
  EXPECT_FALSE(holds("big_finite"));
  EXPECT_TRUE(holds("big_inf"));
  EXPECT_TRUE(holds("f32_nan"));
  EXPECT_TRUE(holds("f64_inf"));
  EXPECT_TRUE(holds("f16_nan"));
  EXPECT_FALSE(holds("f16_max"));
  EXPECT_TRUE(holds("bf16_inf"));
  EXPECT_FALSE(holds("i32_all_ones"));
}
