//===- MemoryReport.cpp - where every byte of the peak goes ---------------===//
#include "compiler/report/MemoryReport.h"
#include "runtime/plan/ArenaLifetimes.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <map>
#include <set>

namespace memc {

uint64_t totalBytes(const CategoryBytes &bytes) {
  uint64_t sum = 0;
  for (uint64_t category : bytes)
    sum += category;
  return sum;
}

namespace {

/// The device's persistent bytes by category (`region` PERSISTENT, with the constants and the
/// inputs' staging buffers), or the offloaded ones (HOST: model state and activations).
CategoryBytes persistentBytes(const plan::Plan &plan, plan::Region region = plan::PERSISTENT) {
  CategoryBytes bytes{};
  for (const plan::Binding &parameter : plan.parameters()) {
    const plan::Buffer &buffer = plan.buffers(parameter.buffer());
    if (buffer.region() == region)
      bytes[buffer.category()] += buffer.size_bytes();
  }
  if (region == plan::PERSISTENT) {
    bytes[plan::CONSTANTS] += plan.constant_data().size();
    // The next micro-batch, uploaded during the step (runtime/plan/InputStaging.h).
    for (const plan::Binding &input : plan.inputs())
      if (input.has_staging())
        bytes[plan::INPUTS] += plan.buffers(input.staging()).size_bytes();
  }
  // Offloaded activations (--offload-activations): each offload's host buffer.
  if (region == plan::HOST)
    for (const plan::Step &step : plan.steps())
      if (step.kernel() == "offload")
        for (uint32_t output : step.outputs())
          bytes[plan.buffers(output).category()] += plan.buffers(output).size_bytes();
  return bytes;
}

} // namespace

MemoryTimeline memoryTimeline(const plan::Plan &plan) {
  MemoryTimeline timeline;
  timeline.arenaBytes = plan.arena_bytes();
  CategoryBytes fixed = persistentBytes(plan);
  runtime::ArenaLifetimes lifetimes(plan);
  int64_t steps = std::max(1, plan.steps_size());
  std::vector<std::array<int64_t, plan::kCategories.size()>> delta(steps + 1);
  for (auto &row : delta)
    row.fill(0);
  for (int i = 0; i < plan.buffers_size(); ++i) {
    if (lifetimes.owner[i] != static_cast<uint32_t>(i) || lifetimes.first[i] < 0)
      continue;
    int category = plan.buffers(i).category();
    delta[lifetimes.first[i]][category] += plan.buffers(i).size_bytes();
    delta[lifetimes.last[i] + 1][category] -= plan.buffers(i).size_bytes();
  }
  std::array<int64_t, plan::kCategories.size()> running{};
  for (int64_t s = 0; s < steps; ++s) {
    CategoryBytes row = fixed;
    for (size_t c = 0; c < running.size(); ++c) {
      running[c] += delta[s][c];
      row[c] += static_cast<uint64_t>(running[c]);
    }
    timeline.steps.push_back(row);
  }
  return timeline;
}

MemoryReport buildMemoryReport(const BudgetedPlan &planned, std::optional<uint64_t> budget) {
  MemoryReport report;
  const plan::Plan &plan = planned.plan;
  report.budgetBytes = budget;
  report.peakBytes = planPeakBytes(plan);
  report.baselinePeakBytes = planPeakBytes(planned.baseline);
  report.lowerBoundBytes =
      plan.persistent_bytes() + plan.constant_data().size() + plan.arena_lower_bound_bytes();
  report.plannerRatio = plan.arena_lower_bound_bytes()
                            ? double(plan.arena_bytes()) / plan.arena_lower_bound_bytes()
                            : 1.0;
  report.strategy = planned.strategy;
  report.clones = planned.clones;
  report.recomputeFlops = planned.recomputeFlops;
  report.stepFlops = planned.stepFlops;
  report.solveSeconds = planned.solveSeconds;
  report.before = memoryTimeline(planned.baseline);
  report.after = memoryTimeline(plan);
  report.host = persistentBytes(plan, plan::HOST);
  for (const plan::Step &step : plan.steps())
    report.phaseFlops[step.phase()] += step.flops();
  report.attention = planned.attention;
  report.loss = planned.loss;

  const std::vector<CategoryBytes> &steps = report.after.steps;
  for (size_t s = 0; s < steps.size(); ++s)
    if (totalBytes(steps[s]) > totalBytes(steps[report.peakStep]))
      report.peakStep = static_cast<int64_t>(s);
  if (!steps.empty())
    report.breakdown = steps[report.peakStep];
  for (const CategoryBytes &step : steps)
    for (size_t c = 0; c < step.size(); ++c)
      report.mostLive[c] = std::max(report.mostLive[c], step[c]);
  report.worldSize = std::max<int64_t>(1, plan.training().world_size());
  report.zeroStage = plan.training().zero_stage();
  std::set<std::string> quantizedParts;
  for (const plan::Binding &binding : plan.parameters())
    if (plan.buffers(static_cast<int>(binding.buffer())).category() == plan::QUANTIZED_BASE)
      quantizedParts.insert(binding.name());
  for (const plan::Binding &binding : plan.parameters()) {
    const plan::Buffer &buffer = plan.buffers(static_cast<int>(binding.buffer()));
    MemoryReport::ModelState &state = report.modelState;
    switch (binding.kind()) {
    case plan::KIND_PARAMETER: {
      if (buffer.category() == plan::QUANTIZED_BASE) {
        state.quantizedBase += buffer.size_bytes();
        // The packed weight is the part named as the weight itself (its scales add a suffix).
        if (quantizedParts.count(binding.name() + ".absmax")) {
          report.quantizedParameterCount += 2 * static_cast<int64_t>(buffer.size_bytes());
          report.parameterCount += 2 * static_cast<int64_t>(buffer.size_bytes());
        }
        break;
      }
      state.parameters += buffer.size_bytes();
      // A ZeRO stage 3 shard counts as the parameter it is a part of.
      int64_t elements = 1;
      for (int64_t dim : binding.shard_of_size() > 0 ? binding.shard_of() : buffer.shape())
        elements *= dim;
      report.parameterCount += elements;
      break;
    }
    case plan::KIND_OPTIMIZER_STATE:
      state.optimizerState += buffer.size_bytes();
      break;
    case plan::KIND_GRADIENT_ACCUMULATOR:
      state.gradientAccumulators += buffer.size_bytes();
      break;
    case plan::KIND_WEIGHT_COPY:
      state.weightCopies += buffer.size_bytes();
      break;
    default:
      break;
    }
  }
  uint64_t live = totalBytes(report.breakdown);
  report.unusedArenaBytes = report.peakBytes > live ? report.peakBytes - live : 0;
  if (report.peakStep < plan.steps_size()) {
    report.peakKernel = plan.steps(report.peakStep).kernel();
    report.peakLocation = plan.steps(report.peakStep).location();
  }
  runtime::ArenaLifetimes lifetimes(plan);
  for (int i = 0; i < plan.buffers_size(); ++i) {
    if (!lifetimes.liveAt(i, report.peakStep) || plan.buffers(i).region() == plan::HOST)
      continue;
    const plan::Buffer &buffer = plan.buffers(i);
    report.largest.push_back({buffer.name(),
                              buffer.category(),
                              buffer.size_bytes(),
                              {buffer.shape().begin(), buffer.shape().end()}});
  }
  std::stable_sort(report.largest.begin(), report.largest.end(),
                   [](const auto &a, const auto &b) { return a.bytes > b.bytes; });
  if (report.largest.size() > 10)
    report.largest.resize(10);
  return report;
}

void printMemoryReport(const MemoryReport &report, llvm::raw_ostream &os) {
  os << "memc memory report\n";
  os << "  peak            " << formatBytes(report.peakBytes);
  if (report.budgetBytes)
    os << " of a " << formatBytes(*report.budgetBytes) << " budget"
       << (report.peakBytes <= *report.budgetBytes ? "" : " (over budget)");
  os << "\n  lower bound     " << formatBytes(report.lowerBoundBytes)
     << llvm::format(" (arena at %.4fx its bound)\n", report.plannerRatio);
  os << "  without remat   " << formatBytes(report.baselinePeakBytes) << "\n";
  os << "  recomputation   " << report.strategy;
  if (report.clones)
    os << llvm::format(": %lld ops run twice, %.2f%% of the step's FLOPs (%.3g of %.3g), "
                       "decided in %.2f s",
                       (long long)report.clones, report.recomputeFlopsPercent(),
                       report.recomputeFlops, report.stepFlops, report.solveSeconds);
  if (report.attention) {
    os << "\n  attention       " << report.attention->fused << " fused, "
       << report.attention->unfused.size() << " unfused";
    for (const UnfusedAttention &unfused : report.attention->unfused)
      os << "\n    " << unfused.node << ": " << unfused.reason;
  }
  if (report.loss) {
    os << "\n  loss            " << (report.loss->fused ? "fused" : "not fused");
    if (report.loss->fused)
      os << ", " << formatBytes(report.loss->logitsBytesAvoided)
         << " of logits avoided (as much again for their gradient)";
    for (const UnfusedLoss &unfused : report.loss->unfused)
      os << "\n    " << unfused.node << ": " << unfused.reason;
  }
  if (report.phaseFlops[plan::BACKWARD] > 0) {
    os << "\n  flops           ";
    for (int phase = 1; phase < plan::Phase_ARRAYSIZE; ++phase)
      os << llvm::format("%s%s %.3g GFLOP", phase > 1 ? ", " : "",
                         plan::phaseName(phase),
                         report.phaseFlops[phase] / 1e9);
    os << " per micro-batch";
  }
  if (uint64_t offloaded = totalBytes(report.host)) {
    os << "\n  offloaded       " << formatBytes(offloaded) << " in host memory, not in the peak (";
    bool first = true;
    for (size_t c = 1; c < report.host.size(); ++c)
      if (report.host[c]) {
        os << (first ? "" : ", ") << plan::categoryInfo(c).name << " "
           << formatBytes(report.host[c]);
        first = false;
      }
    os << ")";
  }
  if (uint64_t bytes = report.modelState.quantizedBase) {
    double weights = static_cast<double>(std::max<int64_t>(1, report.quantizedParameterCount));
    os << "\n  quantized base  " << formatBytes(bytes) << " for "
       << report.quantizedParameterCount
       << llvm::format(" frozen weights in NF4: %.3f bits per weight with the scales (4 + 32/64 "
                       "= 4.5 with f32 absmax, about 4.127 double-quantized)",
                       8.0 * static_cast<double>(bytes) / weights);
  }
  if (report.worldSize > 1) {
    const MemoryReport::ModelState &state = report.modelState;
    double n = static_cast<double>(report.worldSize);
    os << "\n  data parallel   " << report.worldSize << " ranks, ZeRO stage " << report.zeroStage
       << ": every number here is one rank's"
       << "\n    model state   parameters " << formatBytes(state.parameters)
       << ", optimizer state " << formatBytes(state.optimizerState)
       << ", gradient accumulators " << formatBytes(state.gradientAccumulators)
       << ", weight copies " << formatBytes(state.weightCopies)
       << llvm::format("\n                  %.2f bytes/parameter (ZeRO's mixed-precision AdamW: "
                       "16 unsharded, 4 + 12/N = %.2f at stage 1, 2 + 14/N = %.2f at stage 2, "
                       "16/N = %.2f at stage 3)",
                       double(state.total()) / double(std::max<int64_t>(1, report.parameterCount)),
                       4 + 12 / n, 2 + 14 / n, 16 / n);
  }
  os << "\n  at the peak (step " << report.peakStep << ", " << report.peakKernel;
  if (!report.peakLocation.empty())
    os << " '" << report.peakLocation << "'";
  os << "):\n";
  for (size_t c = 1; c < plan::kCategories.size(); ++c)
    if (report.breakdown[c])
      os << llvm::format("    %-16s %12s  %5.1f%%\n", plan::categoryInfo(c).name,
                         formatBytes(report.breakdown[c]).c_str(),
                         100.0 * report.breakdown[c] / std::max<uint64_t>(1, report.peakBytes));
  if (report.unusedArenaBytes)
    os << llvm::format("    %-16s %12s\n", static_cast<const char *>("(unused arena)"),
                       formatBytes(report.unusedArenaBytes).c_str());
  os << "  largest tensors live there:\n";
  for (const MemoryReport::Tensor &tensor : report.largest) {
    os << llvm::format("    %12s  %-12s ", formatBytes(tensor.bytes).c_str(),
                       plan::categoryInfo(tensor.category).name);
    os << (tensor.name.empty() ? "(unnamed)" : tensor.name) << " [";
    for (size_t i = 0; i < tensor.shape.size(); ++i)
      os << (i ? "x" : "") << tensor.shape[i];
    os << "]\n";
  }
}

llvm::json::Object peakBreakdownJson(const MemoryReport &report) {
  llvm::json::Object breakdown;
  for (size_t c = 1; c < plan::kCategories.size(); ++c)
    breakdown[plan::categoryInfo(c).name] = static_cast<int64_t>(report.breakdown[c]);
  breakdown["unused_arena"] = static_cast<int64_t>(report.unusedArenaBytes);
  return breakdown;
}

llvm::json::Object mostLiveJson(const MemoryReport &report) {
  llvm::json::Object mostLive;
  for (size_t c = 1; c < plan::kCategories.size(); ++c)
    mostLive[plan::categoryInfo(c).name] = static_cast<int64_t>(report.mostLive[c]);
  return mostLive;
}

llvm::json::Object hostBreakdownJson(const MemoryReport &report) {
  llvm::json::Object host;
  for (size_t c = 1; c < report.host.size(); ++c)
    if (report.host[c])
      host[plan::categoryInfo(c).name] = static_cast<int64_t>(report.host[c]);
  return host;
}

void writeMemoryReportJson(const MemoryReport &report, llvm::raw_ostream &os) {
  llvm::json::Object breakdown = peakBreakdownJson(report);
  llvm::json::Object mostLive = mostLiveJson(report);
  llvm::json::Array largest;
  for (const MemoryReport::Tensor &tensor : report.largest) {
    llvm::json::Array shape;
    for (int64_t dim : tensor.shape)
      shape.push_back(dim);
    largest.push_back(llvm::json::Object{{"name", tensor.name},
                                         {"category", plan::categoryInfo(tensor.category).name},
                                         {"bytes", static_cast<int64_t>(tensor.bytes)},
                                         {"shape", std::move(shape)}});
  }
  auto series = [](const MemoryTimeline &timeline) {
    llvm::json::Array steps;
    for (const CategoryBytes &row : timeline.steps)
      steps.push_back(static_cast<int64_t>(totalBytes(row)));
    return steps;
  };
  llvm::json::Value attention(nullptr);
  if (report.attention) {
    llvm::json::Array unfused;
    for (const UnfusedAttention &candidate : report.attention->unfused)
      unfused.push_back(llvm::json::Object{{"node", candidate.node}, {"reason", candidate.reason}});
    attention =
        llvm::json::Object{{"fused", report.attention->fused}, {"unfused", std::move(unfused)}};
  }
  llvm::json::Value loss(nullptr);
  if (report.loss) {
    llvm::json::Array unfused;
    for (const UnfusedLoss &candidate : report.loss->unfused)
      unfused.push_back(llvm::json::Object{{"node", candidate.node}, {"reason", candidate.reason}});
    loss = llvm::json::Object{{"fused", report.loss->fused > 0},
                              {"logits_bytes_avoided", report.loss->logitsBytesAvoided},
                              {"unfused", std::move(unfused)}};
  }
  llvm::json::Value dataParallel(nullptr);
  if (report.worldSize > 1)
    dataParallel = llvm::json::Object{
        {"world_size", report.worldSize},
        {"zero_stage", report.zeroStage},
        {"parameters", report.parameterCount},
        {"parameter_bytes", static_cast<int64_t>(report.modelState.parameters)},
        {"optimizer_state_bytes", static_cast<int64_t>(report.modelState.optimizerState)},
        {"gradient_accumulator_bytes",
         static_cast<int64_t>(report.modelState.gradientAccumulators)},
        {"weight_copy_bytes", static_cast<int64_t>(report.modelState.weightCopies)},
        {"model_state_bytes", static_cast<int64_t>(report.modelState.total())}};
  llvm::json::Object flopsByPhase;
  for (int phase = 1; phase < plan::Phase_ARRAYSIZE; ++phase)
    flopsByPhase[plan::phaseName(phase)] = report.phaseFlops[phase];
  llvm::json::Object hostBreakdown = hostBreakdownJson(report);
  llvm::json::Value quantizedBase(nullptr);
  if (report.modelState.quantizedBase)
    quantizedBase = llvm::json::Object{
        {"bytes", static_cast<int64_t>(report.modelState.quantizedBase)},
        {"parameters", report.quantizedParameterCount},
        {"bits_per_parameter", 8.0 * static_cast<double>(report.modelState.quantizedBase) /
                                   static_cast<double>(report.quantizedParameterCount)}};
  llvm::json::Object root{
      {"peak_bytes", static_cast<int64_t>(report.peakBytes)},
      {"lower_bound_bytes", static_cast<int64_t>(report.lowerBoundBytes)},
      {"budget_bytes", report.budgetBytes
                           ? llvm::json::Value(static_cast<int64_t>(*report.budgetBytes))
                           : llvm::json::Value(nullptr)},
      {"fits", !report.budgetBytes || report.peakBytes <= *report.budgetBytes},
      {"planner_ratio", report.plannerRatio},
      {"baseline_peak_bytes", static_cast<int64_t>(report.baselinePeakBytes)},
      {"remat_strategy", report.strategy},
      {"recomputed_ops", report.clones},
      {"recompute_flops", report.recomputeFlops},
      {"step_flops", report.stepFlops},
      {"recompute_flops_pct", report.recomputeFlopsPercent()},
      {"remat_seconds", report.solveSeconds},
      {"peak_step", report.peakStep},
      {"peak_kernel", report.peakKernel},
      {"peak_location", report.peakLocation},
      {"breakdown", std::move(breakdown)},
      {"most_live_bytes", std::move(mostLive)},
      {"largest_tensors", std::move(largest)},
      {"attention", std::move(attention)},
      {"loss", std::move(loss)},
      {"data_parallel", std::move(dataParallel)},
      {"quantized_base", std::move(quantizedBase)},
      {"host_bytes", static_cast<int64_t>(totalBytes(report.host))},
      {"flops_by_phase", std::move(flopsByPhase)},
      {"host_breakdown", std::move(hostBreakdown)},
      {"live_bytes_per_step", series(report.after)},
      {"baseline_live_bytes_per_step", series(report.before)},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
}

} // namespace memc
