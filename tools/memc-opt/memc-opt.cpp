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
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  memc::registerMemcPasses();
  memc::registerMemcCompilerPasses();
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "memc-opt (memc " MEMC_VERSION ", revision " MEMC_REVISION ")\n";
  });
  mlir::DialectRegistry registry;
  registry.insert<memc::MemcDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "memc optimizer driver\n", registry));
}
