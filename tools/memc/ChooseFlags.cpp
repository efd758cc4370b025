//===- ChooseFlags.cpp - flags memc chooses by planning -------------------===//
#include "tools/memc/ChooseFlags.h"
#include "tools/memc/LargestFitting.h"
#include "tools/memc/PlanProbe.h"

#include "compiler/pipeline/MemoryLadder.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

namespace {

/// A technique --fit auto may turn on and its estimated cost in percent of the step's time.
/// Recomputation is not here: remat auto decides it per plan and its FLOPs are counted. The
/// estimates order the choices; they are not measurements of a given model:
///  - bf16: on GPUs a speedup; 1 so that fp32 stays where it fits (it rounds nothing);
///  - 8-bit states: the optimizer's block-wise (de)quantization, a few percent of a step
///    (bitsandbytes reports its 8-bit Adam at the speed of the 32-bit one);
///  - ZeRO-1 and 2 move what data parallelism moves anyway (a reduce-scatter and an all-gather
///    for an all-reduce), so only a tie-break; ZeRO-3 gathers the parameters again for the
///    backward, 1.5x the traffic;
///  - optimizer offload: the update on the host and the state over PCIe every step
///    (ZeRO-Offload's own numbers put it well behind on-device training at small batches).
struct FitTechnique {
  const char *flag, *value;
  double slowdownPercent;
};
constexpr FitTechnique kFitTechniques[] = {
    {"precision", "bf16", 1}, {"optimizer", "adamw8bit", 2}, {"zero-stage", "1", 0.1},
    {"zero-stage", "2", 0.2}, {"zero-stage", "3", 15},       {"offload-optimizer", "cpu", 40},
};

struct Candidate {
  std::vector<const FitTechnique *> techniques;
  double penalty = 0;
  /// `arguments` with the techniques' flags set.
  std::vector<std::string> appliedTo(std::vector<std::string> arguments) const {
    for (const FitTechnique *technique : techniques)
      arguments = withFlag(arguments, technique->flag, technique->value);
    return arguments;
  }
  std::string text() const {
    std::vector<std::string> flags;
    for (const FitTechnique *technique : techniques)
      flags.push_back(std::string("--") + technique->flag + " " + technique->value);
    return flags.empty() ? "the flags as given" : llvm::join(flags, " ");
  }
};

struct Tried {
  Candidate candidate;
  PlanProbe probe;
  double estimate() const { return candidate.penalty + probe.memory->recomputeFlopsPercent(); }
};

struct FitSearch {
  std::vector<Tried> tried;
  std::optional<size_t> best;
  /// The lowest peak among the plans (for when nothing fits).
  std::optional<size_t> lowest;
};

/// Every combination of one choice per flag of `techniques` (none among them), cheapest first;
/// the first that fits with nothing cheaper left to try is the answer. `base` must leave the
/// flags to remat auto (the default) for recomputation to be decided per candidate.
FitSearch searchFit(const std::vector<std::string> &base,
                    const std::vector<const FitTechnique *> &techniques) {
  std::vector<std::vector<const FitTechnique *>> dimensions;
  std::map<std::string, size_t> dimensionOf;
  for (const FitTechnique *technique : techniques) {
    auto [at, added] = dimensionOf.emplace(technique->flag, dimensions.size());
    if (added)
      dimensions.push_back({nullptr});
    dimensions[at->second].push_back(technique);
  }
  std::vector<Candidate> candidates = {Candidate()};
  for (const auto &choices : dimensions) {
    std::vector<Candidate> extended;
    for (const Candidate &candidate : candidates)
      for (const FitTechnique *choice : choices) {
        Candidate next = candidate;
        if (choice) {
          next.techniques.push_back(choice);
          next.penalty += choice->slowdownPercent;
        }
        extended.push_back(next);
      }
    candidates = std::move(extended);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate &a, const Candidate &b) { return a.penalty < b.penalty; });
  FitSearch search;
  for (const Candidate &candidate : candidates) {
    if (search.best && candidate.penalty >= search.tried[*search.best].estimate())
      break; // recomputation only adds to the estimate
    Tried tried{candidate, probePlan(candidate.appliedTo(base))};
    if (!tried.probe.memory)
      continue; // a combination memc refuses is no answer
    search.tried.push_back(std::move(tried));
    size_t index = search.tried.size() - 1;
    const Tried &now = search.tried.back();
    if (!search.lowest ||
        now.probe.memory->peakBytes < search.tried[*search.lowest].probe.memory->peakBytes)
      search.lowest = index;
    if (now.probe.fits() &&
        (!search.best || now.estimate() < search.tried[*search.best].estimate()))
      search.best = index;
  }
  return search;
}

/// The techniques that apply to the optimizer and ranks asked for and that the command line
/// does not already use; with !evenUserSet, only those whose flag the user left to memc.
std::vector<const FitTechnique *> openTechniques(const DriverOptions &driver, bool evenUserSet) {
  std::vector<const FitTechnique *> open;
  const std::string &optimizer = driver.pipeline.training.optimizer.name;
  for (const FitTechnique &technique : kFitTechniques) {
    std::string flag = technique.flag;
    if (!evenUserSet && driver.userFlags.count(flag) && flag != "optimizer")
      continue;
    if (flag == "precision" && driver.pipeline.precision != memc::Precision::Fp32)
      continue;
    if (flag == "optimizer" && optimizer != "adamw")
      continue;
    if (flag == "zero-stage" && driver.pipeline.training.worldSize == 1)
      continue;
    if (flag == "zero-stage" && std::stoi(technique.value) <= driver.pipeline.training.zeroStage)
      continue;
    if (flag == "offload-optimizer" && driver.pipeline.training.offloadOptimizer)
      continue;
    open.push_back(&technique);
  }
  return open;
}

/// "FLAGS: peak X, estimated slowdown +Y% (...)"; `also` names flags every candidate changed.
std::string describe(const Tried &tried, const std::string &also = "") {
  const memc::MemoryReport &memory = *tried.probe.memory;
  std::string flags = tried.candidate.techniques.empty() && !also.empty()
                          ? also
                          : (also.empty() ? "" : also + " ") + tried.candidate.text();
  return llvm::formatv("{0}: peak {1}{2}, estimated slowdown +{3:f1}% (recomputing {4:f1}% of "
                       "the FLOPs)",
                       flags, memc::formatBytes(memory.peakBytes),
                       tried.probe.fits() ? "" : " (does not fit)", tried.estimate(),
                       memory.recomputeFlopsPercent())
      .str();
}

void note(const std::string &text) { llvm::errs() << "memc: note: " << text << "\n"; }

void error(const std::string &text) { llvm::errs() << "memc: error: " << text << "\n"; }

} // namespace

std::optional<std::vector<std::string>>
chooseMicroBatch(const DriverOptions &driver, const std::vector<std::string> &arguments) {
  std::vector<std::string> base = argumentsWithout(arguments, {"micro-batch", "global-batch"});
  const int64_t ranks = driver.pipeline.training.worldSize;
  const int64_t perRank = driver.globalBatch ? driver.globalBatch / ranks : 0;
  const int64_t cap = perRank ? perRank : int64_t{1} << 40;
  std::map<int64_t, PlanProbe> probes;
  auto fits = [&](int64_t batch) {
    return (probes[batch] = probePlan(withFlag(base, "micro-batch", std::to_string(batch)))).fits();
  };
  SizeBracket largest = largestFitting(1, cap, fits, [](int64_t) { return 1; });
  if (!largest.fits) {
    const PlanProbe &one = probes.at(1);
    if (!one.memory)
      error(one.error);
    else
      error("--micro-batch auto: even a micro-batch of 1 needs " +
            memc::formatBytes(one.memory->peakBytes) + ", more than the budget of " +
            memc::formatBytes(*one.memory->budgetBytes) +
            " (--fit auto, or --explain-memory, shows what lowers it)");
    return std::nullopt;
  }
  const int64_t low = largest.fits, high = largest.doesNot;
  const memc::MemoryReport &chosen = *probes.at(low).memory;
  std::string found = "--micro-batch auto: " + std::to_string(low) + " fits (peak " +
                      memc::formatBytes(chosen.peakBytes) + " of " +
                      memc::formatBytes(*chosen.budgetBytes) + ")";
  if (high && probes.at(high).memory)
    found += "; " + std::to_string(high) + " does not (" +
             memc::formatBytes(probes.at(high).memory->peakBytes) + ")";
  else if (high) // a batch memc refuses ends the search as one that does not fit would
    found += "; " + std::to_string(high) + " does not compile: " + probes.at(high).error;
  else if (low == cap && perRank)
    found += ", all of --global-batch's share of a rank";
  note(found);
  if (!perRank)
    return withFlag(base, "micro-batch", std::to_string(low));
  int64_t batch = low;
  while (perRank % batch)
    --batch;
  if (batch != low)
    note("--global-batch " + std::to_string(driver.globalBatch) + " over " + std::to_string(ranks) +
         (ranks > 1 ? " ranks" : " rank") + " is " + std::to_string(perRank) +
         " samples a rank, not a multiple of " + std::to_string(low) + ": micro-batch " +
         std::to_string(batch) + ", the largest that divides it");
  note("--grad-accum " + std::to_string(perRank / batch) + " (" +
       std::to_string(driver.globalBatch) + " = " + std::to_string(batch) + " x " +
       std::to_string(perRank / batch) +
       (ranks > 1 ? " x " + std::to_string(ranks) + " ranks" : "") + ")");
  return withFlag(withFlag(base, "micro-batch", std::to_string(batch)), "grad-accum",
                  std::to_string(perRank / batch));
}

std::optional<std::vector<std::string>> chooseFit(const DriverOptions &driver,
                                                  const std::vector<std::string> &arguments) {
  std::vector<std::string> base = argumentsWithout(arguments, {"fit"});
  if (driver.pipeline.training.optimizer.name == "adamw")
    base = argumentsWithout(base, {"optimizer"});
  FitSearch search = searchFit(base, openTechniques(driver, false));
  for (const Tried &tried : search.tried)
    note("--fit auto planned " + describe(tried));
  if (!search.best) {
    std::string text = "--fit auto: no combination fits the budget";
    if (search.lowest)
      text += "; the lowest is " + describe(search.tried[*search.lowest]);
    error(text + " (--explain-memory shows every rung, QLoRA's among them)");
    return std::nullopt;
  }
  const Tried &best = search.tried[*search.best];
  note("--fit auto chose " + best.candidate.text());
  return best.candidate.appliedTo(base);
}

std::string plannedBudgetAdvice(const DriverOptions &driver,
                                const std::vector<std::string> &arguments, bool symbolicBatch) {
  // Every technique, the user's own choices of them included, with remat deciding at auto.
  std::vector<std::string> base =
      argumentsWithout(arguments, {"remat", "offload-activations", "fit", "o", "report",
                                   "report-json", "report-svg"});
  if (driver.pipeline.training.optimizer.name == "adamw")
    base = argumentsWithout(base, {"optimizer"});
  const memc::PipelineOptions &options = driver.pipeline;
  std::string rematAuto = options.budget.mode != memc::RematMode::Auto || options.offloadActivations
                              ? "--remat auto"
                              : "";
  std::vector<const FitTechnique *> techniques = openTechniques(driver, true);
  FitSearch search = searchFit(base, techniques);
  if (search.best)
    return "what fits, planned: " + describe(search.tried[*search.best], rematAuto);
  std::string text = "nothing fits with --remat auto and ";
  std::vector<std::string> names;
  for (const FitTechnique *technique : techniques)
    names.push_back(std::string("--") + technique->flag + " " + technique->value);
  text += names.empty() ? "the flags given" : llvm::join(names, ", ");
  if (search.lowest)
    text += " (lowest: " + describe(search.tried[*search.lowest], rematAuto) + ")";
  // Smaller batches and QLoRA, each planned on the lowest combination before it is offered.
  std::vector<std::string> lowest =
      search.lowest ? search.tried[*search.lowest].candidate.appliedTo(base) : base;
  if (!symbolicBatch)
    text += "; the model's batch is fixed (export it with a dynamic batch for --micro-batch)";
  else if (probePlan(withFlag(argumentsWithout(lowest, {"input-shape"}), "micro-batch", "1"))
               .fits())
    text += "; a smaller micro-batch fits (--micro-batch auto finds the largest" +
            std::string(options.import.inputShapes.empty() ? ")" : ", in place of --input-shape)");
  memc::LadderSetting setting;
  setting.optimizer = driver.pipeline.training.optimizer.name;
  setting.budget = true;
  setting.worldSize = driver.pipeline.training.worldSize;
  memc::LadderRung qlora = memc::memoryLadder(setting).back();
  std::vector<std::string> withAdapters =
      argumentsWithout(argumentsWithout(lowest, memc::ladderFlagNames()), qlora.drops);
  withAdapters.insert(withAdapters.end(), qlora.flags.begin(), qlora.flags.end());
  PlanProbe adapters = probePlan(withAdapters);
  if (adapters.fits())
    text += "; training QLoRA adapters instead of the model fits (" +
            memc::formatBytes(adapters.memory->peakBytes) + ": " + llvm::join(qlora.flags, " ") +
            ")";
  return text;
}
