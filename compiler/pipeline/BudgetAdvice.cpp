//===- BudgetAdvice.cpp - what to say when a budget cannot be met ---------===//
#include "compiler/pipeline/BudgetAdvice.h"
#include "compiler/report/MemoryReport.h"
#include "compiler/training/Optimizer.h"
#include "runtime/support/Bytes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace memc {
namespace {

/// The --remat value of `mode`.
const char *rematFlagName(RematMode mode) {
  switch (mode) {
  case RematMode::Auto:
    return "auto";
  case RematMode::None:
    return "none";
  case RematMode::Full:
    return "full";
  }
  return "auto";
}

/// How many states an optimizer with `options` keeps per parameter.
size_t statesPerParameter(MLIRContext &context, const OptimizerOptions &options) {
  std::string error;
  std::unique_ptr<Optimizer> optimizer = createOptimizer(options, error);
  return optimizer ? optimizer->stateSpecs(RankedTensorType::get({1}, Float32Type::get(&context)))
                         .size()
                   : 0;
}

/// " --optimizer NAME (...);" for the registered optimizer that keeps the fewest states per
/// parameter at its defaults, when that is fewer than `current` keeps; empty otherwise.
std::string leanerOptimizer(MLIRContext &context, const OptimizerOptions &current) {
  size_t currentStates = statesPerParameter(context, current);
  std::string best;
  size_t bestStates = currentStates;
  for (const std::string &name : registeredOptimizers()) {
    OptimizerOptions candidate;
    candidate.name = name;
    size_t states = statesPerParameter(context, candidate);
    if (states < bestStates) {
      best = name;
      bestStates = states;
    }
  }
  if (best.empty())
    return "";
  return " --optimizer " + best + " (" + current.name + " keeps " +
         std::to_string(currentStates) + " states per parameter, " + best + " " +
         std::to_string(bestStates) + ");";
}

} // namespace

std::string infeasibleBudgetMessage(MLIRContext &context, const BudgetedPlan &planned,
                                    const PipelineOptions &options,
                                    const std::string &plannedAdvice) {
  bool training = options.mode == CompileMode::Train;
  const BudgetOptions &budget = options.budget;
  MemoryReport memory = buildMemoryReport(planned, budget.budgetBytes);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "the budget of " << formatBytes(*budget.budgetBytes)
     << " is too small: the lowest peak memc reaches with these flags is "
     << formatBytes(memory.peakBytes) << " (" << memory.peakBytes << " bytes";
  // The flag as given, and what it chose: planned.strategy names plans (chen-sqrt among them)
  // that are no values of --remat.
  if (training) {
    os << ", --remat " << rematFlagName(budget.mode);
    if (budget.mode == RematMode::Auto && !planned.strategy.empty())
      os << ", whose lowest plan is " << planned.strategy;
  }
  os << ")\n  at that peak:";
  for (size_t c = 1; c < memory.breakdown.size(); ++c)
    if (memory.breakdown[c])
      os << " " << plan::categoryInfo(c).name << " " << formatBytes(memory.breakdown[c]) << ";";
  if (memory.unusedArenaBytes)
    os << " unused arena " << formatBytes(memory.unusedArenaBytes) << ";";
  if (!plannedAdvice.empty()) {
    os << "\n  " << plannedAdvice;
    return text;
  }
  os << "\n  what would lower it:";
  if (training && budget.mode == RematMode::None)
    os << " --remat auto (recompute activations instead of keeping them);";
  // --input-shape applies only to symbolic dims, which need it: a model whose batch is fixed
  // refuses it.
  if (!options.import.inputShapes.empty())
    os << " a smaller batch (--input-shape);";
  else
    os << " a smaller batch (the model's input shapes are fixed: export it with a smaller or a "
          "dynamic batch, then --input-shape);";
  if (training && memory.breakdown[plan::OPTIMIZER_STATE])
    os << " --freeze or --trainable (no gradients or optimizer state for frozen parameters);"
       << leanerOptimizer(context, options.training.optimizer);
  if (options.precision == Precision::Fp32)
    os << " --precision bf16 or fp16 (16-bit activations and matmuls);";
  // ZeRO: what more ranks could each keep less of.
  const TrainStepOptions &step = options.training;
  if (training && memory.breakdown[plan::OPTIMIZER_STATE] && step.worldSize == 1)
    os << " --world-size N --zero-stage 1, 2 or 3 (data parallel on N ranks, each keeping 1/N "
          "of the optimizer state, from stage 2 of the gradient accumulators, at 3 of the "
          "parameters);";
  else if (training && step.worldSize > 1 && step.zeroStage < 3)
    os << " --zero-stage " << step.zeroStage + 1 << (step.zeroStage < 2 ? " to 3" : "")
       << " (each rank keeping less of the model state);";
  os.flush();
  if (!text.empty() && text.back() == ';')
    text.pop_back();
  return text;
}

} // namespace memc
