//===- PlanLoader.cpp - parsing and validating untrusted plans ------------===//
//
// The rules, in the order they are checked:
//  - format_version is kPlanFormatVersion; target is the device's name; alignment is a power of
//    two <= kMaxPlanAlignment.
//    (arena_lower_bound_bytes is the planner's claim, reported beside the executor's own
//    measurement, never trusted, so not checked.)
//  - Buffers: a known dtype and region; dims >= 0; size_bytes == numElements * element size
//    (overflow-checked); offset a multiple of the element size, and of the alignment in the arena,
//    persistent and host regions; [offset, offset + size_bytes) inside arena_bytes,
//    persistent_bytes, host_bytes or constant_data. Persistent (and host) buffers are disjoint or
//    exact aliases, never partly overlapping. persistent_bytes and host_bytes reach no further
//    than their buffers (rounded up to the alignment).
//  - Views (alias_of): the viewed buffer exists, the chain of views has no cycle, and its owner
//    (the chain's end) has the view's region, offset and size_bytes.
//  - Bindings: non-empty names, unique within inputs, outputs and parameters, and no input named
//    like a parameter; valid buffer indices; an input or parameter buffer bound once; inputs in
//    the arena or persistent region and not views, parameters persistent or host (not views) with a
//    kind of PlanVocabulary.h other than KIND_NONE; `source` empty and `kind` KIND_NONE on
//    inputs and outputs.
//  - Staging (Binding.staging, inputs only): a persistent buffer that is not a view, of its
//    input's dtype and shape, bound to nothing else, disjoint from every other persistent buffer
//    and used by no step.
//  - Steps: the kernel exists in the device's table; buffer indices are valid; attributes have
//    unique non-empty names and a value; no output is a constant, a view or a bound input;
//    outputs are pairwise disjoint; a step's outputs are disjoint from its inputs unless the
//    step is in place, in which case each output is disjoint from every input or has exactly one
//    input's bytes, and at least one has; the kernel's check accepts the dtypes, shapes and
//    attributes. A workspace buffer exists, is an arena buffer that is not a view, and has at
//    least the bytes the kernel's workspace entry asks for; a kernel that needs workspace gets
//    one.
//  - Arena values (Liveness.h): written once, by a step or as an input, before any step reads
//    them; outputs are written; a workspace lives at its step only; no two values live at the
//    same step share bytes, except an in-place output taking over its dying input's bytes.
//
//===----------------------------------------------------------------------===//
#include "runtime/plan/PlanLoader.h"

#include "kernels/Collectives.h"
#include "runtime/device/Device.h"

#include "runtime/plan/Liveness.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanFormat.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/plan/StepCall.h"
#include "runtime/support/Bytes.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace memc::runtime {
namespace {

std::string quoted(const std::string &text) { return "'" + text + "'"; }

/// "1 parameter, 2 buffer, ...": the kinds a parameter binding may have.
std::string parameterKindNames() {
  std::string names;
  for (const plan::BindingKindInfo &info : plan::kBindingKinds)
    if (info.kind != plan::KIND_NONE)
      names +=
          (names.empty() ? "" : ", ") + std::to_string(info.kind) + " " + std::string(info.name);
  return names;
}

class PlanValidator {
public:
  PlanValidator(const plan::Plan &proto, const Device &device, LoadedPlan &out)
      : proto(proto), device(device), kernelTable(device.kernels()), out(out) {}

  bool validate(std::string &message) {
    bool ok = checkHeader() && checkBuffers() && checkPersistentSize() && resolveViews() &&
              checkPersistentAliasing() && checkBindings(proto.inputs(), "input", out.inputs) &&
              checkBindings(proto.parameters(), "parameter", out.parameters) &&
              checkBindings(proto.outputs(), "output", out.outputs) && checkStaging() &&
              checkSteps() && (analyzeArena(proto, out, error) || fail(error));
    if (!ok)
      message = "plan: " + error;
    return ok;
  }

private:
  const plan::Plan &proto;
  const Device &device;
  const kernels::KernelTable &kernelTable;
  LoadedPlan &out;
  std::string error;
  std::set<uint32_t> inputBuffers;

  bool fail(const std::string &message) {
    error = message;
    return false;
  }

  std::string bufferLabel(uint32_t index) const {
    return "buffer " + std::to_string(index) +
           (out.buffers[index].name.empty() ? "" : " (" + quoted(out.buffers[index].name) + ")");
  }

  std::string stepLabel(size_t index, const plan::Step &step) const {
    return "step " + std::to_string(index) + " (" + quoted(step.kernel()) +
           (step.location().empty() ? "" : " from " + quoted(step.location())) + ")";
  }

  bool checkHeader() {
    if (proto.format_version() != plan::kPlanFormatVersion)
      return fail("format version " + std::to_string(proto.format_version()) +
                  " is not supported: this runtime reads format version " +
                  std::to_string(plan::kPlanFormatVersion) +
                  " (recompile the model with a matching memc, or this is not a memc plan)");
    if (proto.target() != device.name())
      return fail("the plan was compiled for target " + quoted(proto.target()) +
                  ", not for this device " + quoted(device.name()) +
                  " (recompile the model for this device)");
    if (!isPowerOfTwo(proto.alignment()) || proto.alignment() > plan::kMaxPlanAlignment)
      return fail("alignment " + std::to_string(proto.alignment()) +
                  " is not a power of two up to " + std::to_string(plan::kMaxPlanAlignment));
    out.alignment = proto.alignment();
    out.arenaBytes = proto.arena_bytes();
    out.persistentBytes = proto.persistent_bytes();
    out.hostBytes = proto.host_bytes();
    out.arenaLowerBoundBytes = proto.arena_lower_bound_bytes();
    out.model = proto.model();
    out.constantData = proto.constant_data();
    return true;
  }

  uint64_t regionLimit(Region region) const {
    switch (region) {
    case Region::Arena:
      return out.arenaBytes;
    case Region::Persistent:
      return out.persistentBytes;
    case Region::Constant:
      return out.constantData.size();
    case Region::Host:
      return out.hostBytes;
    }
    return 0;
  }

  bool checkBuffer(uint32_t index, const plan::Buffer &buffer, PlanBuffer &resolved) {
    std::string label = "buffer " + std::to_string(index) +
                        (buffer.name().empty() ? "" : " (" + quoted(buffer.name()) + ")");
    if (!dtypeFromValue(buffer.dtype(), resolved.dtype))
      return fail(label + ": unknown dtype " + std::to_string(buffer.dtype()));
    if (!plan::Region_IsValid(buffer.region()))
      return fail(label + ": unknown region " + std::to_string(buffer.region()));
    resolved.region = static_cast<Region>(buffer.region());
    resolved.shape.assign(buffer.shape().begin(), buffer.shape().end());
    resolved.offset = buffer.offset();
    resolved.size = buffer.size_bytes();
    resolved.name = buffer.name();
    uint64_t expected;
    if (!checkedSizeBytes(resolved.dtype, resolved.shape, expected))
      return fail(label + ": shape " + shapeString(resolved.shape) +
                  " has a negative dim or too many elements");
    if (expected != resolved.size)
      return fail(label + ": size_bytes is " + std::to_string(resolved.size) + " but " +
                  dtypeString(resolved.dtype) + " " + shapeString(resolved.shape) + " takes " +
                  std::to_string(expected));
    uint64_t alignment =
        resolved.region == Region::Constant ? elementSize(resolved.dtype) : out.alignment;
    if (resolved.offset % alignment != 0 || resolved.offset % elementSize(resolved.dtype) != 0)
      return fail(label + ": offset " + std::to_string(resolved.offset) + " in the " +
                  regionName(resolved.region) + " region is not a multiple of " +
                  std::to_string(std::max(alignment, elementSize(resolved.dtype))));
    uint64_t limit = regionLimit(resolved.region);
    if (!rangeWithin(resolved.offset, resolved.size, limit))
      return fail(label + ": bytes [" + std::to_string(resolved.offset) + ", +" +
                  std::to_string(resolved.size) + ") exceed the " + std::to_string(limit) +
                  "-byte " + regionName(resolved.region) + " region");
    return true;
  }

  /// The persistent region is no larger than its buffers reach, rounded up to the alignment (as
  /// the planner sizes it): the executor zero-fills all of it, so a crafted plan declaring
  /// gigabytes no buffer uses is refused before any of it is allocated. (The arena is allocated,
  /// not written, until steps use it.)
  bool checkPersistentSize() {
    for (auto [region, declared] : {std::pair{Region::Persistent, out.persistentBytes},
                                    std::pair{Region::Host, out.hostBytes}}) {
      uint64_t reach = 0;
      for (const PlanBuffer &buffer : out.buffers)
        if (buffer.region == region)
          reach = std::max(reach, buffer.offset + buffer.size); // within the region: no overflow
      uint64_t used = (reach + out.alignment - 1) / out.alignment * out.alignment;
      if (declared > used)
        return fail(std::string(regionName(region)) + " region of " + std::to_string(declared) +
                    " bytes, but its buffers reach only " + std::to_string(reach) +
                    " (rounded up to the alignment, " + std::to_string(used) +
                    "): the plan is corrupted or not memc's");
    }
    return true;
  }

  bool checkBuffers() {
    out.buffers.resize(proto.buffers_size());
    for (int i = 0; i < proto.buffers_size(); ++i)
      if (!checkBuffer(static_cast<uint32_t>(i), proto.buffers(i), out.buffers[i]))
        return false;
    return true;
  }

  /// Points every buffer at the owner of its bytes, following alias_of chains.
  bool resolveViews() {
    for (uint32_t i = 0; i < out.buffers.size(); ++i) {
      PlanBuffer &buffer = out.buffers[i];
      buffer.owner = i;
      buffer.view = proto.buffers(i).has_alias_of();
      // A chain longer than the number of buffers has a cycle.
      for (size_t length = 0; proto.buffers(buffer.owner).has_alias_of(); ++length) {
        uint32_t next = proto.buffers(buffer.owner).alias_of();
        if (next >= out.buffers.size())
          return fail(bufferLabel(buffer.owner) + ": views buffer " + std::to_string(next) +
                      ", which does not exist");
        if (length == out.buffers.size())
          return fail(bufferLabel(i) + ": its chain of views (alias_of) has a cycle");
        buffer.owner = next;
      }
      const PlanBuffer &owner = out.buffers[buffer.owner];
      if (owner.region != buffer.region || owner.offset != buffer.offset ||
          owner.size != buffer.size)
        return fail(bufferLabel(i) + " views " + bufferLabel(buffer.owner) +
                    " but does not have its region, offset and size");
    }
    return true;
  }

  /// Persistent (and host) buffers live for the whole program, so any two either share all
  /// their bytes (one is an in-place update of the other) or none.
  bool checkPersistentAliasing() {
    std::vector<uint32_t> persistent;
    for (uint32_t i = 0; i < out.buffers.size(); ++i)
      if ((out.buffers[i].region == Region::Persistent || out.buffers[i].region == Region::Host) &&
          out.buffers[i].size != 0)
        persistent.push_back(i);
    auto range = [&](uint32_t i) {
      return std::make_tuple(out.buffers[i].region, out.buffers[i].offset, out.buffers[i].size);
    };
    std::sort(persistent.begin(), persistent.end(),
              [&](uint32_t a, uint32_t b) { return range(a) < range(b); });
    for (size_t i = 1; i < persistent.size(); ++i) {
      const PlanBuffer &previous = out.buffers[persistent[i - 1]];
      const PlanBuffer &current = out.buffers[persistent[i]];
      if (range(persistent[i - 1]) != range(persistent[i]) && current.region == previous.region &&
          current.offset < previous.offset + previous.size)
        return fail(bufferLabel(persistent[i - 1]) + " and " + bufferLabel(persistent[i]) +
                    " partly overlap in the " + regionName(current.region) + " region");
    }
    return true;
  }

  /// A ZeRO stage 3 parameter: a flat buffer of its rank's shard of the whole shape.
  bool checkShardOf(const std::string &label, const std::string &kind, uint32_t buffer,
                    const std::vector<int64_t> &whole) {
    const int64_t ranks = proto.training().world_size();
    if (kind != "parameter" || ranks < 2 || ranks > kernels::kMaxWorldSize)
      return fail(label + ": only a parameter of a program of ranks is a shard");
    int64_t elements = 1;
    for (int64_t dim : whole) {
      if (dim < 0 || (dim > 0 && elements > INT64_MAX / dim))
        return fail(label + ": the whole shape " + shapeString(whole) + " is not a shape");
      elements *= dim;
    }
    const std::vector<int64_t> expected = {kernels::shardElements(elements, ranks)};
    if (out.buffers[buffer].shape != expected)
      return fail(label + ": the shard of " + shapeString(whole) + " over " +
                  std::to_string(ranks) + " ranks is " + shapeString(expected) + ", " +
                  bufferLabel(buffer) + " is " + shapeString(out.buffers[buffer].shape));
    return true;
  }

  bool checkBindings(const google::protobuf::RepeatedPtrField<plan::Binding> &bindings,
                     const std::string &kind, std::vector<PlanBinding> &resolved) {
    std::set<std::string> names;
    for (const plan::Binding &binding : bindings) {
      std::string label = kind + " " + quoted(binding.name());
      if (binding.name().empty())
        return fail("an " + kind + " binding has no name");
      if (!names.insert(binding.name()).second)
        return fail(label + " is bound twice");
      if (binding.buffer() >= out.buffers.size())
        return fail(label + ": buffer " + std::to_string(binding.buffer()) +
                    " does not exist (the plan has " + std::to_string(out.buffers.size()) + ")");
      Region region = out.buffers[binding.buffer()].region;
      if (kind == "output") {
        if (!binding.source().empty() || binding.kind() != plan::KIND_NONE)
          return fail(label + ": only parameters have a source and kind");
      } else {
        if (kind == "input" && (region == Region::Constant || !binding.source().empty() ||
                                binding.kind() != plan::KIND_NONE))
          return fail(label + ": inputs are arena or persistent buffers without source or kind");
        if (kind == "parameter" && region != Region::Persistent && region != Region::Host)
          return fail(label + ": parameters live in the persistent (or host) region, " +
                      bufferLabel(binding.buffer()) + " is in the " + regionName(region) +
                      " region");
        if (kind == "parameter" &&
            (!plan::BindingKind_IsValid(binding.kind()) || binding.kind() == plan::KIND_NONE))
          return fail(label + ": kind " + std::to_string(binding.kind()) +
                      " is not a kind of parameter (" + parameterKindNames() + ")");
        if (out.buffers[binding.buffer()].view)
          return fail(label + ": " + bufferLabel(binding.buffer()) +
                      " is a view; bind the buffer it views");
        if (!inputBuffers.insert(binding.buffer()).second)
          return fail(label + ": " + bufferLabel(binding.buffer()) +
                      " is already bound to another input or parameter");
        if (kind == "parameter")
          for (const PlanBinding &input : out.inputs)
            if (input.name == binding.name())
              return fail(label + " has the name of an input");
      }
      std::vector<int64_t> shardOf(binding.shard_of().begin(), binding.shard_of().end());
      if (!shardOf.empty() && !checkShardOf(label, kind, binding.buffer(), shardOf))
        return false;
      resolved.push_back({binding.name(), binding.buffer(),
                          binding.source().empty() ? binding.name() : binding.source(),
                          binding.kind(), std::move(shardOf), std::nullopt});
    }
    return true;
  }

  /// The inputs' staging buffers, which the copy stream writes while steps run: nothing else may
  /// have their bytes.
  bool checkStaging() {
    for (int i = 0; i < proto.outputs_size(); ++i)
      if (proto.outputs(i).has_staging())
        return fail("output " + quoted(proto.outputs(i).name()) + ": only inputs are staged");
    for (int i = 0; i < proto.parameters_size(); ++i)
      if (proto.parameters(i).has_staging())
        return fail("parameter " + quoted(proto.parameters(i).name()) + ": only inputs are staged");
    for (int i = 0; i < proto.inputs_size(); ++i) {
      if (!proto.inputs(i).has_staging())
        continue;
      PlanBinding &input = out.inputs[i];
      const uint32_t staging = proto.inputs(i).staging();
      std::string label =
          "input " + quoted(input.name) + ": staging buffer " + std::to_string(staging);
      if (staging >= out.buffers.size())
        return fail(label + " does not exist (the plan has " + std::to_string(out.buffers.size()) +
                    ")");
      label = "input " + quoted(input.name) + ": staging " + bufferLabel(staging);
      const PlanBuffer &buffer = out.buffers[staging], &bound = out.buffers[input.buffer];
      if (buffer.region != Region::Persistent || buffer.view)
        return fail(label + " must be a persistent buffer that is not a view");
      if (buffer.dtype != bound.dtype || buffer.shape != bound.shape)
        return fail(label + " is " + dtypeString(buffer.dtype) + " " + shapeString(buffer.shape) +
                    ", the input " + dtypeString(bound.dtype) + " " + shapeString(bound.shape));
      if (!inputBuffers.insert(staging).second)
        return fail(label + " is already bound to an input or parameter");
      for (uint32_t other = 0; other < out.buffers.size(); ++other)
        if (other != staging && !disjoint(other, staging))
          return fail(label + " shares bytes with " + bufferLabel(other));
      input.staging = staging;
    }
    return true;
  }

  bool sameBytes(uint32_t a, uint32_t b) const {
    const PlanBuffer &x = out.buffers[a], &y = out.buffers[b];
    return x.region == y.region && x.offset == y.offset && x.size == y.size;
  }

  bool disjoint(uint32_t a, uint32_t b) const {
    const PlanBuffer &x = out.buffers[a], &y = out.buffers[b];
    return x.region != y.region || x.size == 0 || y.size == 0 || x.offset + x.size <= y.offset ||
           y.offset + y.size <= x.offset;
  }

  /// Outputs are disjoint from each other and, unless the step is in place, from the inputs.
  bool checkAliasing(const PlanStep &step, const std::string &label) {
    bool anyInPlace = false;
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      uint32_t output = step.outputs[i];
      for (size_t j = 0; j < i; ++j)
        if (!disjoint(output, step.outputs[j]))
          return fail(label + ": outputs " + bufferLabel(step.outputs[j]) + " and " +
                      bufferLabel(output) + " share bytes");
      for (uint32_t input : step.inputs) {
        if (disjoint(output, input))
          continue;
        if (!step.inPlace)
          return fail(label + ": output " + bufferLabel(output) + " shares bytes with input " +
                      bufferLabel(input) + " but the step is not in place");
        if (!sameBytes(output, input))
          return fail(label + ": in-place output " + bufferLabel(output) +
                      " partly overlaps input " + bufferLabel(input) +
                      " (it must have exactly the input's bytes)");
        anyInPlace = true;
      }
    }
    if (step.inPlace && !anyInPlace)
      return fail(label + ": marked in place but no output has an input's bytes");
    return true;
  }

  bool checkKernel(const plan::Step &source, const PlanStep &step, const std::string &label) {
    kernels::KernelCall call;
    std::string message;
    if (!describeStepCall(proto, source, step.attributes, call, message))
      return fail(label + ": " + message);
    if (!kernels::checkKernelCall(*step.kernel, call, message))
      return fail(label + ": " + (message.empty() ? "the kernel rejects this call" : message));
    uint64_t needed = kernels::workspaceBytes(*step.kernel, call);
    uint64_t given = step.hasWorkspace ? out.buffers[step.workspace].size : 0;
    if (given < needed)
      return fail(label + ": the kernel needs " + std::to_string(needed) +
                  " bytes of workspace but the step " +
                  (step.hasWorkspace ? "gives it " + bufferLabel(step.workspace) + " of " +
                                           std::to_string(given) + " bytes"
                                     : std::string("has none")) +
                  " (recompile the model with this memc)");
    return true;
  }

  bool checkWorkspace(const plan::Step &source, PlanStep &step, const std::string &label) {
    if (!source.has_workspace())
      return true;
    step.hasWorkspace = true;
    step.workspace = source.workspace();
    if (step.workspace >= out.buffers.size())
      return fail(label + ": workspace buffer " + std::to_string(step.workspace) +
                  " does not exist (the plan has " + std::to_string(out.buffers.size()) + ")");
    const PlanBuffer &buffer = out.buffers[step.workspace];
    if (buffer.region != Region::Arena || buffer.view)
      return fail(label + ": workspace " + bufferLabel(step.workspace) +
                  " must be an arena buffer that is not a view");
    for (const std::vector<uint32_t> *used : {&step.inputs, &step.outputs})
      for (uint32_t buffer : *used)
        if (buffer == step.workspace)
          return fail(label + ": workspace " + bufferLabel(step.workspace) +
                      " is also an input or output of the step");
    return true;
  }

  bool checkStep(size_t index, const plan::Step &source, PlanStep &step) {
    std::string label = stepLabel(index, source);
    step.kernelName = source.kernel();
    step.location = source.location();
    step.inPlace = source.in_place();
    // The cost model's estimates, reported beside measured times (never trusted for more).
    step.flops = std::isfinite(source.flops()) ? std::max(0.0, source.flops()) : 0.0;
    step.bytes = std::isfinite(source.bytes()) ? std::max(0.0, source.bytes()) : 0.0;
    step.phase = plan::Phase_IsValid(source.phase()) ? source.phase() : plan::PHASE_UNSPECIFIED;
    auto found = kernelTable.find(source.kernel());
    if (found == kernelTable.end() || !found->second.check || !found->second.run)
      return fail(label + ": the device has no kernel " + quoted(source.kernel()));
    step.kernel = &found->second;
    for (auto [indices, role] : {std::make_pair(&source.inputs(), "input"),
                                 std::make_pair(&source.outputs(), "output")}) {
      for (uint32_t buffer : *indices)
        if (buffer >= out.buffers.size())
          return fail(label + ": " + role + " buffer " + std::to_string(buffer) +
                      " does not exist (the plan has " + std::to_string(out.buffers.size()) +
                      ")");
    }
    step.inputs.assign(source.inputs().begin(), source.inputs().end());
    step.outputs.assign(source.outputs().begin(), source.outputs().end());
    for (const std::vector<uint32_t> *used : {&step.inputs, &step.outputs})
      for (uint32_t buffer : *used)
        if (isStaging(buffer))
          return fail(label + ": uses " + bufferLabel(buffer) +
                      ", an input's staging buffer, which only the runtime's copies use");
    for (uint32_t output : step.outputs) {
      if (out.buffers[output].region == Region::Constant)
        return fail(label + ": writes the constant " + bufferLabel(output));
      if (out.buffers[output].view)
        return fail(label + ": writes " + bufferLabel(output) + ", which is a view");
      if (out.buffers[output].region == Region::Persistent && isInput(output))
        return fail(label + ": writes the graph input " + bufferLabel(output));
    }
    std::string message;
    if (!convertStepAttributes(source, step.attributes, message))
      return fail(label + ": " + message);
    return checkWorkspace(source, step, label) && checkAliasing(step, label) &&
           checkKernel(source, step, label);
  }

  bool isInput(uint32_t buffer) const {
    for (const PlanBinding &input : out.inputs)
      if (input.buffer == buffer)
        return true;
    return false;
  }

  bool isStaging(uint32_t buffer) const {
    for (const PlanBinding &input : out.inputs)
      if (input.staging == buffer)
        return true;
    return false;
  }

  bool checkSteps() {
    out.steps.resize(proto.steps_size());
    for (int i = 0; i < proto.steps_size(); ++i)
      if (!checkStep(static_cast<size_t>(i), proto.steps(i), out.steps[i]))
        return false;
    return true;
  }
};

} // namespace

const char *regionName(Region region) {
  switch (region) {
  case Region::Arena:
    return "arena";
  case Region::Persistent:
    return "persistent";
  case Region::Constant:
    return "constant";
  case Region::Host:
    return "host";
  }
  return "?";
}

std::unique_ptr<LoadedPlan> validatePlan(const plan::Plan &plan, const Device &device,
                                         std::string &error) {
  auto loaded = std::make_unique<LoadedPlan>();
  loaded->kernels = &device.kernels();
  if (!PlanValidator(plan, device, *loaded).validate(error))
    return nullptr;
  return loaded;
}

std::unique_ptr<LoadedPlan> loadPlan(std::string_view bytes, const Device &device,
                                     std::string &error) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    error = "plan: " + std::to_string(bytes.size()) + " bytes is more than protobuf can parse (2 GiB)";
    return nullptr;
  }
  plan::Plan plan;
  // A corrupted plan is an error message of ours, not protobuf's log lines on stderr.
  google::protobuf::LogSilencer silence;
  if (!plan.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "plan: the plan is truncated or corrupted (not a valid memc plan)";
    return nullptr;
  }
  return validatePlan(plan, device, error);
}

} // namespace memc::runtime
