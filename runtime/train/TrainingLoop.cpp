//===- TrainingLoop.cpp - run a training program's steps ------------------===//
#include "runtime/train/TrainingLoop.h"
#include "kernels/Collectives.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/Files.h"
#include "runtime/io/FolderLock.h"
#include "runtime/io/Npz.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/train/Checkpoints.h"
#include "runtime/exec/StepProfile.h"
#include "runtime/train/SaveAdapter.h"
#include "runtime/train/SaveTrained.h"
#include "runtime/train/TrainingData.h"
#include "runtime/train/TrainingLog.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <numeric>
#include <type_traits>

namespace memc::runtime {
namespace {

using plan::ScalarInput;

/// The dropout salt of micro-batch `index` (0-based) under `seed`.
HostArray salt(int64_t seed, int64_t index) {
  HostArray array{DType::I64, {}, std::vector<uint8_t>(sizeof(int64_t))};
  int64_t value = seed * 1000003 + index;
  std::memcpy(array.bytes.data(), &value, sizeof(int64_t));
  return array;
}

std::string inputName(ScalarInput input) { return std::string(plan::scalarInputName(input)); }

bool hasInput(const LoadedPlan &plan, ScalarInput scalar) {
  for (const PlanBinding &input : plan.inputs)
    if (input.name == plan::scalarInputName(scalar))
      return true;
  return false;
}

HostArray scalar(float value) {
  HostArray array{DType::F32, {}, std::vector<uint8_t>(sizeof(float))};
  std::memcpy(array.bytes.data(), &value, sizeof(float));
  return array;
}

/// Runs the gradients plan (no update) on the first micro-batch with the initial weights.
bool dumpGradients(const plan::Plan &plan, const SafetensorsFile &weights, Device &device,
                   NamedArrays batch, int64_t seed, const std::string &path, std::string &error) {
  std::unique_ptr<LoadedPlan> loaded = validatePlan(plan.gradients(), device, error);
  if (!loaded) {
    error = "the gradients plan: " + error;
    return false;
  }
  if (hasInput(*loaded, ScalarInput::Salt))
    batch.emplace_back(inputName(ScalarInput::Salt), salt(seed, 0));
  if (!Executor::checkParameters(*loaded, weights, error))
    return false;
  std::unique_ptr<Executor> executor = Executor::create(std::move(loaded), device, {}, error);
  NamedArrays outputs, gradients;
  if (!executor || !executor->loadParameters(weights, error) ||
      !executor->bindInputs(batch, error) || !executor->run(error) ||
      !executor->readOutputs(outputs, error))
    return false;
  for (auto &[name, array] : outputs)
    if (name != plan.training().loss_output())
      gradients.emplace_back(name, std::move(array));
  return writeNpz(path, gradients, /*compress=*/false, error);
}

/// --weight-decay over the compiled one: every optimizer update that decays (those of the
/// no-decay group keep 0). False where none does: plain SGD decays through constants, and a
/// program compiled without weight decay has nothing to override.
bool overrideWeightDecay(LoadedPlan &plan, double decay, std::string &error) {
  int overridden = 0;
  for (PlanStep &step : plan.steps)
    if (step.attributes.floatOr("weight_decay", 0) != 0) {
      step.attributes.set("weight_decay", kernels::AttributeValue(decay));
      ++overridden;
    }
  if (overridden > 0)
    return true;
  error = "--weight-decay: no update of this program applies weight decay (compile it with "
          "memc's --weight-decay > 0, with adamw or sgd with momentum, to set it at run time)";
  return false;
}

/// The hyper-parameters a run trains with besides the learning rate, as checkpoints record them.
std::string runSettings(const Executor &executor, double clipNorm) {
  double decay = 0;
  for (const PlanStep &step : executor.plan().steps)
    decay = std::max(decay, step.attributes.floatOr("weight_decay", 0));
  char text[96];
  std::snprintf(text, sizeof(text), "weight_decay %.9g, clip_grad_norm %.9g", decay, clipNorm);
  return text;
}

/// The held-out data and the program that computes its loss (--eval-data).
struct Evaluation {
  NpzView data;
  std::unique_ptr<TokenStream> tokens;
  Dataset dataset;
  std::unique_ptr<Executor> executor;
};

/// Loads --eval-data against the program's evaluation plan; false with a message.
bool prepareEvaluation(const plan::Plan &plan, Device &device, const TrainingOptions &options,
                       Evaluation &evaluation, std::string &error) {
  if (!plan.has_evaluation()) {
    error = "--eval-data: this program has no evaluation plan (compile it again with this memc)";
    return false;
  }
  std::unique_ptr<LoadedPlan> loaded = validatePlan(plan.evaluation(), device, error);
  if (!loaded) {
    error = "the evaluation plan: " + error;
    return false;
  }
  auto note = [&](const std::string &text) { options.note("--eval-data: " + text); };
  // With --tokens the held-out data is a token file too, read window after window.
  bool prepared =
      options.tokens
          ? (evaluation.tokens =
                 TokenStream::open(*options.evalDataPath, *options.tokens, error)) &&
                prepareTiledTokenDataset(*loaded, plan.training(), *evaluation.tokens,
                                         evaluation.dataset, error)
          : mapNpz(*options.evalDataPath, evaluation.data, error) &&
                prepareDataset(*loaded, evaluation.data.arrays, evaluation.dataset, note, error);
  if (!prepared) {
    error = "--eval-data " + *options.evalDataPath + ": " + error;
    return false;
  }
  for (const auto &[name, array] : evaluation.dataset.arrays)
    if (name == plan.training().labels_input() && !checkLabels(plan.training(), array, error)) {
      error = "--eval-data: " + error;
      return false;
    }
  evaluation.executor = Executor::create(std::move(loaded), device, {}, error);
  return evaluation.executor != nullptr;
}

/// The loss over every held-out sample with the training's current weights: the mean over the
/// micro-batches that cover them once (the last wrapping around), weighted by counted labels
/// under cross_entropy as one batch of them all would be. With ranks, rank r evaluates
/// micro-batches r, r + N, ... and the ranks exchange their (loss, weight) pairs, which every
/// rank then sums in micro-batch order: the value one process computes, bit for bit.
bool evaluate(Executor &training, Evaluation &evaluation, const plan::Training &setup,
              kernels::Collectives *ranks, double &loss, std::string &error) {
  NamedArrays weights;
  if (!training.readParametersOf(evaluation.executor->plan(), weights, error) ||
      !evaluation.executor->setParameters(weights, error))
    return false;
  const Dataset &dataset = evaluation.dataset;
  const int64_t batches = (dataset.samples + dataset.batch - 1) / dataset.batch;
  const int64_t size = ranks ? ranks->size() : 1, rank = ranks ? ranks->rank() : 0;
  const int64_t perRank = (batches + size - 1) / size;
  std::vector<float> mine(2 * perRank, 0.0f); // (loss, weight) of micro-batch rank + k * size
  for (int64_t k = 0; k < perRank && rank + k * size < batches; ++k) {
    NamedArrays inputs = dataset.microBatch(rank + k * size), outputs;
    int64_t counted = countedLabels(setup, inputs);
    float batchWeight = counted >= 0 ? static_cast<float>(counted) : 1.0f;
    if (batchWeight == 0)
      continue; // every label ignored: nothing to count
    if (!evaluation.executor->bindInputs(inputs, error) || !evaluation.executor->run(error) ||
        !evaluation.executor->readOutputs(outputs, error))
      return false;
    for (const auto &[name, array] : outputs)
      if (name == setup.loss_output() && array.bytes.size() == sizeof(float)) {
        std::memcpy(&mine[2 * k], array.bytes.data(), sizeof(float));
        mine[2 * k + 1] = batchWeight;
      }
  }
  std::vector<float> all = mine;
  if (size > 1) {
    all.resize(mine.size() * size);
    if (!ranks->allGather(mine.data(), all.data(), static_cast<int64_t>(mine.size()), DType::F32,
                          nullptr, error))
      return false;
  }
  double sum = 0, weight = 0;
  for (int64_t index = 0; index < batches; ++index) {
    const float *pair = &all[2 * ((index % size) * perRank + index / size)];
    sum += static_cast<double>(pair[1]) * pair[0];
    weight += pair[1];
  }
  loss = weight > 0 ? sum / weight : std::nan("");
  return true;
}

/// Tokens per step for a language model (integer labels [batch, T]), samples otherwise.
Throughput stepThroughput(const Dataset &dataset, const plan::Training &setup, int64_t micro) {
  if (dataset.tokens)
    return {dataset.batch * dataset.sequence * micro, "tokens"};
  for (const auto &[name, array] : dataset.arrays)
    if (name == setup.labels_input() && setup.classes() > 0 && array.shape.size() == 2)
      return {dataset.batch * array.shape[1] * micro, "tokens"};
  return {dataset.batch * micro, "samples"};
}

/// The sum over the ranks of one host value (itself for one process).
template <typename T>
bool sumOverRanks(kernels::Collectives *ranks, T &value, std::string &error) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, int64_t>);
  return !ranks || ranks->allReduce(&value, 1,
                                    std::is_same_v<T, float> ? DType::F32 : DType::I64,
                                    kernels::ReduceOp::Sum, nullptr, error);
}

/// Whose state this process's checkpoints hold: its own shards under ZeRO, else everyone's.
CheckpointShard checkpointShard(kernels::Collectives *ranks, const plan::Training &setup) {
  if (!ranks || setup.zero_stage() == 0)
    return {};
  return {ranks->rank(), ranks->size()};
}

/// Whether every rank is `ready` (a barrier that also tells each rank whether the others got
/// there); false with a message on the ranks that were, naming `what` the others failed at.
bool everyRankReady(kernels::Collectives *ranks, bool ready, const std::string &what,
                    std::string &error) {
  int64_t count = ready ? 1 : 0;
  if (!sumOverRanks(ranks, count, error))
    return false;
  if (count == ranks->size())
    return true;
  if (ready)
    error = "another rank failed at " + what;
  return false;
}

/// Under ZeRO each rank resumed from its own file: they must be of one step (a run that ended
/// between the ranks' writes leaves them apart).
bool ranksResumeAlike(kernels::Collectives *ranks, CheckpointShard shard, const std::string &dir,
                      int64_t saved, std::string &error) {
  if (shard.ranks == 1)
    return true;
  int64_t latest = saved, negatedEarliest = -saved;
  if (!ranks->allReduce(&latest, 1, DType::I64, kernels::ReduceOp::Max, nullptr, error) ||
      !ranks->allReduce(&negatedEarliest, 1, DType::I64, kernels::ReduceOp::Max, nullptr, error))
    return false;
  if (latest == -negatedEarliest)
    return true;
  error = "--resume " + dir + ": the ranks' checkpoint files are of steps " +
          std::to_string(-negatedEarliest) + " to " + std::to_string(latest) +
          " (the run ended between their writes): every rank must resume from the same step";
  return false;
}

/// What a step's runs have given so far, until its last is collected.
struct StepTally {
  int64_t step = 0;
  double learningRate = 0;
  /// Each micro-batch's weight in the step's loss.
  std::vector<double> weights;
  int64_t collected = 0;
  double lossSum = 0;
  /// --precision fp16: the scale the step used and whether it skipped its update, as the
  /// micro-batch that applies reports them.
  float lossScale = 0, skipped = 0;
  std::optional<float> gradNorm;
};

/// Whether --eval-data evaluates after `step` (every --eval-every steps and after the last).
bool evaluatesAfter(const TrainingOptions &options, int64_t step) {
  return options.evalDataPath &&
         ((options.evalEvery > 0 && step % options.evalEvery == 0) || step == options.steps);
}

/// Whether --checkpoint writes after `step` (every --checkpoint-every steps and after the last).
bool checkpointsAfter(const TrainingOptions &options, int64_t step) {
  return options.checkpointDir && options.checkpointEvery > 0 &&
         (step % options.checkpointEvery == 0 || step == options.steps);
}

} // namespace

LearningRateSchedule runSchedule(const plan::Training &training, const TrainingOptions &options) {
  LearningRateSchedule schedule = LearningRateSchedule::ofPlan(training);
  if (options.learningRate)
    schedule.peak = *options.learningRate;
  if (options.warmupSteps)
    schedule.warmup = *options.warmupSteps;
  if (options.schedule) {
    schedule.kind = *options.schedule;
    schedule.total = options.steps;
  }
  return schedule;
}

bool runTraining(const plan::Plan &plan, const SafetensorsFile &weights, Device &device,
                 const TrainingOptions &given, std::string &error) {
  TrainingOptions options = given; // its steps resolved from --epochs below
  std::unique_ptr<LoadedPlan> loaded = validatePlan(plan, device, error);
  if (!loaded)
    return false;
  NpzView data; // read in place: stored entries stay in the file, paged in as used
  Dataset dataset;
  std::unique_ptr<TokenStream> tokens;
  if (options.tokens) {
    if (!(tokens = TokenStream::open(options.dataPath, *options.tokens, error)) ||
        !prepareTokenDataset(*loaded, plan.training(), *tokens,
                             static_cast<uint64_t>(options.seed), dataset, error))
      return false;
  } else if (!mapNpz(options.dataPath, data, error) ||
             !prepareDataset(*loaded, data.arrays, dataset, options.note, error)) {
    return false;
  } else {
    dataset.shuffle = options.shuffle;
    dataset.seed = static_cast<uint64_t>(options.seed);
  }
  const int64_t micro = std::max<int64_t>(1, plan.training().accumulation_steps());
  const int64_t ranks = options.ranks ? options.ranks->size() : 1;
  const int64_t rank = options.ranks ? options.ranks->rank() : 0;
  if (options.epochs) {
    // Enough optimizer steps to see every sample `epochs` times; the last may run into the
    // next pass.
    const int64_t perStep = dataset.batch * micro * ranks;
    options.steps = static_cast<int64_t>(
        (static_cast<unsigned __int128>(*options.epochs) * static_cast<uint64_t>(dataset.samples) +
         static_cast<uint64_t>(perStep) - 1) /
        static_cast<uint64_t>(perStep));
    options.note("--epochs " + std::to_string(*options.epochs) + ": " +
                 std::to_string(options.steps) + " steps of " + std::to_string(perStep) +
                 " samples over " + std::to_string(dataset.samples));
  }
  for (const auto &[name, array] : dataset.arrays)
    if (name == plan.training().labels_input() && !checkLabels(plan.training(), array, error))
      return false;
  // Rank 0 writes --save; the others only take part in a ZeRO stage 3 gather for it.
  if (options.savePath && rank == 0 &&
      !checkSavePath(plan.training(), *loaded, *options.savePath, error))
    return false;
  if (options.saveAdapterDir && rank == 0 &&
      !checkSaveAdapter(plan.training(), *options.saveAdapterDir, error))
    return false;
  // --dump-grads runs the first micro-batch before the loop would check it.
  if (options.dumpGradientsPath) {
    error = allIgnored(plan.training(), countedLabels(plan.training(), dataset.microBatch(0)), 1, 1,
                       false);
    if (!error.empty())
      return false;
  }
  if (options.dumpGradientsPath && !dumpGradients(plan, weights, device, dataset.microBatch(0),
                                                  options.seed, *options.dumpGradientsPath, error))
    return false;
  Evaluation evaluation;
  if (options.evalDataPath && !prepareEvaluation(plan, device, options, evaluation, error))
    return false;

  if (!Executor::checkParameters(*loaded, weights, error))
    return false;
  const bool compiledClipping = hasInput(*loaded, ScalarInput::ClipNorm);
  if (options.clipGradNorm && !compiledClipping) {
    error = "--clip-grad-norm: this program does not clip (compile it with memc's "
            "--clip-grad-norm to set the norm at run time)";
    return false;
  }
  if (options.weightDecay && !overrideWeightDecay(*loaded, *options.weightDecay, error))
    return false;
  ExecutorOptions executorOptions;
  executorOptions.collectives = options.ranks;
  executorOptions.deviceCollectives = options.deviceCollectives;
  executorOptions.profile = options.profile;
  std::unique_ptr<Executor> executor =
      Executor::create(std::move(loaded), device, executorOptions, error);
  if (!executor || !executor->loadParameters(weights, error))
    return false;
  StepProfile profile(executor->plan());
  int64_t firstStep = 1;
  // The data's CRC only where a checkpoint records or compares it.
  const LearningRateSchedule schedule = runSchedule(plan.training(), options);
  RunIdentity run;
  run.seed = options.seed;
  run.data = options.checkpointDir || options.resumeDir ? dataFingerprint(dataset) : std::string();
  run.schedule = schedule;
  run.clipNorm = options.clipGradNorm.value_or(plan.training().clip_grad_norm());
  run.settings = runSettings(*executor, run.clipNorm);
  const CheckpointShard shard = checkpointShard(options.ranks, plan.training());
  if (options.resumeDir) {
    int64_t saved = resumeFrom(*executor, plan, *options.resumeDir, shard, options.steps, run,
                               options.note, error);
    if (saved < 0 || !ranksResumeAlike(options.ranks, shard, *options.resumeDir, saved, error))
      return false;
    firstStep = saved + 1;
  }
  // The folder is this run's until it ends: only then are stale temporaries in it swept. Rank 0
  // makes and locks it; under ZeRO the other ranks write their files into it once it has.
  std::unique_ptr<FolderLock> checkpointLock;
  if (options.checkpointDir) {
    bool ready = shard.rank != 0 ||
                 (checkpointLock = FolderLock::acquire(*options.checkpointDir, "--checkpoint",
                                                      error)) != nullptr;
    if ((shard.ranks > 1 && !everyRankReady(options.ranks, ready, "--checkpoint", error)) ||
        !ready || !prepareOutputFile(checkpointPath(*options.checkpointDir, shard), error))
      return false;
  }
  std::unique_ptr<TrainingLog> log;
  if (options.logPath && !(log = TrainingLog::create(*options.logPath, error)))
    return false;
  bool needsStep = hasInput(executor->plan(), ScalarInput::StepNumber);
  bool needsSalt = hasInput(executor->plan(), ScalarInput::Salt);
  bool needsRefresh = hasInput(executor->plan(), ScalarInput::Refresh);
  bool weighsTokens = hasInput(executor->plan(), ScalarInput::LossWeight);
  bool clips = hasInput(executor->plan(), ScalarInput::ClipNorm);
  const std::string &lossName = plan.training().loss_output();
  bool scalesLoss = plan.training().has_loss_scaling();
  // A step is one optimizer step: `micro` micro-batches, the last of which applies the update.
  // Micro-batch indices are int64: a resumed step near 2^63 must not wrap around.
  if (options.steps > INT64_MAX / (micro * ranks)) {
    error = "--steps " + std::to_string(options.steps) + " with " + std::to_string(micro * ranks) +
            " micro-batches per step counts past 2^63 micro-batches";
    return false;
  }
  const Throughput rate = stepThroughput(dataset, plan.training(), micro * ranks);
  double elapsedMs = 0;
  // The runs are pipelined (Executor::submit): the next micro-batch is prepared and submitted
  // while the device computes the current one, and a step's loss is read when its last run is
  // collected, one run later. What reads the weights a step leaves (evaluation, a checkpoint,
  // the end) first collects every run, so that nothing of the next step has run.
  std::deque<StepTally> open;
  auto lastFinish = std::chrono::steady_clock::now();
  auto finishStep = [&](const StepTally &tally) {
    const int64_t step = tally.step;
    // The mean loss over the ranks' micro-batches, as one process accumulating them all logs.
    float rankLoss = static_cast<float>(tally.lossSum);
    if (!sumOverRanks(options.ranks, rankLoss, error))
      return false;
    StepRecord record;
    record.step = step;
    record.loss = static_cast<float>(double(rankLoss) / double(micro * ranks));
    record.learningRate = tally.learningRate;
    record.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - lastFinish)
            .count();
    const ExecutionStats &stats = executor->stats();
    record.peakBytes = stats.arenaHighWaterBytes + stats.persistentBytes + stats.constantBytes;
    record.scalesLoss = scalesLoss;
    record.lossScale = tally.lossScale;
    record.skipped = tally.skipped != 0;
    record.gradNorm = tally.gradNorm;
    if (!dataset.tokens)
      record.epoch = static_cast<double>(step) *
                     static_cast<double>(dataset.batch * micro * ranks) /
                     static_cast<double>(dataset.samples);
    elapsedMs += record.milliseconds;
    if (evaluatesAfter(options, step)) {
      double evalLoss;
      if (!evaluate(*executor, evaluation, plan.training(), options.ranks, evalLoss, error))
        return false;
      record.evalLoss = evalLoss;
    }
    if (log && !log->write(record, error))
      return false;
    printStep(record, options.progress, options.steps, rate,
              elapsedMs / static_cast<double>(step - firstStep + 1));
    if (!std::isfinite(record.loss)) {
      error = "the loss is " + std::string(std::isnan(record.loss) ? "NaN" : "infinite") +
              " at step " + std::to_string(step) + "; training stopped" +
              (options.checkpointDir ? " (the last checkpoint is the last good state)" : "");
      return false;
    }
    if (checkpointsAfter(options, step) &&
        !writeCheckpoint(*executor, plan, *options.checkpointDir, shard, step, run, error))
      return false;
    lastFinish = std::chrono::steady_clock::now();
    return true;
  };
  // Waits for the oldest run and adds its outputs to its step, which it may finish.
  auto collectOne = [&] {
    NamedArrays outputs;
    if (!executor->collect(outputs, error))
      return false;
    StepTally &tally = open.front();
    const double weight = tally.weights[tally.collected++];
    // The first step warms up (page faults, caches), unless it is the only one.
    if (options.profile && (tally.step > firstStep || options.steps == firstStep))
      profile.addRun(executor->stats());
    for (const auto &[name, array] : outputs) {
      float value;
      if (array.bytes.size() != sizeof(float))
        continue;
      std::memcpy(&value, array.bytes.data(), sizeof(float));
      if (name == lossName)
        tally.lossSum += weight * value;
      else if (name == plan::kLossScaleOutput)
        tally.lossScale = value;
      else if (name == plan::kSkippedOutput)
        tally.skipped = value;
      else if (name == plan::kGradNormOutput)
        tally.gradNorm = value;
    }
    if (tally.collected < micro)
      return true;
    StepTally done = std::move(tally);
    open.pop_front();
    return finishStep(done);
  };
  auto collectAll = [&] {
    while (executor->runsInFlight() > 0)
      if (!collectOne())
        return false;
    return true;
  };
  // A problem found in the data of a step whose predecessors are still in flight: they are
  // finished (logged, and stopped by a non-finite loss) first.
  auto failAfterRunsInFlight = [&] {
    std::string found = std::move(error);
    if (collectAll())
      error = std::move(found);
    return false;
  };
  for (int64_t step = firstStep; step <= options.steps; ++step) {
    std::vector<NamedArrays> batches;
    std::vector<int64_t> counted;
    for (int64_t k = 0; k < micro; ++k) {
      int64_t index = ((step - 1) * ranks + rank) * micro + k;
      batches.push_back(dataset.microBatch(index));
      // A stream's labels are checked as they are drawn (an npz's all before the first step).
      if (dataset.tokens && !checkLabels(plan.training(), batches.back().back().second, error))
        return failAfterRunsInFlight();
      counted.push_back(countedLabels(plan.training(), batches.back()));
      error = allIgnored(plan.training(), counted.back(), step, index + 1,
                         options.checkpointDir.has_value());
      if (!error.empty())
        return failAfterRunsInFlight();
    }
    // Token weighting implies cross_entropy labels: every count is one (none is -1). The
    // counts are every rank's, so each micro-batch weighs as in one batch of them all.
    int64_t totalCounted = std::accumulate(counted.begin(), counted.end(), int64_t{0});
    if (weighsTokens && !sumOverRanks(options.ranks, totalCounted, error))
      return false;
    StepTally &tally = open.emplace_back();
    tally.step = step;
    tally.learningRate = schedule.at(step);
    tally.weights = weighsTokens
                        ? lossWeights(counted, micro * ranks, static_cast<double>(totalCounted))
                        : std::vector<double>(micro, 1.0);
    for (int64_t k = 0; k < micro; ++k) {
      int64_t index = ((step - 1) * ranks + rank) * micro + k;
      NamedArrays &inputs = batches[k];
      if (weighsTokens)
        inputs.emplace_back(inputName(ScalarInput::LossWeight),
                            scalar(static_cast<float>(tally.weights[k])));
      if (clips)
        inputs.emplace_back(inputName(ScalarInput::ClipNorm),
                            scalar(static_cast<float>(run.clipNorm)));
      if (needsSalt)
        inputs.emplace_back(inputName(ScalarInput::Salt), salt(options.seed, index));
      inputs.emplace_back(inputName(ScalarInput::LearningRate),
                          scalar(static_cast<float>(tally.learningRate)));
      if (needsStep)
        inputs.emplace_back(inputName(ScalarInput::StepNumber), scalar(static_cast<float>(step)));
      if (micro > 1)
        inputs.emplace_back(inputName(ScalarInput::Apply), scalar(k == micro - 1 ? 1.0f : 0.0f));
      if (needsRefresh)
        inputs.emplace_back(inputName(ScalarInput::Refresh), scalar(k == 0 ? 1.0f : 0.0f));
      if (executor->runsInFlight() == executor->pipelineDepth() && !collectOne())
        return false;
      if (!executor->submit(inputs, error))
        return false;
    }
    // With ranks every step ends here too: finishing it takes a collective (the loss), which
    // must come before the next step's on every rank, and only rank 0 writes checkpoints.
    if ((step == options.steps || ranks > 1 || evaluatesAfter(options, step) ||
         checkpointsAfter(options, step)) &&
        !collectAll())
      return false;
  }
  if (options.progress)
    std::fprintf(stderr, "\n");
  if (options.profile && rank == 0) {
    profile.print(stderr);
    if (options.profileTrace && !profile.writeTrace(*options.profileTrace, error))
      return false;
  }
  if (log && !log->close(error))
    return false;
  if (!options.savePath && !options.saveAdapterDir)
    return true;
  // Rank 0 writes the model; under ZeRO stage 3 the others give it their shards.
  if (rank != 0) {
    NamedArrays gathered;
    return plan.training().zero_stage() < 3 || executor->readWholeParameters(gathered, error);
  }
  NamedArrays parameters;
  if (!executor->readWholeParameters(parameters, error) ||
      (options.savePath && !saveParameters(parameters, executor->plan(), plan.training(),
                                           *options.savePath, options.note, error)))
    return false;
  return !options.saveAdapterDir ||
         saveAdapter(parameters, plan.training(), *options.saveAdapterDir, error);
}

} // namespace memc::runtime
