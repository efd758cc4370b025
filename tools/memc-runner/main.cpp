//===- main.cpp - memc-runner: runs compiled memc programs ----------------===//
//
// A compiled program is this executable with a plan and weights appended (Bundle.h):
//
//   PROGRAM --inputs IN.npz [--outputs OUT.npz] [--device cpu] [--stats] [--repeat N]
//
// Without a bundle it runs a plan and weights given as files:
//
//   memc-runner --plan P.plan [--weights W.safetensors] --inputs IN.npz [--outputs OUT.npz] ...
//
// Arrays in the .npz files are named after the graph's inputs and outputs. A one-line summary
// of memory and time goes to stderr; every error is a message and exit code 1.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CpuTarget.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/device/AvailableDevices.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/StepProfile.h"
#include "runtime/io/DistinctFiles.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/support/MessageText.h"
#include "runtime/support/NumberRange.h"
#include "runtime/support/OutOfMemory.h"
#include "runtime/train/Checkpoints.h"
#include "runtime/train/SaveAdapter.h"
#include "runtime/train/SaveTrained.h"
#include "runtime/train/TrainingLoop.h"
#include "tools/memc-runner/JoinRanks.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <optional>

using namespace memc::runtime;

namespace {

struct Options {
  std::optional<std::string> plan, weights, inputs, outputs;
  // Training programs.
  std::optional<std::string> data, steps, log, dumpGrads, save, saveAdapter, checkpoint,
      checkpointEvery,
      resume, seed, lr, warmupSteps, schedule, tokens, epochs, evalData, evalEvery, weightDecay,
      clipGradNorm, collectiveTimeout;
  /// The device to run on; by default the one the plan was compiled for (Plan.target).
  std::optional<std::string> device;
  /// Runs of the schedule; the summary reports the median time (benchmarks).
  int repeat = 1;
  bool stats = false;
  /// --profile [TRACE.json] (runtime/exec/StepProfile.h).
  bool profile = false;
  std::optional<std::string> profileTrace;
  bool shuffle = false;
  bool help = false;
  bool version = false;
};

std::string programName = "memc-runner";

int fail(const std::string &message) {
  std::fprintf(stderr, "%s: error: %s\n", programName.c_str(),
               shortenLongRuns(message).c_str());
  return 1;
}

void note(const std::string &message) {
  std::fprintf(stderr, "%s: note: %s\n", programName.c_str(), shortenLongRuns(message).c_str());
}

/// Arrays whose file type is not their input's: float64 data is noted where the input takes
/// f32; the rest (inputTypeProblem) are refused naming the input and both types.
bool checkFileTypes(const LoadedPlan &plan, const NamedArrays &inputs, std::string &error) {
  for (const auto &[name, array] : inputs) {
    for (const PlanBinding &input : plan.inputs) {
      const PlanBuffer &buffer = plan.buffers[input.buffer];
      if (input.name != name)
        continue;
      std::string problem = inputTypeProblem(array, buffer.dtype);
      if (problem.empty()) {
        if (array.fileType == FileType::Float64)
          note(float64Note(name));
        continue;
      }
      error = "input '" + name + "' is " + fileDTypeString(array) + shapeString(array.shape) +
              ", expected " + dtypeString(buffer.dtype) + shapeString(buffer.shape) + " (" +
              problem + ")";
      return false;
    }
  }
  return true;
}

void printUsage(bool bundled) {
  const char *name = programName.c_str();
  if (bundled)
    std::printf("usage: %s --inputs IN.npz [--outputs OUT.npz] [--device NAME] [--stats]\n"
                "   or (training programs): %s --data DATA.npz|TOKENS.bin [--tokens uint16|uint32]\n"
                "       [--steps N | --epochs E] [--shuffle] [--log LOG.jsonl]\n"
                "       [--eval-data EVAL.npz|EVAL.bin [--eval-every N]]\n"
                "       [--lr F] [--warmup-steps N] [--schedule constant|linear|cosine]\n"
                "       [--weight-decay F] [--clip-grad-norm F]\n"
                "       [--dump-grads GRADS.npz] [--save OUT.safetensors|OUT.onnx]\n"
                "       [--save-adapter DIR]\n"
                "       [--checkpoint DIR [--checkpoint-every N]] [--resume DIR] [--seed S]\n"
                "       (compiled with --world-size N: mpirun -np N %s ... [--collective-timeout S])\n",
                name, name, name);
  else
    std::printf("usage: %s --plan PLAN [--weights WEIGHTS.safetensors] --inputs IN.npz\n"
                "       [--outputs OUT.npz] [--device NAME] [--stats]\n",
                name);
  std::printf("\n"
              "  --inputs FILE    graph inputs, one array per input, named after it (.npz)\n"
              "  --outputs FILE   where to write the graph outputs (.npz)\n"
              "  --device NAME    device to run on: cpu, cuda or cuda:K (default: the one the\n"
              "                   model was compiled for)\n"
              "  --stats          time every step and print memory and time details\n"
              "  --profile [T.json]  after the run, the steps by time (calls, ms, %%, GFLOP/s,\n"
              "                   GB/s, kernel, node) and by phase; with a .json file, a Chrome\n"
              "                   trace of the first runs (chrome://tracing, Perfetto)\n"
              "  --repeat N       run N times and report the median time\n"
              "  --version        print memc's version and source revision\n");
  if (bundled)
    std::printf(
        "\ntraining programs:\n"
        "  --data FILE      the data (.npz): one array per model input and the labels, samples\n"
        "                   along axis 0; each step takes the next micro-batches, wrapping around\n"
        "  --tokens WIDTH   --data is a flat file of uint16 or uint32 token ids (nanoGPT's\n"
        "                   train.bin), memory-mapped: each sample is a window of T + 1 tokens\n"
        "                   at a place drawn from --seed, the labels its last T\n"
        "  --steps N        optimizer steps to train, counted from the start (default: 1)\n"
        "  --epochs E       instead of --steps: enough steps to pass over the data E times\n"
        "  --shuffle        each pass over the data in its own order, drawn from --seed\n"
        "  --eval-data FILE held-out samples (.npz, as --data): their loss in eval mode (no\n"
        "                   update, no dropout, BatchNorm's running statistics), logged as\n"
        "                   eval_loss every --eval-every steps and after the last; with\n"
        "                   --tokens a token file, read as consecutive windows of T + 1\n"
        "  --eval-every N   steps between evaluations (default: only after the last)\n"
        "  --log FILE       one JSON line per step: step, loss, lr, ms, peak_bytes (and\n"
        "                   grad_norm where memc computes it: --clip-grad-norm, --log-grad-norm)\n"
        "  --lr F           the peak learning rate, over the one memc compiled in\n"
        "  --warmup-steps N linear warmup from 0 over N steps (Hugging Face's: step 1 at lr 0)\n"
        "  --weight-decay F over the compiled weight decay (of the parameters that decay)\n"
        "  --clip-grad-norm F  over the compiled global-norm clip (the program must clip)\n"
        "  --schedule KIND  constant, linear or cosine decay to 0 at --steps after the warmup\n"
        "                   (transformers' get_*_schedule_with_warmup; default: the compiled one)\n"
        "  --dump-grads F   the first step's gradients, one array per trained parameter (.npz)\n"
        "  --save FILE      after training, the trained parameters and buffers as\n"
        "                   safetensors; or, when FILE ends in .onnx, the model itself\n"
        "                   with the trained weights (any ONNX consumer reads it; beyond\n"
        "                   2 GiB, the weights go to FILE.data beside it)\n"
        "  --save-adapter DIR  a program with LoRA adapters (memc --lora-rank): after training,\n"
        "                   DIR/adapter_model.safetensors and adapter_config.json, which PEFT's\n"
        "                   PeftModel.from_pretrained loads\n"
        "  --checkpoint DIR parameters, buffers and optimizer state in DIR/checkpoint.safetensors\n"
        "                   (DIR is made if missing), every --checkpoint-every steps and at the end\n"
        "  --checkpoint-every N  steps between checkpoints (default: 100)\n"
        "  --resume DIR     continue from DIR's checkpoint, exactly as an uninterrupted run\n"
        "  --seed S         seeds the dropout masks (default: 0)\n"
        "  --collective-timeout S  a data-parallel program (memc --world-size N, run under\n"
        "                   mpirun -np N) ends every rank when one waits S seconds for the\n"
        "                   others (default: 300); rank 0 logs and saves, and checkpoints\n"
        "                   (under ZeRO every rank writes its shards beside rank 0's)\n");
}

/// The counts the runner's flags accept. Steps and micro-batch indices stay far from int64's
/// limits (a step's dropout salt is seed * 1000003 + micro-batch), and a run that cannot end
/// in a lifetime is refused rather than started.
const std::map<std::string, NumberRange> kCountRanges = {
    {"--steps", {1, kMaxFlagCount, true, true, true}},
    {"--checkpoint-every", {1, kMaxFlagCount, true, true, true}},
    {"--seed", {0, kMaxFlagCount, true, true, true}},
    {"--warmup-steps", {0, kMaxFlagCount, true, true, true}},
    {"--epochs", {1, 1048576, true, true, true}},
    {"--eval-every", {1, kMaxFlagCount, true, true, true}},
    {"--repeat", {1, 1e6, true, true, true}},
    {"--collective-timeout", {1, 86400, true, true, true}},
};

/// Parses the count flag `name` by its row of kCountRanges.
bool parseCount(const std::string &name, const std::string &text, int64_t &value,
                std::string &error) {
  const NumberRange &range = kCountRanges.at(name);
  if (parseIntegerInRange(text, range, value))
    return true;
  error = rangeError(name, range, text);
  return false;
}

bool parseArguments(int argc, char **argv, Options &options, std::string &error) {
  std::map<std::string, std::optional<std::string> *> valued = {
      {"--plan", &options.plan},       {"--weights", &options.weights},
      {"--inputs", &options.inputs},   {"--outputs", &options.outputs},
      {"--data", &options.data},       {"--steps", &options.steps},
      {"--log", &options.log},         {"--dump-grads", &options.dumpGrads},
      {"--save", &options.save},       {"--save-adapter", &options.saveAdapter},
      {"--checkpoint", &options.checkpoint},
      {"--checkpoint-every", &options.checkpointEvery}, {"--resume", &options.resume},
      {"--seed", &options.seed},       {"--lr", &options.lr},
      {"--warmup-steps", &options.warmupSteps}, {"--schedule", &options.schedule},
      {"--tokens", &options.tokens},   {"--epochs", &options.epochs},
      {"--eval-data", &options.evalData}, {"--eval-every", &options.evalEvery},
      {"--weight-decay", &options.weightDecay}, {"--clip-grad-norm", &options.clipGradNorm},
      {"--collective-timeout", &options.collectiveTimeout}};
  std::optional<std::string> device, repeat;
  valued["--device"] = &device;
  valued["--repeat"] = &repeat;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i];
    if (argument == "--help" || argument == "-h") {
      options.help = true;
      continue;
    }
    if (argument == "--version") {
      options.version = true;
      continue;
    }
    if (argument == "--stats") {
      options.stats = true;
      continue;
    }
    // --profile takes an optional trace file, which names itself by its .json extension.
    if (argument == "--profile") {
      if (options.profile) {
        error = "--profile is given twice";
        return false;
      }
      options.profile = true;
      std::string_view next = i + 1 < argc ? argv[i + 1] : "";
      if (next.size() > 5 && next.substr(next.size() - 5) == ".json")
        options.profileTrace = argv[++i];
      continue;
    }
    if (argument == "--shuffle") {
      options.shuffle = true;
      continue;
    }
    std::string name = argument.substr(0, argument.find('='));
    auto found = valued.find(name);
    if (found == valued.end()) {
      error = "unknown argument '" + argument + "' (see --help)";
      return false;
    }
    std::string value;
    if (name.size() < argument.size()) {
      value = argument.substr(name.size() + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      error = name + " needs a value";
      return false;
    }
    if (value.empty() || found->second->has_value()) {
      error = name + (value.empty() ? " needs a value" : " is given twice");
      return false;
    }
    *found->second = value;
  }
  if (device)
    options.device = *device;
  if (repeat) {
    int64_t count;
    if (!parseCount("--repeat", *repeat, count, error))
      return false;
    options.repeat = static_cast<int>(count);
  }
  return true;
}

void printStats(const ExecutionStats &stats, const LoadedPlan &plan) {
  std::fprintf(stderr, "memory:\n");
  std::fprintf(stderr, "  arena planned        %llu bytes\n", (unsigned long long)stats.arenaBytes);
  std::fprintf(stderr, "  arena high-water     %llu bytes\n",
               (unsigned long long)stats.arenaHighWaterBytes);
  std::fprintf(stderr, "  arena peak live      %llu bytes\n",
               (unsigned long long)stats.peakLiveArenaBytes);
  std::fprintf(stderr, "  arena lower bound    %llu bytes (planner)\n",
               (unsigned long long)stats.arenaLowerBoundBytes);
  std::fprintf(stderr, "  persistent           %llu bytes\n",
               (unsigned long long)stats.persistentBytes);
  std::fprintf(stderr, "  constants            %llu bytes\n",
               (unsigned long long)stats.constantBytes);
  std::vector<size_t> order(stats.stepSeconds.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return stats.stepSeconds[a] > stats.stepSeconds[b]; });
  order.resize(std::min<size_t>(order.size(), 10));
  std::fprintf(stderr, "slowest steps:\n");
  for (size_t t : order)
    std::fprintf(stderr, "  step %-6zu %10.3f ms  %s %s\n", t, stats.stepSeconds[t] * 1e3,
                 plan.steps[t].kernelName.c_str(), plan.steps[t].location.c_str());
}

/// The flags of `names` that were given, as "--log, --save"; empty when none was.
std::string givenFlags(const std::vector<std::pair<const char *, bool>> &names) {
  std::string given;
  for (const auto &[name, present] : names)
    if (present)
      given += (given.empty() ? "" : ", ") + std::string(name);
  return given;
}

/// The training flags given to a program that computes outputs, or the other way round: each
/// would be ignored, so each is an error naming it.
std::string flagsThatDoNotApply(const Options &options, bool training) {
  if (training)
    return givenFlags({{"--inputs", options.inputs.has_value()},
                       {"--outputs", options.outputs.has_value()},
                       {"--repeat", options.repeat != 1},
                       {"--stats", options.stats}});
  return givenFlags({{"--data", options.data.has_value()},
                     {"--steps", options.steps.has_value()},
                     {"--log", options.log.has_value()},
                     {"--dump-grads", options.dumpGrads.has_value()},
                     {"--save", options.save.has_value()},
                     {"--save-adapter", options.saveAdapter.has_value()},
                     {"--checkpoint", options.checkpoint.has_value()},
                     {"--checkpoint-every", options.checkpointEvery.has_value()},
                     {"--resume", options.resume.has_value()},
                     {"--seed", options.seed.has_value()},
                     {"--lr", options.lr.has_value()},
                     {"--warmup-steps", options.warmupSteps.has_value()},
                     {"--schedule", options.schedule.has_value()},
                     {"--tokens", options.tokens.has_value()},
                     {"--epochs", options.epochs.has_value()},
                     {"--eval-data", options.evalData.has_value()},
                     {"--collective-timeout", options.collectiveTimeout.has_value()},
                     {"--eval-every", options.evalEvery.has_value()},
                     {"--weight-decay", options.weightDecay.has_value()},
                     {"--clip-grad-norm", options.clipGradNorm.has_value()},
                     {"--shuffle", options.shuffle}});
}

/// Refuses outputs that would replace what the run reads (the data, the program itself, the
/// checkpoint it resumes from) or one another.
bool checkOutputsApart(const Options &options, std::string &error) {
  std::vector<NamedPath> outputs, inputs = {{"the program", currentExecutablePath()}};
  auto add = [](std::vector<NamedPath> &list, const char *what,
                const std::optional<std::string> &path) {
    if (path)
      list.push_back({what, *path});
  };
  add(outputs, "--log", options.log);
  add(outputs, "--dump-grads", options.dumpGrads);
  if (options.save)
    for (const std::string &file : filesSavedTo(*options.save))
      outputs.push_back({"--save", file});
  add(outputs, "--outputs", options.outputs);
  add(outputs, "--profile", options.profileTrace);
  if (options.saveAdapter)
    for (const std::string &file : adapterFiles(*options.saveAdapter))
      outputs.push_back({"--save-adapter", file});
  if (options.checkpoint)
    outputs.push_back({"--checkpoint", checkpointPath(*options.checkpoint)});
  add(inputs, "--data", options.data);
  add(inputs, "--inputs", options.inputs);
  add(inputs, "--plan", options.plan);
  add(inputs, "--weights", options.weights);
  // Resuming in the checkpoint folder itself is how a run continues: its checkpoint is read
  // first and replaced later, as intended.
  if (options.resume &&
      !(options.checkpoint && namesSameFile(*options.resume, *options.checkpoint)))
    inputs.push_back({"--resume", checkpointPath(*options.resume)});
  return checkDistinctFiles(outputs, inputs, error);
}

/// What the runner decides before loading a plan: whether it trains (memc compiled it with
/// --loss) and the target it was compiled for, the device it runs on unless --device says
/// otherwise. Both empty for bytes that are not a plan (the loader then says why).
struct PlanHeader {
  bool training = false;
  std::string target;
};
PlanHeader readPlanHeader(std::string_view bytes) {
  memc::plan::Plan plan;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !plan.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return {};
  return {plan.has_training(), plan.target()};
}

/// --device, or the plan's target ("cpu" for a plan that names none); a rank of a data-parallel
/// GPU program runs on its host's GPU of its local rank (cuda:K).
std::string deviceName(const Options &options, const std::string &target, bool ranked = false) {
  if (options.device)
    return *options.device;
  if (target.empty())
    return "cpu";
  return ranked && target != memc::kernels::kCpuTarget
             ? target + ":" + std::to_string(launcherLocalRank())
             : target;
}

/// Trains with a training program's plan; returns the exit code.
int runTrainingProgram(const Options &options, std::string_view planBytes,
                       const SafetensorsFile &weights) {
  memc::plan::Plan plan;
  if (!plan.ParseFromArray(planBytes.data(), static_cast<int>(planBytes.size())))
    return fail("the program's plan is corrupted");
  if (!options.data)
    return fail("a training program needs --data DATA.npz (one array per model input and the "
                "labels, samples along axis 0)");
  TrainingOptions training;
  training.dataPath = *options.data;
  std::string error;
  if (options.steps && !parseCount("--steps", *options.steps, training.steps, error))
    return fail(error);
  if (options.seed && !parseCount("--seed", *options.seed, training.seed, error))
    return fail(error);
  if (options.steps && options.epochs)
    return fail("--steps and --epochs both say how long to train: give one");
  if (options.epochs) {
    int64_t epochs;
    if (!parseCount("--epochs", *options.epochs, epochs, error))
      return fail(error);
    training.epochs = epochs;
  } else if (!options.steps) {
    note("no --steps or --epochs: training runs 1 step (pass --steps N or --epochs E)");
  }
  if (options.shuffle && options.tokens)
    return fail("--shuffle orders an npz's samples; --tokens windows are drawn at random already");
  training.shuffle = options.shuffle;
  training.evalDataPath = options.evalData;
  if (options.evalEvery) {
    if (!options.evalData)
      return fail("--eval-every needs --eval-data FILE");
    if (!parseCount("--eval-every", *options.evalEvery, training.evalEvery, error))
      return fail(error);
  }
  // The ranges memc's flags of the same names take (PyTorch's).
  auto parseReal = [&](const char *flag, const std::optional<std::string> &text,
                       const NumberRange &range, std::optional<double> &value) {
    if (!text)
      return true;
    char *end = nullptr;
    double parsed = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !isInRange(parsed, range)) {
      error = rangeError(flag, range, *text);
      return false;
    }
    value = parsed;
    return true;
  };
  if (!parseReal("--lr", options.lr, {0, INFINITY, false}, training.learningRate) ||
      !parseReal("--weight-decay", options.weightDecay, {0, INFINITY}, training.weightDecay) ||
      !parseReal("--clip-grad-norm", options.clipGradNorm, {0, INFINITY, false},
                 training.clipGradNorm))
    return fail(error);
  if (options.warmupSteps) {
    int64_t warmup;
    if (!parseCount("--warmup-steps", *options.warmupSteps, warmup, error))
      return fail(error);
    training.warmupSteps = warmup;
  }
  if (options.tokens && !(training.tokens = parseTokenWidth(*options.tokens)))
    return fail("--tokens must be uint16 or uint32, not '" + *options.tokens + "'");
  if (options.schedule && !(training.schedule = parseScheduleKind(*options.schedule)))
    return fail("--schedule must be constant, linear or cosine, not '" + *options.schedule + "'");
  training.checkpointDir = options.checkpoint;
  training.resumeDir = options.resume;
  if (options.checkpointEvery) {
    if (!parseCount("--checkpoint-every", *options.checkpointEvery, training.checkpointEvery,
                    error))
      return fail(error);
    if (!options.checkpoint)
      return fail("--checkpoint-every needs --checkpoint DIR");
  } else if (options.checkpoint) {
    training.checkpointEvery = 100;
  }
  training.logPath = options.log;
  training.dumpGradientsPath = options.dumpGrads;
  training.savePath = options.save;
  training.profile = options.profile;
  training.profileTrace = options.profileTrace;
  training.saveAdapterDir = options.saveAdapter;
  training.progress = isatty(STDERR_FILENO);
  training.note = note;
  std::optional<int64_t> timeout;
  if (options.collectiveTimeout &&
      !parseCount("--collective-timeout", *options.collectiveTimeout, timeout.emplace(), error))
    return fail(error);
  std::unique_ptr<RankGroup> ranks;
  if (!joinRanks(plan.training().world_size(), timeout, ranks, error)) {
    fail(error);
    if (ranks)
      ranks->barrier(error);
    return 1;
  }
  if (ranks) {
    training.ranks = ranks.get();
    // Rank 0 speaks and writes for all, but each rank's shards under ZeRO (and every rank
    // takes part in gathering a stage 3 model for --save, which rank 0 writes).
    if (ranks->rank() != 0) {
      training.logPath.reset();
      training.dumpGradientsPath.reset();
      if (plan.training().zero_stage() == 0)
        training.checkpointDir.reset();
      training.progress = false;
      training.note = [](const std::string &) {};
    }
  }
  DeviceRegistry registry;
  registerAvailableDevices(registry);
  std::unique_ptr<Device> device =
      registry.create(deviceName(options, plan.target(), ranks != nullptr), error);
  std::unique_ptr<memc::kernels::Collectives> deviceRanks;
  const bool ready = device && (!ranks || joinDeviceRanks(*ranks, *device, deviceRanks, error));
  training.deviceCollectives = deviceRanks.get();
  if (!ready || !runTraining(plan, weights, *device, training, error)) {
    if (!ranks)
      return fail(error);
    // The others may be waiting in a collective for this rank: end them all.
    fail("rank " + std::to_string(ranks->rank()) + " of " + std::to_string(ranks->size()) +
         ": " + error);
    ranks->abortAll(1);
  }
  return 0;
}

/// Runs the program, whose plan was compiled for `target` (PlanHeader); returns the exit code.
int runProgram(const Options &options, const std::string &planOrigin, std::string_view planBytes,
               const std::string &target, const SafetensorsFile *weights) {
  std::string error;
  DeviceRegistry registry;
  registerAvailableDevices(registry);
  std::unique_ptr<Device> device = registry.create(deviceName(options, target), error);
  if (!device)
    return fail(error);
  std::unique_ptr<LoadedPlan> plan = loadPlan(planBytes, *device, error);
  if (!plan)
    return fail(planOrigin + ": " + error);
  if (!plan->parameters.empty() && !weights)
    return fail("the plan has " + std::to_string(plan->parameters.size()) +
                " parameters: pass their values with --weights");
  if (options.outputs && !prepareOutputFile(*options.outputs, error))
    return fail(error);
  NamedArrays inputs;
  if (options.inputs && !readNpz(*options.inputs, inputs, error))
    return fail(error);
  if (!checkFileTypes(*plan, inputs, error))
    return fail(error);

  if (weights && !Executor::checkParameters(*plan, *weights, error))
    return fail(error);
  ExecutorOptions executorOptions;
  executorOptions.timeSteps = options.stats;
  executorOptions.profile = options.profile;
  std::string model = plan->model;
  std::unique_ptr<Executor> executor =
      Executor::create(std::move(plan), *device, executorOptions, error);
  if (!executor)
    return fail(error);
  NamedArrays outputs;
  if (weights && !executor->loadParameters(*weights, error))
    return fail(error);
  std::vector<double> seconds;
  StepProfile profile(executor->plan());
  for (int run = 0; run < options.repeat; ++run) {
    if (!executor->bindInputs(inputs, error) || !executor->run(error))
      return fail(error);
    seconds.push_back(executor->stats().runSeconds);
    // The first run warms up (page faults, caches), unless it is the only one.
    if (options.profile && (run > 0 || options.repeat == 1))
      profile.addRun(executor->stats());
  }
  if (!executor->readOutputs(outputs, error))
    return fail(error);
  if (options.outputs && !writeNpz(*options.outputs, outputs, /*compress=*/false, error))
    return fail(error);

  std::fprintf(stderr, "%s: %s%s\n", programName.c_str(),
               model.empty() ? "" : (model + ": ").c_str(),
               formatSummary(executor->stats()).c_str());
  if (options.repeat > 1) {
    std::sort(seconds.begin(), seconds.end());
    std::fprintf(stderr, "%s: median run %.3f ms over %d runs (min %.3f ms)\n",
                 programName.c_str(), seconds[seconds.size() / 2] * 1e3, options.repeat,
                 seconds.front() * 1e3);
  }
  if (options.stats)
    printStats(executor->stats(), executor->plan());
  if (options.profile) {
    profile.print(stderr);
    if (options.profileTrace && !profile.writeTrace(*options.profileTrace, error))
      return fail(error);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 0 && argv[0][0]) {
    const char *slash = std::strrchr(argv[0], '/');
    programName = slash ? slash + 1 : argv[0];
  }
  std::set_new_handler([] { reportOutOfMemoryAndExit(programName.c_str()); });
  removeTemporariesOnSignals();
  std::string error;
  Options options;
  Bundle bundle;
  BundleStatus status = readBundle(currentExecutablePath(), bundle, error);
  if (status == BundleStatus::Invalid)
    return fail(error);
  bool bundled = status == BundleStatus::Found;
  if (!parseArguments(argc, argv, options, error))
    return fail(error);
  if (options.help) {
    printUsage(bundled);
    return 0;
  }
  if (options.version) {
    std::printf("%s (memc %s, revision %s)\n", programName.c_str(), MEMC_VERSION, MEMC_REVISION);
    // What this runner can run on: "cpu", or "cuda" for the CUDA runner.
    DeviceRegistry registry;
    registerAvailableDevices(registry);
    std::string devices;
    for (const std::string &name : registry.names())
      devices += (devices.empty() ? "" : ", ") + name;
    std::printf("devices: %s\n", devices.c_str());
    return 0;
  }

  if (!checkOutputsApart(options, error))
    return fail(error);
  SafetensorsFile weights;
  if (bundled) {
    if (options.plan || options.weights)
      return fail("this program carries its plan and weights; --plan and --weights are for the "
                  "plain memc-runner");
    if (!weights.parse(bundle.weights, error))
      return fail("the program's weights are corrupted: " + error);
    const PlanHeader header = readPlanHeader(bundle.plan);
    const bool training = header.training;
    std::string ignored = flagsThatDoNotApply(options, training);
    if (!ignored.empty())
      return fail(training ? "this program trains (--data); " + ignored +
                                 (ignored.find(',') == std::string::npos ? " is" : " are") +
                                 " for programs that compute a model's outputs"
                           : "this program computes a model's outputs (--inputs); " + ignored +
                                 (ignored.find(',') == std::string::npos ? " is" : " are") +
                                 " for training programs");
    if (training)
      return runTrainingProgram(options, bundle.plan, weights);
    return runProgram(options, "the program's plan", bundle.plan, header.target, &weights);
  }
  if (!options.plan)
    return fail("no plan: pass --plan PLAN (and --weights), or run a compiled program");
  std::unique_ptr<MappedFile> planFile = MappedFile::open(*options.plan, error);
  if (!planFile)
    return fail(error);
  if (options.weights && !weights.open(*options.weights, error))
    return fail(error);
  return runProgram(options, *options.plan, planFile->bytes(),
                    readPlanHeader(planFile->bytes()).target, options.weights ? &weights : nullptr);
}
