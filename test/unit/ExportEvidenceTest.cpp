//===- ExportEvidenceTest.cpp - signs of a folded or renamed export -------===//
//
// foldedExportWarning names exporter-made `onnx::*` weights and Gather tables whose values
// reappear, as they are or transposed, in a MatMul/Gemm weight; it stays silent otherwise: a
// transpose that differs in one element, or constant tables, are no tie.
// unrecordedPaddingWarning names an embedding table's one all-zero row, and nothing else.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/ExportEvidence.h"
#include "compiler/importer/WeightStore.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

class ExportEvidenceTest : public ::testing::Test {
protected:
  /// A float initializer [rows, cols] holding `values` (row-major).
  void addWeight(const std::string &name, int64_t rows, int64_t cols,
                 const std::vector<float> &values) {
    onnx::TensorProto *tensor = model.mutable_graph()->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    tensor->add_dims(rows);
    tensor->add_dims(cols);
    std::string bytes(values.size() * sizeof(float), '\0');
    std::memcpy(bytes.data(), values.data(), bytes.size());
    tensor->set_raw_data(bytes);
  }

  void addNode(const std::string &type, const std::vector<std::string> &inputs) {
    onnx::NodeProto *node = model.mutable_graph()->add_node();
    node->set_op_type(type);
    for (const std::string &input : inputs)
      node->add_input(input);
    node->add_output(type + std::to_string(model.graph().node_size()));
  }

  /// The Gather table "wte.weight" [rows, cols] and `weight` ([rows, cols], or [cols, rows]
  /// when `transposed`) feeding a `product` node.
  void addTableAndWeight(int64_t rows, int64_t cols, const std::vector<float> &table,
                         const std::string &weight, const std::vector<float> &values,
                         bool transposed, const std::string &product = "MatMul") {
    addWeight("wte.weight", rows, cols, table);
    addWeight(weight, transposed ? cols : rows, transposed ? rows : cols, values);
    addNode("Gather", {"wte.weight", "ids"});
    addNode(product, {"x", weight});
  }

  /// The folded-export warning for the model built so far.
  std::string warning() { return warningOf(memc::foldedExportWarning); }
  /// The padding-row warning for the model built so far.
  std::string paddingWarning() { return warningOf(memc::unrecordedPaddingWarning); }

  std::string warningOf(std::string (*warn)(const onnx::GraphProto &, const memc::WeightStore &)) {
    fs::path path = fs::path(::testing::TempDir()) /
                    (std::string("memc-evidence-") +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".onnx");
    std::string bytes, error;
    EXPECT_TRUE(model.SerializeToString(&bytes));
    std::ofstream(path, std::ios::binary) << bytes;
    EXPECT_TRUE(weights.index(model, path.string(), error)) << error;
    std::string text = warn(model.graph(), weights);
    fs::remove(path);
    return text;
  }

  onnx::ModelProto model;
  memc::WeightStore weights;
};

const std::vector<float> kTable = {1, 2, 3, 4, 5, 6};      // [2, 3]
const std::vector<float> kTransposed = {1, 4, 2, 5, 3, 6}; // [3, 2]

TEST_F(ExportEvidenceTest, ModuleNamesAndDistinctValuesAreNoEvidence) {
  addTableAndWeight(2, 3, kTable, "head.weight", {1, 2, 3, 4, 5, 7}, /*transposed=*/false);
  EXPECT_EQ(warning(), "");
}

TEST_F(ExportEvidenceTest, AnIdenticalCopyOfAGatherTableIsABrokenTie) {
  addTableAndWeight(2, 3, kTable, "head.weight", kTable, /*transposed=*/false, "Gemm");
  std::string text = warning();
  EXPECT_NE(text.find("'head.weight' holds the values of 'wte.weight' (a tied weight split in "
                      "two, which then trains as two)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("initializers "), std::string::npos) << text;
  EXPECT_NE(text.find("python/memc_export.py"), std::string::npos) << text;
}

TEST_F(ExportEvidenceTest, AFoldedTransposeOfAGatherTableIsABrokenTie) {
  addTableAndWeight(2, 3, kTable, "onnx::MatMul_7", kTransposed, /*transposed=*/true);
  std::string text = warning();
  EXPECT_NE(text.find("initializers onnx::MatMul_7 feed MatMul/Gemm/Conv"), std::string::npos)
      << text;
  EXPECT_NE(text.find("'onnx::MatMul_7' holds the transpose of 'wte.weight'"), std::string::npos)
      << text;
}

/// A [rows, cols] table of distinct values and its transpose.
std::pair<std::vector<float>, std::vector<float>> tableAndTranspose(int64_t rows, int64_t cols) {
  std::vector<float> table(rows * cols), transposed(rows * cols);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      table[r * cols + c] = transposed[c * rows + r] = float(r * cols + c + 1);
  return {table, transposed};
}

TEST_F(ExportEvidenceTest, ATransposeThatDiffersInOneUnsampledElementIsNoTie) {
  auto [table, transposed] = tableAndTranspose(20, 10);
  transposed[1 * 20 + 0] = -1; // table[0][1]: between the sampled elements 0 and 3
  addTableAndWeight(20, 10, table, "head", transposed, /*transposed=*/true);
  EXPECT_EQ(warning(), "");
}

TEST_F(ExportEvidenceTest, AnExactTransposeOfABiggerTableIsATie) {
  auto [table, transposed] = tableAndTranspose(20, 10);
  addTableAndWeight(20, 10, table, "head", transposed, /*transposed=*/true);
  EXPECT_NE(warning().find("'head' holds the transpose of 'wte.weight'"), std::string::npos);
}

TEST_F(ExportEvidenceTest, ConstantTablesAreNoEvidenceOfATie) {
  // Shape-only models (memc-zoo --weights none) read as zeros everywhere.
  addWeight("wte.weight", 2, 3, std::vector<float>(6, 0.0f));
  addWeight("head.weight", 2, 3, std::vector<float>(6, 0.0f));
  addWeight("lm_head", 3, 2, std::vector<float>(6, 0.0f));
  addNode("Gather", {"wte.weight", "ids"});
  addNode("MatMul", {"x", "head.weight"});
  addNode("MatMul", {"x", "lm_head"});
  EXPECT_EQ(warning(), "");
}

TEST_F(ExportEvidenceTest, LongListsAreTruncatedAndOtherFoldedInitializersNamed) {
  for (int i = 0; i < 8; ++i) {
    std::string name = "onnx::MatMul_" + std::to_string(10 + i);
    addWeight(name, 1, 1, {float(i)});
    addNode(i % 2 ? "Conv" : "MatMul", {"x", name});
  }
  addWeight("onnx::Mul_3", 1, 2, {0.5f, 0.25f});
  addNode("Mul", {"x", "onnx::Mul_3"});
  std::string text = warning();
  EXPECT_NE(text.find("initializers onnx::MatMul_10, onnx::MatMul_11, onnx::MatMul_12, "
                      "onnx::MatMul_13, onnx::MatMul_14, onnx::MatMul_15 and 2 more feed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("other initializers with exporter-made names, onnx::Mul_3, are folded"),
            std::string::npos)
      << text;
}

TEST_F(ExportEvidenceTest, OneAllZeroRowOfAGatherTableIsAnUnrecordedPaddingRow) {
  addWeight("wte.weight", 3, 2, {1, 2, 0, -0.0f, 5, 6});
  addNode("Gather", {"wte.weight", "ids"});
  std::string text = paddingWarning();
  EXPECT_NE(text.find("row 1 of 'wte.weight' (an embedding table) is all zeros, as "
                      "nn.Embedding(padding_idx=N) keeps its padding row"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("python/memc_export.py"), std::string::npos) << text;
}

TEST_F(ExportEvidenceTest, TablesWithoutExactlyOneZeroRowAreNoPaddingEvidence) {
  addWeight("a", 2, 2, {1, 2, 3, 4}); // no zero row
  addWeight("b", 2, 2, {0, 0, 0, 0}); // all rows zero: an untrained or shape-only table
  addWeight("c", 2, 2, {0, 1, 2, 0}); // zeros, but no row of them
  addWeight("w", 3, 1, {0, 1, 2});    // a zero row, but read by a MatMul
  for (const char *table : {"a", "b", "c"})
    addNode("Gather", {table, "ids"});
  addNode("MatMul", {"x", "w"});
  EXPECT_EQ(paddingWarning(), "");
}

} // namespace
