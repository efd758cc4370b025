//===- memc-opt.cpp - run memc passes on memc IR --------------------------===//
//
// mlir-opt for memc: the memc and func dialects, every memc pass (the IR rewrites of passes/ and
// the compiler transforms of compiler/pipeline), and MLIR's generic transforms (canonicalize,
// cse), so each pass can be tested alone from a lit test.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Passes.h"
#include "dialects/memc/MemcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <algorithm>

namespace {

/// MLIR's parser recurses once per nested bracket, so a few hundred thousand of them overflow the
/// stack. Real IR nests a few dozen levels; past this many the input is refused before parsing.
constexpr int kMaxNesting = 512;

/// Checks that no bracket kind nests deeper than kMaxNesting outside string literals and comments.
/// Each kind is counted on its own, so the '>' of an arrow or a comparison can only lower the
/// count of '<'. False with the line where the limit was passed.
bool nestingWithinLimit(llvm::StringRef text, int &line) {
  const llvm::StringRef openers = "([{<", closers = ")]}>";
  int depth[4] = {0, 0, 0, 0};
  line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"' && text[i] != '\n'; ++i)
        i += text[i] == '\\';
      if (i < text.size() && text[i] == '\n')
        --i; // An unterminated string: the newline still counts.
    } else if (c == '/' && text.substr(i, 2) == "//") {
      i = std::min(text.find('\n', i), text.size()) - 1;
    } else if (size_t kind = openers.find(c); kind != llvm::StringRef::npos) {
      if (++depth[kind] > kMaxNesting)
        return false;
    } else if (size_t kind = closers.find(c); kind != llvm::StringRef::npos) {
      if (c == '>' && i > 0 && text[i - 1] == '-')
        continue;
      depth[kind] = std::max(0, depth[kind] - 1);
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerTransformsPasses();
  memc::registerMemcPasses();
  memc::registerMemcCompilerPasses();
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "memc-opt (memc " MEMC_VERSION ", revision " MEMC_REVISION ")\n";
  });
  mlir::DialectRegistry registry;
  registry.insert<memc::MemcDialect, mlir::func::FuncDialect>();
  auto [inputFilename, outputFilename] =
      mlir::registerAndParseCLIOptions(argc, argv, "memc optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input = mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "memc-opt: error: " << error << "\n";
    return 1;
  }
  if (int line; !nestingWithinLimit(input->getBuffer(), line)) {
    llvm::errs() << "memc-opt: error: " << inputFilename << ":" << line
                 << ": brackets nest more than " << kMaxNesting << " levels deep\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output = mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "memc-opt: error: " << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
