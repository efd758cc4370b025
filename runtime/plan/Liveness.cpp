//===- Liveness.cpp - when arena values live, and that they never collide -===//
#include "runtime/plan/Liveness.h"
#include "runtime/plan/ArenaLifetimes.h"

#include <map>
#include <set>

namespace memc::runtime {
namespace {

constexpr int64_t kNeverWritten = INT64_MIN;

class ArenaAnalysis {
public:
  ArenaAnalysis(const plan::Plan &proto, LoadedPlan &plan) : proto(proto), plan(plan) {}

  bool run(std::string &message) {
    bool ok = computeLiveRanges() && buildTimeline() && checkCollisions();
    if (!ok)
      message = error;
    return ok;
  }

private:
  const plan::Plan &proto;
  LoadedPlan &plan;
  std::string error;
  /// Per step: arena inputs whose bytes an in-place output of the step takes over.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> takeovers;

  bool fail(const std::string &message) {
    error = message;
    return false;
  }

  bool inArena(uint32_t buffer) const {
    return plan.buffers[buffer].region == Region::Arena && plan.buffers[buffer].size != 0;
  }

  std::string bufferLabel(uint32_t index) const {
    const std::string &name = plan.buffers[index].name;
    return "buffer " + std::to_string(index) + (name.empty() ? "" : " ('" + name + "')");
  }

  std::string stepLabel(size_t index) const {
    const PlanStep &step = plan.steps[index];
    return "step " + std::to_string(index) + " ('" + step.kernelName + "'" +
           (step.location.empty() ? "" : " from '" + step.location + "'") + ")";
  }

  std::string writerLabel(int64_t first) const {
    return first < 0 ? "the graph input binding" : stepLabel(static_cast<size_t>(first));
  }

  /// The arena's lifetime rule (ArenaLifetimes.h), checked as it goes: every value is written
  /// once before it is read, and every arena output is written.
  bool computeLiveRanges() {
    auto &ranges = plan.liveRanges;
    ranges.assign(plan.buffers.size(), {kNeverWritten, kNeverWritten});
    std::vector<uint32_t> owner(plan.buffers.size());
    for (size_t b = 0; b < plan.buffers.size(); ++b)
      owner[b] = plan.buffers[b].owner;
    bool ok = forEachArenaUse(proto, owner, [&](const ArenaUse &use) {
      if (plan.buffers[use.owner].size == 0)
        return true;
      LiveRange &range = ranges[use.owner];
      size_t step = static_cast<size_t>(use.position);
      switch (use.kind) {
      case ArenaUseKind::InputBinding:
        range = {kBeforeFirstStep, kBeforeFirstStep};
        return true;
      case ArenaUseKind::StepRead:
        if (range.first == kNeverWritten)
          return fail(
              stepLabel(step) + " reads arena " + bufferLabel(use.buffer) +
              (use.buffer == use.owner ? "" : ", a view of " + bufferLabel(use.owner) + ",") +
              " before anything writes it");
        range.last = use.position;
        return true;
      case ArenaUseKind::StepWrite:
        if (range.first != kNeverWritten)
          return fail(stepLabel(step) + " writes arena " + bufferLabel(use.owner) + ", which " +
                      writerLabel(range.first) + " already wrote (arena values are written once)");
        range = {use.position, use.position};
        return true;
      case ArenaUseKind::StepWorkspace:
        // Scratch is written and read at its step alone: a value live exactly then.
        if (range.first != kNeverWritten)
          return fail(stepLabel(step) + " uses arena " + bufferLabel(use.owner) +
                      " as its workspace, but " + writerLabel(range.first) +
                      " already uses it (a workspace belongs to one step)");
        range = {use.position, use.position};
        return true;
      case ArenaUseKind::OutputBinding:
        if (range.first == kNeverWritten)
          return fail("output '" + plan.outputs[use.binding].name + "': arena " +
                      bufferLabel(use.buffer) + " is never written");
        range.last = use.position;
        return true;
      }
      return true;
    });
    if (!ok)
      return false;
    // Views live as long as the bytes they view.
    for (size_t b = 0; b < plan.buffers.size(); ++b)
      ranges[b] = ranges[plan.buffers[b].owner];
    return true;
  }

  bool sameBytes(uint32_t a, uint32_t b) const {
    const PlanBuffer &x = plan.buffers[a], &y = plan.buffers[b];
    return x.region == y.region && x.offset == y.offset && x.size == y.size;
  }

  bool buildTimeline() {
    size_t events = plan.steps.size() + 1;
    plan.timeline.allocated.assign(events, {});
    plan.timeline.released.assign(events, {});
    takeovers.assign(plan.steps.size(), {});
    std::vector<bool> handedOver(plan.buffers.size(), false), takenOver(plan.buffers.size());
    for (size_t t = 0; t < plan.steps.size(); ++t) {
      const PlanStep &step = plan.steps[t];
      if (!step.inPlace)
        continue;
      for (uint32_t output : step.outputs) {
        if (!inArena(output))
          continue;
        for (uint32_t read : step.inputs) {
          uint32_t input = plan.buffers[read].owner;
          if (!sameBytes(output, input) || handedOver[input])
            continue;
          int64_t last = plan.liveRanges[input].last;
          if (last != static_cast<int64_t>(t))
            return fail(stepLabel(t) + " writes " + bufferLabel(output) + " in place over " +
                        bufferLabel(input) + ", which is still read " +
                        (last == static_cast<int64_t>(plan.steps.size())
                             ? std::string("as a graph output")
                             : "by " + stepLabel(static_cast<size_t>(last))));
          handedOver[input] = true;
          takenOver[output] = true;
          takeovers[t].emplace_back(input, output);
        }
      }
    }
    for (uint32_t b = 0; b < plan.buffers.size(); ++b) {
      const LiveRange &range = plan.liveRanges[b];
      if (!inArena(b) || plan.buffers[b].view || range.first == kNeverWritten)
        continue;
      if (!takenOver[b])
        plan.timeline.allocated[range.first + 1].push_back(b);
      if (!handedOver[b] && range.last < static_cast<int64_t>(plan.steps.size()))
        plan.timeline.released[range.last + 1].push_back(b);
    }
    return true;
  }

  /// Sweeps the schedule with the set of live byte ranges (keyed by offset; disjoint by
  /// construction) and checks each newly written value against it.
  bool checkCollisions() {
    std::map<uint64_t, uint32_t> live; // offset -> buffer
    const auto &timeline = plan.timeline;
    for (size_t event = 0; event < timeline.allocated.size(); ++event) {
      if (event > 0) {
        for (uint32_t b : timeline.released[event - 1])
          live.erase(plan.buffers[b].offset);
        for (auto [input, output] : takeovers[event - 1])
          live[plan.buffers[input].offset] = output;
      }
      for (uint32_t b : timeline.allocated[event]) {
        const PlanBuffer &buffer = plan.buffers[b];
        auto next = live.lower_bound(buffer.offset);
        if (next != live.end() && next->first < buffer.offset + buffer.size)
          return collision(b, next->second);
        if (next != live.begin()) {
          uint32_t previous = std::prev(next)->second;
          const PlanBuffer &other = plan.buffers[previous];
          if (other.offset + other.size > buffer.offset)
            return collision(b, previous);
        }
        live.emplace(buffer.offset, b);
      }
    }
    return true;
  }

  bool collision(uint32_t written, uint32_t other) {
    const LiveRange &range = plan.liveRanges[other];
    auto bytes = [&](uint32_t b) {
      return "[" + std::to_string(plan.buffers[b].offset) + ", " +
             std::to_string(plan.buffers[b].offset + plan.buffers[b].size) + ")";
    };
    return fail(writerLabel(plan.liveRanges[written].first) + " writes arena " +
                bufferLabel(written) + " at bytes " + bytes(written) + ", which overlap " +
                bufferLabel(other) + " at " + bytes(other) + ", live from " +
                (range.first < 0 ? std::string("the start") : "step " + std::to_string(range.first)) +
                " to " +
                (range.last == static_cast<int64_t>(plan.steps.size())
                     ? std::string("the end")
                     : "step " + std::to_string(range.last)));
  }
};

} // namespace

bool analyzeArena(const plan::Plan &proto, LoadedPlan &plan, std::string &error) {
  return ArenaAnalysis(proto, plan).run(error);
}

} // namespace memc::runtime
