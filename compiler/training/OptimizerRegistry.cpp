//===- OptimizerRegistry.cpp - the optimizers memc knows, by name ---------===//
#include "compiler/training/Optimizer.h"
#include "dialects/memc/MemcDialect.h"

using namespace mlir;

namespace memc {
namespace {

/// The `grad` operand of `op` if it is an UpdateOp.
template <typename UpdateOp> Value gradientOperand(Operation *op) {
  auto update = dyn_cast<UpdateOp>(op);
  return update ? update.getGrad() : Value();
}

struct OptimizerEntry {
  llvm::StringLiteral name;
  std::unique_ptr<Optimizer> (*create)(const OptimizerOptions &);
  /// The gradient its update op reads.
  Value (*gradientOfUpdate)(Operation *);
};

constexpr OptimizerEntry kOptimizers[] = {
    {"sgd", createSgdOptimizer, gradientOperand<SgdUpdateOp>},
    {"adamw", createAdamWOptimizer, gradientOperand<AdamWUpdateOp>},
    {"adamw8bit", createAdamW8bitOptimizer, gradientOperand<AdamW8bitUpdateOp>},
};

} // namespace

std::unique_ptr<Optimizer> createOptimizer(const OptimizerOptions &options, std::string &error) {
  for (const OptimizerEntry &entry : kOptimizers)
    if (options.name == entry.name)
      return entry.create(options);
  error = "unknown optimizer '" + options.name + "' (optimizers: " + optimizerNames() + ")";
  return nullptr;
}

std::vector<std::string> registeredOptimizers() {
  std::vector<std::string> names;
  for (const OptimizerEntry &entry : kOptimizers)
    names.push_back(entry.name.str());
  return names;
}

std::string optimizerNames() {
  std::string names;
  for (const std::string &name : registeredOptimizers())
    names += (names.empty() ? "" : ", ") + name;
  return names;
}

Value gradientOfUpdate(Operation *op) {
  for (const OptimizerEntry &entry : kOptimizers)
    if (Value gradient = entry.gradientOfUpdate(op))
      return gradient;
  return {};
}

} // namespace memc
