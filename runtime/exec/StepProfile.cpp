//===- StepProfile.cpp - where a program's time goes ----------------------===//
#include "runtime/exec/StepProfile.h"

#include "runtime/io/Files.h"
#include "runtime/io/Json.h"
#include "runtime/plan/PlanVocabulary.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace memc::runtime {

void StepProfile::addRun(const ExecutionStats &stats) {
  if (stats.stepSeconds.size() != totals.size())
    return;
  double start = stats.runStartSeconds;
  for (size_t t = 0; t < totals.size(); ++t) {
    totals[t] += stats.stepSeconds[t];
    if (runCount < kMaxTracedRuns)
      events.push_back({static_cast<uint32_t>(t), start, stats.stepSeconds[t]});
    start += stats.stepSeconds[t];
  }
  if (runCount < kMaxTracedRuns)
    spans.insert(spans.end(), stats.workerSpans.begin(), stats.workerSpans.end());
  wallSeconds += stats.runSeconds;
  ++runCount;
}

void StepProfile::print(std::FILE *out, size_t rows) const {
  if (runCount == 0) {
    std::fprintf(out, "profile: no run was profiled\n");
    return;
  }
  const double sum = std::accumulate(totals.begin(), totals.end(), 0.0);
  const double runs = static_cast<double>(runCount);
  std::fprintf(out,
               "profile over %zu runs: steps %.3f ms per run, wall %.3f ms per run (%.1f%% in "
               "steps)\n",
               runCount, 1e3 * sum / runs, 1e3 * wallSeconds / runs,
               wallSeconds > 0 ? 100.0 * sum / wallSeconds : 0.0);
  std::vector<size_t> order(totals.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return totals[a] > totals[b]; });
  std::fprintf(out, "  %5s %6s %10s %9s %6s %9s %8s  %-9s %-22s %s\n", "step", "calls",
               "total ms", "mean ms", "%", "GFLOP/s", "GB/s", "phase", "kernel", "node");
  for (size_t i = 0; i < order.size() && i < rows; ++i) {
    const size_t t = order[i];
    const PlanStep &step = plan.steps[t];
    const double seconds = totals[t];
    std::fprintf(out, "  %5zu %6zu %10.3f %9.4f %6.2f %9.2f %8.2f  %-9s %-22s %s\n", t, runCount,
                 1e3 * seconds, 1e3 * seconds / runs, sum > 0 ? 100.0 * seconds / sum : 0.0,
                 seconds > 0 ? step.flops * runs / seconds / 1e9 : 0.0,
                 seconds > 0 ? step.bytes * runs / seconds / 1e9 : 0.0, plan::phaseName(step.phase),
                 step.kernelName.c_str(), step.location.c_str());
  }
  std::array<double, plan::Phase_ARRAYSIZE> phaseSeconds{}, phaseFlops{};
  for (size_t t = 0; t < totals.size(); ++t) {
    phaseSeconds[plan.steps[t].phase] += totals[t];
    phaseFlops[plan.steps[t].phase] += plan.steps[t].flops * runs;
  }
  std::fprintf(out, "  by phase:\n");
  for (int phase = 0; phase < plan::Phase_ARRAYSIZE; ++phase)
    if (phaseSeconds[phase] > 0)
      std::fprintf(out, "    %-10s %10.3f ms per run %6.2f%% %9.2f GFLOP/s\n",
                   plan::phaseName(phase), 1e3 * phaseSeconds[phase] / runs,
                   sum > 0 ? 100.0 * phaseSeconds[phase] / sum : 0.0,
                   phaseFlops[phase] / phaseSeconds[phase] / 1e9);
}

int64_t StepProfile::stepAt(const WorkerSpan &span) const {
  // The last step that started at or before the span's middle, if the span's middle is in it.
  double middle = span.start + span.seconds / 2;
  auto after = std::upper_bound(events.begin(), events.end(), middle,
                                [](double time, const Event &event) { return time < event.start; });
  if (after == events.begin())
    return -1;
  const Event &event = *(after - 1);
  return middle <= event.start + event.seconds ? after - 1 - events.begin() : -1;
}

bool StepProfile::writeTrace(const std::string &path, std::string &error) const {
  const double origin = events.empty() ? 0.0 : events.front().start;
  std::string json = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  char number[64];
  // A complete event of `step` on track `tid`.
  auto add = [&](uint32_t stepIndex, double start, double seconds, int tid) {
    const PlanStep &step = plan.steps[stepIndex];
    std::string name = step.kernelName + (step.location.empty() ? "" : " " + step.location);
    std::snprintf(number, sizeof(number), "\"ts\": %.3f, \"dur\": %.3f", 1e6 * (start - origin),
                  1e6 * seconds);
    json += "{\"name\": " + jsonQuote(name) + ", \"cat\": \"" + plan::phaseName(step.phase) +
            "\", \"ph\": \"X\", " + number + ", \"pid\": 1, \"tid\": " + std::to_string(tid) +
            ", \"args\": {\"step\": " + std::to_string(stepIndex) + "}},\n";
  };
  // Tracks: 1 the steps as the executor launched them, 2 + k worker k.
  auto name = [&](int tid, const std::string &track) {
    json +=
        "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " + std::to_string(tid) +
        ", \"args\": {\"name\": " + jsonQuote(track) + "}},\n";
  };
  name(1, "steps");
  int workers = 0;
  for (const WorkerSpan &span : spans)
    workers = std::max(workers, span.worker + 1);
  for (int worker = 0; worker < workers; ++worker)
    name(2 + worker,
         worker == 0 ? "worker 0 (the launching thread)" : "worker " + std::to_string(worker));
  for (const Event &event : events)
    add(event.step, event.start, event.seconds, 1);
  for (const WorkerSpan &span : spans)
    if (int64_t event = stepAt(span); event >= 0)
      add(events[event].step, span.start, span.seconds, 2 + span.worker);
  json.resize(json.size() - 2); // the last ",\n"
  json += "\n]}\n";
  return writeFileAtomically(path, {json}, 0644, error);
}

} // namespace memc::runtime
