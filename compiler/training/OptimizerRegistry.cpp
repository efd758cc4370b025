//===- OptimizerRegistry.cpp - the optimizers memc knows, by name ---------===//
#include "compiler/training/Optimizer.h"

using namespace mlir;

namespace memc {
namespace {

struct OptimizerEntry {
  llvm::StringLiteral name;
  std::unique_ptr<Optimizer> (*create)(const OptimizerOptions &);
  Value (*gradientOfUpdate)(Operation *);
};

constexpr OptimizerEntry kOptimizers[] = {
    {"sgd", createSgdOptimizer, sgdUpdateGradient},
    {"adamw", createAdamWOptimizer, adamWUpdateGradient},
};

} // namespace

std::unique_ptr<Optimizer> createOptimizer(const OptimizerOptions &options, std::string &error) {
  for (const OptimizerEntry &entry : kOptimizers)
    if (options.name == entry.name)
      return entry.create(options);
  error = "unknown optimizer '" + options.name + "' (optimizers: " + optimizerNames() + ")";
  return nullptr;
}

std::string optimizerNames() {
  std::string names;
  for (const OptimizerEntry &entry : kOptimizers)
    names += (names.empty() ? "" : ", ") + entry.name.str();
  return names;
}

Value gradientOfUpdate(Operation *op) {
  for (const OptimizerEntry &entry : kOptimizers)
    if (Value gradient = entry.gradientOfUpdate(op))
      return gradient;
  return {};
}

} // namespace memc
