//===- ImportFuzzTest.cpp - corrupted models give errors, never crashes ---===//
//
// Feeds truncated and bit-flipped copies of real PyTorch-exported models to the importer. Each
// must either import to IR that verifies, or fail with at least one error diagnostic; a crash,
// hang or silent failure fails the test. Mutations come from a fixed seed, so failures replay.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// Imports `path`; returns a description of what went wrong, or "" if the outcome is clean.
std::string importOutcome(const std::string &path) {
  mlir::MLIRContext context;
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    errors += diag.getSeverity() == mlir::DiagnosticSeverity::Error;
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = memc::importOnnxModel(context, path, {});
  if (!module)
    return errors > 0 ? "" : "import failed without an error message";
  if (failed(mlir::verify(*module)))
    return "imported IR does not verify";
  mlir::PassManager pm(&context);
  memc::buildCanonicalizationPipeline(pm);
  if (failed(pm.run(*module)) && errors == 0)
    return "pipeline failed without an error message";
  return "";
}

class ImportFuzz : public testing::TestWithParam<const char *> {
protected:
  std::string original = readFile(std::string(MEMC_FIXTURES_DIR) + "/" + GetParam());
  std::string mutatedPath = testing::TempDir() + "/fuzz_" + GetParam();
};

TEST_P(ImportFuzz, TruncatedCopiesFailCleanly) {
  ASSERT_FALSE(original.empty());
  std::mt19937_64 random(1234);
  for (int trial = 0; trial < 150; ++trial) {
    size_t length = random() % original.size();
    writeFile(mutatedPath, original.substr(0, length));
    EXPECT_EQ(importOutcome(mutatedPath), "") << "truncated to " << length << " bytes";
  }
}

TEST_P(ImportFuzz, BitFlippedCopiesFailCleanlyOrImport) {
  ASSERT_FALSE(original.empty());
  std::mt19937_64 random(5678);
  for (int trial = 0; trial < 400; ++trial) {
    std::string mutated = original;
    int flips = 1 + random() % 8;
    std::string where;
    for (int i = 0; i < flips; ++i) {
      size_t byte = random() % mutated.size();
      int bit = random() % 8;
      mutated[byte] = static_cast<char>(mutated[byte] ^ (1 << bit));
      where += " " + std::to_string(byte) + ":" + std::to_string(bit);
    }
    writeFile(mutatedPath, mutated);
    EXPECT_EQ(importOutcome(mutatedPath), "") << "trial " << trial << ", flipped" << where;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ImportFuzz,
                         testing::Values("mlp.onnx", "gpt2.onnx", "bert.onnx", "llama.onnx",
                                         "resnet_bn.onnx", "unsupported_ops.onnx"),
                         [](const testing::TestParamInfo<const char *> &info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

} // namespace
