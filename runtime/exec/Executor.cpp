//===- Executor.cpp - running a loaded plan on a device -------------------===//
#include "runtime/exec/Executor.h"

#include "kernels/Collectives.h"

#include "runtime/io/Safetensors.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/Bytes.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

namespace memc::runtime {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeString(dtype)) + " " + shapeString(shape);
}

/// Joins problem lines under a heading, one per line.
std::string listProblems(const std::string &heading, const std::vector<std::string> &problems) {
  std::string text = heading;
  for (const std::string &problem : problems)
    text += "\n  " + problem;
  return text;
}

/// "step 3 ('gather' from 'embed')": how failures name a step.
std::string describeStep(const LoadedPlan &plan, size_t index) {
  const PlanStep &step = plan.steps[index];
  return "step " + std::to_string(index) + " ('" + step.kernelName + "'" +
         (step.location.empty() ? "" : " from '" + step.location + "'") + ")";
}

} // namespace

Executor::Executor(std::unique_ptr<LoadedPlan> plan, Device &device,
                   const ExecutorOptions &options)
    : loaded(std::move(plan)), device(device), options(options), arenaUsage(*loaded) {}

std::unique_ptr<Executor> Executor::create(std::unique_ptr<LoadedPlan> plan, Device &device,
                                           const ExecutorOptions &options, std::string &error) {
  if (plan->kernels != &device.kernels()) {
    error = "the plan was validated against another device's kernels than '" + device.name() +
            "'s";
    return nullptr;
  }
  std::unique_ptr<Executor> executor(new Executor(std::move(plan), device, options));
  if (!executor->allocateRegions(error))
    return nullptr;
  executor->buildCalls();
  const LoadedPlan &loaded = *executor->loaded;
  ExecutionStats &stats = executor->runStats;
  stats.arenaBytes = loaded.arenaBytes;
  stats.persistentBytes = loaded.persistentBytes;
  stats.constantBytes = loaded.constantData.size();
  stats.arenaLowerBoundBytes = loaded.arenaLowerBoundBytes;
  stats.steps = loaded.steps.size();
  // Nothing to load: a plan without parameters is ready to run.
  executor->parametersLoaded = loaded.parameters.empty();
  return executor;
}

bool Executor::allocateRegions(std::string &error) {
  stream = device.createStream(error);
  if (!stream)
    return false;
  stream->kernelContext().collectives =
      options.deviceCollectives ? options.deviceCollectives : options.collectives;
  const LoadedPlan &plan = *loaded;
  // The plan's device memory against what the device has free, before taking any of it.
  uint64_t needed = plan.arenaBytes + plan.persistentBytes + plan.constantData.size();
  if (std::optional<uint64_t> free = device.freeBytes(); free && needed > *free) {
    error = "the plan needs " + formatBytes(needed) + " of device memory (arena " +
            formatBytes(plan.arenaBytes) + ", persistent " + formatBytes(plan.persistentBytes) +
            ", constants " + formatBytes(plan.constantData.size()) + ") but " +
            device.properties().description + " has " + formatBytes(*free) +
            " free (recompile with a --vram-budget below that)";
    return false;
  }
  // Offloaded state: host memory the device reaches (pinned on a GPU), zeroed by the host.
  if (!host.allocateHost(device, plan.hostBytes, "host region", error))
    return false;
  if (host.size())
    std::memset(host.data(), 0, host.size());
  return arena.allocate(device, plan.arenaBytes, plan.alignment, "arena", error) &&
         persistent.allocate(device, plan.persistentBytes, plan.alignment, "persistent region",
                             error) &&
         constants.allocate(device, plan.constantData.size(), plan.alignment, "constants", error) &&
         device.fillZero(persistent.data(), persistent.size(), *stream, error) &&
         device.copyToDevice(constants.data(), plan.constantData.data(), plan.constantData.size(),
                             *stream, error) &&
         stream->synchronize(error);
}

char *Executor::address(const PlanBuffer &buffer) const {
  switch (buffer.region) {
  case Region::Arena:
    return arena.data() + buffer.offset;
  case Region::Persistent:
    return persistent.data() + buffer.offset;
  case Region::Constant:
    return constants.data() + buffer.offset;
  case Region::Host:
    return host.data() + buffer.offset;
  }
  return nullptr;
}

void Executor::buildCalls() {
  // The scalar graph inputs' host copies (TensorView::hostData), one slot of 8 bytes each.
  std::map<uint32_t, const uint8_t *> hostScalarOf;
  for (const PlanBinding &input : loaded->inputs) {
    const bool scalar = loaded->buffers[input.buffer].size <= sizeof(uint64_t);
    hostScalarOffsets.push_back(scalar ? static_cast<int64_t>(hostScalars.size()) : -1);
    if (scalar)
      hostScalars.resize(hostScalars.size() + sizeof(uint64_t));
  }
  for (size_t i = 0; i < loaded->inputs.size(); ++i)
    if (hostScalarOffsets[i] >= 0)
      hostScalarOf[loaded->inputs[i].buffer] = hostScalars.data() + hostScalarOffsets[i];
  calls.resize(loaded->steps.size());
  for (size_t t = 0; t < loaded->steps.size(); ++t) {
    const PlanStep &step = loaded->steps[t];
    auto view = [&](uint32_t index) {
      const PlanBuffer &buffer = loaded->buffers[index];
      return kernels::TensorView{address(buffer), buffer.dtype, buffer.shape};
    };
    for (uint32_t input : step.inputs) {
      calls[t].inputs.push_back(view(input));
      if (auto known = hostScalarOf.find(input); known != hostScalarOf.end())
        calls[t].inputs.back().hostData = known->second;
    }
    for (uint32_t output : step.outputs)
      calls[t].outputs.push_back(view(output));
    calls[t].attributes = &step.attributes;
    if (step.hasWorkspace) {
      const PlanBuffer &workspace = loaded->buffers[step.workspace];
      calls[t].workspace = address(workspace);
      calls[t].workspaceBytes = workspace.size;
    }
  }
}

bool Executor::upload(const std::vector<Upload> &uploads, std::string &error) {
  if (uploads.empty())
    return true;
  for (const Upload &copy : uploads)
    if (!device.copyToDevice(address(loaded->buffers[copy.buffer]), copy.data, copy.size, *stream,
                             error))
      return false;
  return stream->synchronize(error);
}

bool Executor::matchParameters(const LoadedPlan &plan, const SafetensorsFile &weights, int rank,
                               std::vector<Upload> &loads, std::string &error) {
  std::vector<std::string> problems;
  for (const PlanBinding &parameter : plan.parameters) {
    if (!plan::bindingKindInfo(parameter.kind).modelWeight)
      continue; // starts at zero: the persistent region is zeroed when allocated
    const PlanBuffer &buffer = plan.buffers[parameter.buffer];
    std::string label = "parameter '" + parameter.name + "'" +
                        (parameter.source != parameter.name ? " (from '" + parameter.source + "')"
                                                            : "");
    // A ZeRO stage 3 shard is loaded from the whole tensor.
    const bool sharded = !parameter.shardOf.empty();
    const std::vector<int64_t> &shape = sharded ? parameter.shardOf : buffer.shape;
    const SafetensorsTensor *tensor = weights.find(parameter.source);
    if (!tensor) {
      problems.push_back(label + ": missing, expected " + describe(buffer.dtype, shape));
    } else if (!tensor->supported || tensor->dtype != buffer.dtype || tensor->shape != shape) {
      problems.push_back(label + ": expected " + describe(buffer.dtype, shape) +
                         ", the weights have " + tensor->dtypeName + " " +
                         shapeString(tensor->shape));
    } else if (!sharded) {
      loads.push_back({parameter.buffer, tensor->bytes.data(), tensor->bytes.size()});
    } else {
      // Rank r's elements [r*S, (r+1)*S) of the whole; the padding past its end stays zero.
      const size_t begin = std::min(static_cast<size_t>(rank) * buffer.size, tensor->bytes.size());
      loads.push_back({parameter.buffer, tensor->bytes.data() + begin,
                       std::min(buffer.size, tensor->bytes.size() - begin)});
    }
  }
  if (!problems.empty()) {
    error = listProblems("the weights do not match the program's parameters:", problems);
    return false;
  }
  return true;
}

bool Executor::checkParameters(const LoadedPlan &plan, const SafetensorsFile &weights,
                               std::string &error) {
  std::vector<Upload> loads;
  return matchParameters(plan, weights, /*rank=*/0, loads, error);
}

bool Executor::loadParameters(const SafetensorsFile &weights, std::string &error) {
  if (!idle(error))
    return false;
  std::vector<Upload> loads;
  if (!matchParameters(*loaded, weights, options.collectives ? options.collectives->rank() : 0,
                       loads, error))
    return false;
  if (!upload(loads, error))
    return false;
  parametersLoaded = true;
  return true;
}

bool Executor::matchInputs(const NamedArrays &arrays, std::vector<Upload> &uploads,
                           std::string &error) {
  std::map<std::string, const HostArray *> given;
  std::vector<std::string> problems;
  for (const auto &[name, array] : arrays)
    if (!given.emplace(name, &array).second)
      problems.push_back("array '" + name + "' is given twice");
  for (const PlanBinding &input : loaded->inputs) {
    const PlanBuffer &buffer = loaded->buffers[input.buffer];
    auto found = given.find(input.name);
    if (found == given.end()) {
      problems.push_back("input '" + input.name + "' is missing (expected " +
                         describe(buffer.dtype, buffer.shape) + ")");
      continue;
    }
    const HostArray &array = *found->second;
    given.erase(found);
    if (array.dtype != buffer.dtype || array.shape != buffer.shape)
      problems.push_back("input '" + input.name + "': expected " +
                         describe(buffer.dtype, buffer.shape) + ", given " +
                         describe(array.dtype, array.shape));
    else if (array.bytes.size() != buffer.size)
      problems.push_back("input '" + input.name + "': holds " +
                         std::to_string(array.bytes.size()) + " bytes, expected " +
                         std::to_string(buffer.size));
    else
      uploads.push_back({input.buffer, array.bytes.data(), array.bytes.size()});
  }
  for (const auto &[name, array] : given)
    problems.push_back("'" + name + "' is not an input of the program");
  if (!problems.empty()) {
    error = listProblems("the inputs do not match the program's graph inputs:", problems);
    return false;
  }
  return true;
}

void Executor::keepHostScalars(const std::vector<Upload> &uploads) {
  for (size_t i = 0; i < uploads.size(); ++i)
    if (hostScalarOffsets[i] >= 0)
      std::memcpy(hostScalars.data() + hostScalarOffsets[i], uploads[i].data, uploads[i].size);
}

bool Executor::bindInputs(const NamedArrays &arrays, std::string &error) {
  if (!idle(error))
    return false;
  std::vector<Upload> uploads;
  if (!matchInputs(arrays, uploads, error))
    return false;
  keepHostScalars(uploads);
  outputsReady = false;
  inputsBound = false;
  if (!upload(uploads, error))
    return false;
  inputsBound = true;
  return true;
}

bool Executor::idle(std::string &error) const {
  if (submitted == collected)
    return true;
  error = "submitted runs are still in flight (collect them first)";
  return false;
}

bool Executor::launchSteps(std::string &error) {
  arenaUsage.reset();
  arenaUsage.advance(0);
  runStats.stepSeconds.clear();
  runStats.workerSpans.clear();
  if (options.profile) {
    device.recordWorkerSpans(true);
    device.takeWorkerSpans(); // nothing from before this run
    stream->clearMarks();
    stream->mark();
  }
  for (size_t t = 0; t < calls.size(); ++t) {
    const PlanStep &step = loaded->steps[t];
    auto stepStart = std::chrono::steady_clock::now();
    std::string reason;
    stream->kernelContext().step = static_cast<uint32_t>(t);
    if (!device.launch(*step.kernel, calls[t], *stream, reason) ||
        (options.timeSteps && !stream->synchronize(reason)) ||
        stream->kernelContext().errors.take(reason)) {
      error = describeStep(*loaded, t) + " failed: " + reason;
      return false;
    }
    if (options.timeSteps)
      runStats.stepSeconds.push_back(secondsSince(stepStart));
    if (options.profile)
      stream->mark();
    arenaUsage.advance(t + 1);
  }
  runStats.peakLiveArenaBytes = arenaUsage.peakLiveBytes();
  runStats.arenaHighWaterBytes = arenaUsage.highWaterBytes();
  if (runStats.arenaHighWaterBytes > loaded->arenaBytes ||
      runStats.peakLiveArenaBytes > loaded->arenaBytes) {
    error = "arena usage (high-water " + std::to_string(runStats.arenaHighWaterBytes) +
            ", peak live " + std::to_string(runStats.peakLiveArenaBytes) +
            " bytes) exceeds the planned arena of " + std::to_string(loaded->arenaBytes);
    return false;
  }
  return true;
}

bool Executor::takeLateFailure(std::string &error) {
  kernels::KernelErrorSlot &late = stream->kernelContext().errors;
  int64_t failedStep = late.step();
  if (!late.take(error))
    return true;
  bool named = failedStep >= 0 && static_cast<size_t>(failedStep) < calls.size();
  error = (named ? describeStep(*loaded, failedStep) : std::string("a step")) + " failed: " + error;
  return false;
}

void Executor::recordTimes(std::chrono::steady_clock::time_point start) {
  runStats.runSeconds = secondsSince(start);
  runStats.runStartSeconds = std::chrono::duration<double>(start.time_since_epoch()).count();
  if (!options.profile)
    return;
  if (!options.timeSteps)
    for (size_t t = 0; t < calls.size(); ++t)
      runStats.stepSeconds.push_back(stream->markSeconds(t + 1) - stream->markSeconds(t));
  device.recordWorkerSpans(false);
  runStats.workerSpans = device.takeWorkerSpans();
}

bool Executor::run(std::string &error) {
  if (!idle(error))
    return false;
  if (!parametersLoaded) {
    error = "the parameters are not loaded";
    return false;
  }
  if (!inputsBound) {
    error = "the inputs are not bound (bind them again before every run)";
    return false;
  }
  inputsBound = false;
  outputsReady = false;
  auto start = std::chrono::steady_clock::now();
  // An asynchronous device's kernels may report data-dependent failures only at the end.
  if (!launchSteps(error) || !stream->synchronize(error) || !takeLateFailure(error))
    return false;
  recordTimes(start);
  outputsReady = true;
  return true;
}

bool Executor::preparePipeline(std::string &error) {
  if (!runEvents.empty())
    return true;
  // Each slot: the staged inputs, then every output, each at the plan's alignment.
  auto place = [&](uint64_t bytes) {
    uint64_t offset = slotBytes;
    slotBytes += (bytes + loaded->alignment - 1) / loaded->alignment * loaded->alignment;
    return offset;
  };
  bool stages = false;
  for (const PlanBinding &input : loaded->inputs) {
    inputSlotOffsets.push_back(input.staging ? place(loaded->buffers[input.buffer].size) : 0);
    stages = stages || input.staging;
  }
  for (const PlanBinding &output : loaded->outputs)
    outputSlotOffsets.push_back(place(loaded->buffers[output.buffer].size));
  if (!runSlots.allocateHost(device, slotBytes * pipelineDepth(), "the runs' host slots", error) ||
      (stages && !(copyStream = device.createCopyStream(error))))
    return false;
  runEvents.resize(pipelineDepth());
  return true;
}

bool Executor::stageInputs(const std::vector<Upload> &uploads, size_t slot, std::string &error) {
  char *host = runSlots.data() + slot * slotBytes;
  std::vector<Upload> direct;
  bool staged = false;
  // matchInputs made one upload per input, in the plan's order.
  for (size_t i = 0; i < uploads.size(); ++i) {
    const std::optional<uint32_t> &staging = loaded->inputs[i].staging;
    if (!staging) {
      direct.push_back(uploads[i]);
      continue;
    }
    // The staging buffers are free once the last run has copied them into the arena. The
    // slot's host memory is free already: its last run was collected, so its upload is done.
    if (!staged && stagingRead && !copyStream->waitFor(*stagingRead, error))
      return false;
    staged = true;
    char *from = host + inputSlotOffsets[i];
    std::memcpy(from, uploads[i].data, uploads[i].size);
    if (!device.copyToDevice(address(loaded->buffers[*staging]), from, uploads[i].size, *copyStream,
                             error))
      return false;
  }
  if (!upload(direct, error))
    return false;
  if (!staged)
    return true;
  std::unique_ptr<Event> uploaded = copyStream->record(error);
  if (!uploaded || !stream->waitFor(*uploaded, error))
    return false;
  for (const PlanBinding &input : loaded->inputs)
    if (input.staging && !device.copyOnDevice(address(loaded->buffers[input.buffer]),
                                              address(loaded->buffers[*input.staging]),
                                              loaded->buffers[input.buffer].size, *stream, error))
      return false;
  return (stagingRead = stream->record(error)) != nullptr;
}

bool Executor::submit(const NamedArrays &arrays, std::string &error) {
  if (!parametersLoaded) {
    error = "the parameters are not loaded";
    return false;
  }
  if (runsInFlight() >= pipelineDepth()) {
    error = "already " + std::to_string(runsInFlight()) + " runs in flight (collect one first)";
    return false;
  }
  std::vector<Upload> uploads;
  if (!preparePipeline(error) || !matchInputs(arrays, uploads, error))
    return false;
  keepHostScalars(uploads);
  inputsBound = outputsReady = false;
  const size_t slot = submitted % pipelineDepth();
  RunEvents &run = runEvents[slot];
  run.finished.reset();
  run.start = std::chrono::steady_clock::now();
  // Counted as submitted from here: whatever this one enqueued before failing is in flight.
  ++submitted;
  if (!stageInputs(uploads, slot, error) || !launchSteps(error))
    return false;
  char *host = runSlots.data() + slot * slotBytes;
  for (size_t o = 0; o < loaded->outputs.size(); ++o) {
    const PlanBuffer &buffer = loaded->buffers[loaded->outputs[o].buffer];
    if (!device.copyToHost(host + outputSlotOffsets[o], address(buffer), buffer.size, *stream,
                           error))
      return false;
  }
  return (run.finished = stream->record(error)) != nullptr;
}

bool Executor::collect(NamedArrays &outputs, std::string &error) {
  if (submitted == collected) {
    error = "no run to collect: submit one first";
    return false;
  }
  const size_t slot = collected % pipelineDepth();
  ++collected;
  RunEvents &run = runEvents[slot];
  if (!run.finished) {
    error = "the run failed when it was submitted";
    return false;
  }
  if (!stream->waitUntil(*run.finished, error) || !takeLateFailure(error))
    return false;
  recordTimes(run.start);
  const char *host = runSlots.data() + slot * slotBytes;
  outputs.clear();
  for (size_t o = 0; o < loaded->outputs.size(); ++o) {
    const PlanBuffer &buffer = loaded->buffers[loaded->outputs[o].buffer];
    HostArray array{buffer.dtype, buffer.shape, std::vector<uint8_t>(buffer.size)};
    std::memcpy(array.bytes.data(), host + outputSlotOffsets[o], buffer.size);
    outputs.emplace_back(loaded->outputs[o].name, std::move(array));
  }
  return true;
}

bool Executor::setParameters(const NamedArrays &values, std::string &error) {
  if (!idle(error))
    return false;
  std::vector<Upload> loads;
  std::vector<std::string> problems;
  for (const PlanBinding &parameter : loaded->parameters) {
    const PlanBuffer &buffer = loaded->buffers[parameter.buffer];
    auto found = std::find_if(values.begin(), values.end(),
                              [&](const auto &named) { return named.first == parameter.name; });
    if (found == values.end() || found->second.dtype != buffer.dtype ||
        found->second.shape != buffer.shape || found->second.bytes.size() != buffer.size) {
      problems.push_back("'" + parameter.name + "': expected " +
                         describe(buffer.dtype, buffer.shape) +
                         (found == values.end() ? ", missing" : ", given another"));
      continue;
    }
    loads.push_back({parameter.buffer, found->second.bytes.data(), found->second.bytes.size()});
  }
  if (!problems.empty()) {
    error = listProblems("the parameters do not match the program:", problems);
    return false;
  }
  if (!upload(loads, error))
    return false;
  parametersLoaded = true;
  return true;
}

bool Executor::restoreParameters(const SafetensorsFile &checkpoint, std::string &error) {
  if (!idle(error))
    return false;
  std::vector<std::string> problems;
  for (const PlanBinding &parameter : loaded->parameters) {
    const PlanBuffer &buffer = loaded->buffers[parameter.buffer];
    const SafetensorsTensor *tensor = checkpoint.find(parameter.name);
    if (!tensor || !tensor->supported || tensor->dtype != buffer.dtype ||
        tensor->shape != buffer.shape)
      problems.push_back("'" + parameter.name + "': expected " +
                         describe(buffer.dtype, buffer.shape) +
                         (tensor ? ", the checkpoint has " + tensor->dtypeName + " " +
                                       shapeString(tensor->shape)
                                 : ", missing"));
  }
  if (!problems.empty()) {
    error = listProblems("the checkpoint does not match the program:", problems);
    return false;
  }
  std::vector<Upload> loads;
  for (const PlanBinding &parameter : loaded->parameters) {
    const SafetensorsTensor *tensor = checkpoint.find(parameter.name);
    loads.push_back({parameter.buffer, tensor->bytes.data(), tensor->bytes.size()});
  }
  if (!upload(loads, error))
    return false;
  parametersLoaded = true;
  return true;
}

bool Executor::readBindings(const std::vector<PlanBinding> &bindings, bool whole,
                            NamedArrays &arrays, std::string &error) {
  if (!idle(error))
    return false;
  arrays.clear();
  arrays.reserve(bindings.size());
  for (const PlanBinding &binding : bindings) {
    const PlanBuffer &buffer = loaded->buffers[binding.buffer];
    HostArray array;
    array.dtype = buffer.dtype;
    array.shape = buffer.shape;
    array.bytes.resize(buffer.size);
    if (!device.copyToHost(array.bytes.data(), address(buffer), buffer.size, *stream, error))
      return false;
    arrays.emplace_back(binding.name, std::move(array));
  }
  if (!stream->synchronize(error))
    return false;
  for (size_t i = 0; whole && i < bindings.size(); ++i)
    if (!bindings[i].shardOf.empty() && !gatherWhole(bindings[i], arrays[i].second, error))
      return false;
  return true;
}

bool Executor::gatherWhole(const PlanBinding &binding, HostArray &array, std::string &error) {
  kernels::Collectives *ranks = options.collectives;
  if (!ranks) {
    error = "'" + binding.name + "' is a shard of the ranks' parameter, and this process has no "
            "ranks to gather it from";
    return false;
  }
  const int64_t shard = array.shape[0];
  std::vector<uint8_t> gathered(array.bytes.size() * static_cast<size_t>(ranks->size()));
  if (!ranks->allGather(array.bytes.data(), gathered.data(), shard, array.dtype, nullptr, error))
    return false;
  int64_t elements = 1;
  for (int64_t dim : binding.shardOf)
    elements *= dim;
  gathered.resize(static_cast<size_t>(elements) * kernels::dtypeSize(array.dtype));
  array.shape = binding.shardOf;
  array.bytes = std::move(gathered);
  return true;
}

bool Executor::readParameters(NamedArrays &arrays, std::string &error) {
  return readBindings(loaded->parameters, /*whole=*/false, arrays, error);
}

bool Executor::readWholeParameters(NamedArrays &arrays, std::string &error) {
  return readBindings(loaded->parameters, /*whole=*/true, arrays, error);
}

bool Executor::readParametersOf(const LoadedPlan &other, NamedArrays &arrays, std::string &error) {
  std::vector<PlanBinding> shared;
  for (const PlanBinding &parameter : loaded->parameters)
    if (std::any_of(other.parameters.begin(), other.parameters.end(),
                    [&](const PlanBinding &wanted) { return wanted.name == parameter.name; }))
      shared.push_back(parameter);
  return readBindings(shared, /*whole=*/true, arrays, error);
}

bool Executor::readOutputs(NamedArrays &arrays, std::string &error) {
  if (!outputsReady) {
    error = "no outputs to read: run the program first (after binding inputs)";
    return false;
  }
  return readBindings(loaded->outputs, /*whole=*/false, arrays, error);
}

} // namespace memc::runtime
