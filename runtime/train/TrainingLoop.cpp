//===- TrainingLoop.cpp - run a training program's steps ------------------===//
#include "runtime/train/TrainingLoop.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/CheckpointIntegrity.h"
#include "runtime/io/Files.h"
#include "runtime/io/Npy.h"
#include "runtime/io/Npz.h"
#include "runtime/io/OnnxWriter.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/FloatConversion.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

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

/// The data the loop feeds: one array per data input, samples along axis 0.
struct Dataset {
  std::vector<std::pair<std::string, const HostArray *>> arrays;
  int64_t samples = 0;
  int64_t batch = 0;

  /// Micro-batch `index` (0-based): `batch` samples from index * batch, wrapping around. The
  /// product is taken in 128 bits: a resumed step near 2^63 must not wrap to a negative sample.
  NamedArrays microBatch(int64_t index) const {
    NamedArrays batchArrays;
    for (const auto &[name, array] : arrays) {
      size_t row = array->bytes.size() / samples;
      HostArray slice{array->dtype, array->shape, std::vector<uint8_t>(row * batch)};
      slice.shape[0] = batch;
      for (int64_t i = 0; i < batch; ++i) {
        auto sample = static_cast<int64_t>(
            (static_cast<unsigned __int128>(index) * static_cast<uint64_t>(batch) +
             static_cast<uint64_t>(i)) %
            static_cast<uint64_t>(samples));
        std::memcpy(slice.bytes.data() + i * row, array->bytes.data() + sample * row, row);
      }
      batchArrays.emplace_back(name, std::move(slice));
    }
    return batchArrays;
  }
};

/// cross_entropy labels must be classes or the ignored index: checked for the whole data set
/// before the first step, naming the first bad sample.
bool checkLabels(const plan::Training &training, const HostArray &labels, std::string &error) {
  if (training.classes() <= 0 || (labels.dtype != DType::I64 && labels.dtype != DType::I32))
    return true;
  size_t count = labels.bytes.size() / elementSize(labels.dtype);
  for (size_t i = 0; i < count; ++i) {
    int64_t label = labels.dtype == DType::I64 ? labels.as<int64_t>()[i] : labels.as<int32_t>()[i];
    if (label != training.ignore_index() && (label < 0 || label >= training.classes())) {
      error = "label " + std::to_string(label) + " at flat index " + std::to_string(i) +
              " of '" + training.labels_input() + "' is outside [0, " +
              std::to_string(training.classes()) + ") and is not the ignored index " +
              std::to_string(training.ignore_index());
      return false;
    }
  }
  return true;
}

/// cross_entropy over a batch whose labels are all the ignored index has no value (PyTorch's is
/// NaN): the message that stops training at `step`, or empty.
std::string allIgnored(const plan::Training &training, const NamedArrays &batch, int64_t step,
                       int64_t microBatch, bool checkpoints) {
  if (training.classes() <= 0)
    return "";
  for (const auto &[name, labels] : batch) {
    if (name != training.labels_input() ||
        (labels.dtype != DType::I64 && labels.dtype != DType::I32))
      continue;
    size_t count = labels.bytes.size() / elementSize(labels.dtype);
    for (size_t i = 0; i < count; ++i) {
      int64_t label =
          labels.dtype == DType::I64 ? labels.as<int64_t>()[i] : labels.as<int32_t>()[i];
      if (label != training.ignore_index())
        return "";
    }
    return "every label of step " + std::to_string(step) + "'s batch (micro-batch " +
           std::to_string(microBatch) + ") is the ignored index " +
           std::to_string(training.ignore_index()) +
           ": its loss is undefined (PyTorch's is NaN); training stopped" +
           (checkpoints ? " (the last checkpoint is the last good state)" : "");
  }
  return "";
}

bool prepareDataset(const LoadedPlan &plan, const NamedArrays &data, Dataset &dataset,
                    const TrainingOptions &options, std::string &error) {
  std::map<std::string, const HostArray *> byName;
  for (const auto &[name, array] : data)
    byName[name] = &array;
  std::vector<std::string> problems;
  for (const PlanBinding &input : plan.inputs) {
    if (plan::isScalarInput(input.name))
      continue;
    const PlanBuffer &buffer = plan.buffers[input.buffer];
    auto it = byName.find(input.name);
    std::string expected = std::string(dtypeString(buffer.dtype)) + "[N" +
                           (buffer.shape.size() > 1 ? "," : "") +
                           shapeString({buffer.shape.begin() + std::min<size_t>(1, buffer.shape.size()),
                                        buffer.shape.end()}).substr(1);
    if (it == byName.end()) {
      problems.push_back("'" + input.name + "' is missing (expected " + expected + ")");
      continue;
    }
    const HostArray &array = *it->second;
    std::string problem = inputTypeProblem(array, buffer.dtype);
    bool fits = problem.empty() && !buffer.shape.empty() && array.dtype == buffer.dtype &&
                array.shape.size() == buffer.shape.size() && !array.shape.empty() &&
                array.shape[0] > 0 &&
                std::equal(array.shape.begin() + 1, array.shape.end(), buffer.shape.begin() + 1);
    if (!fits) {
      problems.push_back("'" + input.name + "' is " + fileDTypeString(array) +
                         shapeString(array.shape) + ", expected " + expected +
                         (problem.empty() ? "" : " (" + problem + ")"));
      continue;
    }
    if (array.fileType == FileType::Float64)
      options.note(float64Note(input.name));
    if (dataset.samples != 0 && array.shape[0] != dataset.samples) {
      problems.push_back("'" + input.name + "' has " + std::to_string(array.shape[0]) +
                         " samples, the other arrays " + std::to_string(dataset.samples));
      continue;
    }
    dataset.samples = array.shape[0];
    dataset.batch = buffer.shape[0];
    dataset.arrays.emplace_back(input.name, &array);
  }
  if (problems.empty() && dataset.samples < dataset.batch) {
    error = "the data has " + std::to_string(dataset.samples) +
            " samples, fewer than one micro-batch of the program (" +
            std::to_string(dataset.batch) + " samples, axis 0 of its inputs)";
    return false;
  }
  if (problems.empty())
    return true;
  error = "the data does not fit the program's inputs:";
  for (const std::string &problem : problems)
    error += "\n  " + problem;
  return false;
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

constexpr const char *kCheckpointFile = "/checkpoint.safetensors";

/// What identifies the program a checkpoint continues: the training settings (loss, optimizer,
/// schedule, labels, accumulation), every persistent binding (name, kind, type: the model's
/// parameters and buffers, which of them train, the optimizer's state) and the set of distinct
/// steps (kernel and attributes: the model's computation, the optimizer's hyperparameters). Not
/// their order or count, which budgets and remat change (remat repeats steps): a checkpoint
/// resumes under another --vram-budget.
std::string programFingerprint(const plan::Plan &plan) {
  plan::Training training = plan.training();
  training.clear_onnx_template();
  training.clear_onnx_initializers();
  std::string text = training.SerializeAsString();
  for (const plan::Binding &binding : plan.parameters()) {
    const plan::Buffer &buffer = plan.buffers(static_cast<int>(binding.buffer()));
    text += "\n" + binding.name() + " " + std::to_string(binding.kind()) + " " +
            std::to_string(buffer.dtype());
    for (int64_t dim : buffer.shape())
      text += " " + std::to_string(dim);
  }
  std::set<std::string> updates; // remat clones repeat steps; each counts once
  for (const plan::Step &step : plan.steps()) {
    plan::Step attributes;
    attributes.set_kernel(step.kernel());
    *attributes.mutable_attributes() = step.attributes();
    updates.insert(attributes.SerializeAsString());
  }
  for (const std::string &update : updates)
    text += "\n" + update;
  uint64_t hash = 14695981039346656037ull; // FNV-1a
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

bool writeCheckpoint(Executor &executor, const plan::Plan &plan, const std::string &dir,
                     int64_t step, std::string &error) {
  NamedArrays state;
  if (!executor.readParameters(state, error))
    return false;
  std::vector<TensorRef> tensors;
  for (const auto &[name, array] : state)
    tensors.push_back(tensorRef(name, array));
  CheckpointMetadata fields{step, programFingerprint(plan), plan.model(),
                            plan.training().optimizer()};
  return writeSafetensors(dir + kCheckpointFile, tensors, checkpointMetadata(fields, tensors),
                          error);
}

/// Why a checkpoint written by another program does not continue this one; empty if it does.
std::string checkpointMismatch(const CheckpointMetadata &saved, const plan::Plan &plan) {
  if (saved.program == programFingerprint(plan))
    return "";
  std::string what;
  if (saved.model != plan.model())
    what = "of model '" + saved.model + "', this program trains '" + plan.model() + "'";
  else if (saved.optimizer != plan.training().optimizer())
    what =
        "with " + saved.optimizer + ", this program trains with " + plan.training().optimizer();
  else
    what = "with other training flags or ops (learning rate, schedule, loss, frozen "
           "parameters, optimizer settings, or the model's computation)";
  return "the checkpoint was written by another program, training " + what +
         "; resume it with the program that wrote it, or start without --resume";
}

/// Restores a checkpoint; returns the step it was taken after, or -1 with a message.
int64_t resumeFrom(Executor &executor, const plan::Plan &plan, const std::string &dir,
                   const TrainingOptions &options, std::string &error) {
  SafetensorsFile checkpoint;
  if (!checkpoint.open(dir + kCheckpointFile, error))
    return -1;
  CheckpointMetadata fields;
  if (!readCheckpointMetadata(checkpoint, fields, error)) {
    error = "--resume " + dir + ": " + dir + kCheckpointFile + ": " + error;
    return -1;
  }
  std::string mismatch = checkpointMismatch(fields, plan);
  if (!mismatch.empty()) {
    error = "--resume " + dir + ": " + mismatch;
    return -1;
  }
  int64_t saved = fields.step;
  if (saved >= options.steps) {
    error = "--resume " + dir + ": the checkpoint is at step " + std::to_string(saved) +
            ", and --steps is " + std::to_string(options.steps) +
            ": nothing is left to train (--steps counts from the start; pass more than " +
            std::to_string(saved) + ")";
    return -1;
  }
  if (!executor.restoreParameters(checkpoint, error))
    return -1;
  return saved;
}

bool hasExtension(const std::string &path, std::string_view extension) {
  return path.size() > extension.size() &&
         path.compare(path.size() - extension.size(), extension.size(), extension) == 0;
}

bool isOnnxPath(const std::string &path) { return hasExtension(path, ".onnx"); }

/// The initializers of the plan's ONNX template, each checked against the parameter or buffer
/// binding of its name; their bytes are views of `values` (readParameters' arrays, in binding
/// order) when given. A 16-bit model's f32 master weights (MasterWeights.h) are narrowed in
/// `values` to the initializer's type, so the saved model keeps its own types.
bool onnxInitializers(const plan::Training &training, const LoadedPlan &plan,
                      NamedArrays *values, std::vector<OnnxTensor> &tensors,
                      std::string &error) {
  if (training.onnx_template().empty()) {
    error = "this program cannot save ONNX models: memc compiled it without the model's "
            "template (before saving ONNX was supported); --save a .safetensors file, or "
            "compile the program again";
    return false;
  }
  std::map<std::string_view, size_t> bindingOf;
  for (size_t i = 0; i < plan.parameters.size(); ++i)
    if (plan::bindingKindInfo(plan.parameters[i].kind).modelWeight)
      bindingOf[plan.parameters[i].name] = i;
  for (const plan::OnnxInitializer &initializer : training.onnx_initializers()) {
    auto found = bindingOf.find(initializer.name());
    if (found == bindingOf.end()) {
      error = "the plan's ONNX initializer '" + initializer.name() +
              "' is not a parameter or buffer of the plan";
      return false;
    }
    const PlanBuffer &buffer = plan.buffers[plan.parameters[found->second].buffer];
    OnnxTensor tensor{initializer.name(), initializer.data_type(),
                      {initializer.dims().begin(), initializer.dims().end()}, {}};
    DType declared = buffer.dtype;
    bool narrowed = dtypeFromOnnx(tensor.dataType, declared) && declared != buffer.dtype &&
                    convertibleFloats(buffer.dtype, declared);
    if ((!narrowed && tensor.dataType != onnxDataType(buffer.dtype)) ||
        tensor.dims != buffer.shape) {
      error = "the plan's ONNX initializer '" + initializer.name() + "' (data type " +
              std::to_string(tensor.dataType) + ", dims " + shapeString(tensor.dims) +
              ") does not match its parameter, " + dtypeString(buffer.dtype) +
              shapeString(buffer.shape);
      return false;
    }
    if (values) {
      HostArray &value = (*values)[found->second].second;
      if (narrowed && value.dtype != declared) {
        value.bytes = convertFloats(value.dtype, value.bytes.data(),
                                    value.bytes.size() / elementSize(value.dtype), declared);
        value.dtype = declared;
      }
      tensor.bytes = {reinterpret_cast<const char *>(value.bytes.data()), value.bytes.size()};
    }
    tensors.push_back(std::move(tensor));
  }
  return true;
}

/// Before the first step: the save path can be written, and an ONNX save has what it needs.
bool checkSavePath(const plan::Training &training, const LoadedPlan &plan,
                   const std::string &path, std::string &error) {
  if (!prepareOutputFile(path, error))
    return false;
  if (!isOnnxPath(path) && !hasExtension(path, ".safetensors")) {
    error = "--save " + path +
            ": the extension says neither format: name an ONNX model "
            "(.onnx) or a safetensors file (.safetensors)";
    return false;
  }
  std::vector<OnnxTensor> unused;
  if (isOnnxPath(path) && !onnxInitializers(training, plan, nullptr, unused, error)) {
    error = "--save " + path + ": " + error;
    return false;
  }
  return true;
}

/// The trained parameters and buffers: the ONNX model for a .onnx path, safetensors otherwise.
/// How many model weights are 16-bit in the model but held in f32 by the plan (master weights).
size_t masterWeightCount(const plan::Training &training, const LoadedPlan &plan) {
  std::map<std::string_view, DType> held;
  for (const PlanBinding &binding : plan.parameters)
    held[binding.name] = plan.buffers[binding.buffer].dtype;
  size_t count = 0;
  for (const plan::OnnxInitializer &initializer : training.onnx_initializers()) {
    DType declared;
    auto found = held.find(initializer.name());
    count += found != held.end() && dtypeFromOnnx(initializer.data_type(), declared) &&
             declared != found->second;
  }
  return count;
}

bool saveParameters(Executor &executor, const plan::Training &training, const std::string &path,
                    const TrainingOptions &options, std::string &error) {
  NamedArrays parameters;
  if (!executor.readParameters(parameters, error))
    return false;
  if (isOnnxPath(path)) {
    std::vector<OnnxTensor> tensors;
    return onnxInitializers(training, executor.plan(), &parameters, tensors, error) &&
           writeOnnxModel(path, training.onnx_template(), tensors, {}, error);
  }
  if (size_t count = masterWeightCount(training, executor.plan()))
    options.note("--save " + path + ": " + std::to_string(count) +
                 " parameters are 16-bit in the model; they are saved as the f32 master weights "
                 "the optimizer updated (load_state_dict converts them to the model's type; "
                 "--save OUT.onnx keeps the model's types)");
  std::vector<TensorRef> tensors;
  for (size_t i = 0; i < parameters.size(); ++i)
    if (plan::bindingKindInfo(executor.plan().parameters[i].kind).modelWeight) {
      tensors.push_back(tensorRef(parameters[i].first, parameters[i].second));
      for (const plan::SavedAlias &alias : training.saved_aliases())
        if (alias.name() == parameters[i].first)
          tensors.push_back(tensorRef(alias.alias(), parameters[i].second));
    }
  return writeSafetensors(path, tensors, {{"format", "pt"}, {"producer", "memc"}}, error);
}

} // namespace

double learningRateAt(const plan::Training &training, int64_t step) {
  double lr = training.learning_rate();
  int64_t warmup = training.warmup_steps();
  if (warmup > 0 && step <= warmup)
    return lr * static_cast<double>(step) / static_cast<double>(warmup);
  int64_t decay = training.decay_steps();
  if (decay <= 0)
    return lr;
  double progress = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(decay));
  return lr * 0.5 * (1.0 + std::cos(M_PI * progress));
}

bool runTraining(const plan::Plan &plan, const SafetensorsFile &weights, Device &device,
                 const TrainingOptions &options, std::string &error) {
  std::unique_ptr<LoadedPlan> loaded = validatePlan(plan, device, error);
  if (!loaded)
    return false;
  NamedArrays data;
  if (!readNpz(options.dataPath, data, error))
    return false;
  Dataset dataset;
  if (!prepareDataset(*loaded, data, dataset, options, error))
    return false;
  for (const auto &[name, array] : dataset.arrays)
    if (name == plan.training().labels_input() && !checkLabels(plan.training(), *array, error))
      return false;
  if (options.savePath && !checkSavePath(plan.training(), *loaded, *options.savePath, error))
    return false;
  // --dump-grads runs the first micro-batch before the loop would check it.
  if (options.dumpGradientsPath) {
    error = allIgnored(plan.training(), dataset.microBatch(0), 1, 1, false);
    if (!error.empty())
      return false;
  }
  if (options.dumpGradientsPath &&
      !dumpGradients(plan, weights, device, dataset.microBatch(0), options.seed,
                     *options.dumpGradientsPath, error))
    return false;

  if (!Executor::checkParameters(*loaded, weights, error))
    return false;
  std::unique_ptr<Executor> executor = Executor::create(std::move(loaded), device, {}, error);
  if (!executor || !executor->loadParameters(weights, error))
    return false;
  int64_t firstStep = 1;
  if (options.resumeDir) {
    int64_t saved = resumeFrom(*executor, plan, *options.resumeDir, options, error);
    if (saved < 0)
      return false;
    firstStep = saved + 1;
  }
  if (options.checkpointDir && !prepareOutputFile(*options.checkpointDir + kCheckpointFile, error))
    return false;
  std::unique_ptr<StreamedFile> log;
  if (options.logPath && !(log = StreamedFile::create(*options.logPath, error))) {
    error = "--log: " + error;
    return false;
  }
  bool needsStep = hasInput(executor->plan(), ScalarInput::StepNumber);
  bool needsSalt = hasInput(executor->plan(), ScalarInput::Salt);
  bool needsRefresh = hasInput(executor->plan(), ScalarInput::Refresh);
  const std::string &lossName = plan.training().loss_output();
  bool scalesLoss = plan.training().has_loss_scaling();
  // A step is one optimizer step: `micro` micro-batches, the last of which applies the update.
  int64_t micro = std::max<int64_t>(1, plan.training().accumulation_steps());
  // Micro-batch indices are int64: a resumed step near 2^63 must not wrap around.
  if (options.steps > INT64_MAX / micro) {
    error = "--steps " + std::to_string(options.steps) + " with " + std::to_string(micro) +
            " micro-batches per step counts past 2^63 micro-batches";
    return false;
  }
  for (int64_t step = firstStep; step <= options.steps; ++step) {
    double lr = learningRateAt(plan.training(), step);
    auto start = std::chrono::steady_clock::now();
    double lossSum = 0;
    // --precision fp16: the scale the step used and whether it skipped its update, as the
    // micro-batch that applies reports them.
    float lossScale = 0, skipped = 0;
    for (int64_t k = 0; k < micro; ++k) {
      int64_t index = (step - 1) * micro + k;
      NamedArrays inputs = dataset.microBatch(index);
      error =
          allIgnored(plan.training(), inputs, step, index + 1, options.checkpointDir.has_value());
      if (!error.empty())
        return false;
      if (needsSalt)
        inputs.emplace_back(inputName(ScalarInput::Salt), salt(options.seed, index));
      inputs.emplace_back(inputName(ScalarInput::LearningRate), scalar(static_cast<float>(lr)));
      if (needsStep)
        inputs.emplace_back(inputName(ScalarInput::StepNumber), scalar(static_cast<float>(step)));
      if (micro > 1)
        inputs.emplace_back(inputName(ScalarInput::Apply), scalar(k == micro - 1 ? 1.0f : 0.0f));
      if (needsRefresh)
        inputs.emplace_back(inputName(ScalarInput::Refresh), scalar(k == 0 ? 1.0f : 0.0f));
      NamedArrays outputs;
      if (!executor->bindInputs(inputs, error) || !executor->run(error) ||
          !executor->readOutputs(outputs, error))
        return false;
      for (const auto &[name, array] : outputs) {
        float value;
        if (array.bytes.size() != sizeof(float))
          continue;
        std::memcpy(&value, array.bytes.data(), sizeof(float));
        if (name == lossName)
          lossSum += value;
        else if (name == plan::kLossScaleOutput)
          lossScale = value;
        else if (name == plan::kSkippedOutput)
          skipped = value;
      }
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    float loss = static_cast<float>(lossSum / micro);
    const ExecutionStats &stats = executor->stats();
    uint64_t peak = stats.arenaHighWaterBytes + stats.persistentBytes + stats.constantBytes;
    if (log) {
      // JSON has no NaN: a non-finite loss is null (training stops right after).
      char lossText[32] = "null";
      if (std::isfinite(loss))
        std::snprintf(lossText, sizeof(lossText), "%.9g", loss);
      char scaling[96] = "";
      if (scalesLoss)
        std::snprintf(scaling, sizeof(scaling), ", \"loss_scale\": %.9g, \"skipped\": %s",
                      lossScale, skipped != 0 ? "true" : "false");
      char line[352];
      std::snprintf(line, sizeof(line),
                    "{\"step\": %lld, \"loss\": %s, \"lr\": %.9g, \"ms\": %.3f, "
                    "\"peak_bytes\": %llu%s}\n",
                    (long long)step, lossText, lr, ms, (unsigned long long)peak, scaling);
      if (!log->write(line, error)) {
        error = "--log: " + error;
        return false;
      }
    }
    if (options.progress)
      std::fprintf(stderr, "\rstep %lld/%lld  loss %.5f  %.1f samples/s  memory %.1f MiB",
                   (long long)step, (long long)options.steps, loss,
                   dataset.batch * micro / (ms / 1e3), peak / 1048576.0);
    else if (scalesLoss)
      std::fprintf(stderr, "step %lld loss %.6f loss_scale %g%s\n", (long long)step, loss,
                   lossScale, skipped != 0 ? " skipped" : "");
    else
      std::fprintf(stderr, "step %lld loss %.6f\n", (long long)step, loss);
    if (!std::isfinite(loss)) {
      error = "the loss is " + std::string(std::isnan(loss) ? "NaN" : "infinite") + " at step " +
              std::to_string(step) + "; training stopped" +
              (options.checkpointDir ? " (the last checkpoint is the last good state)" : "");
      return false;
    }
    if (options.checkpointDir && options.checkpointEvery > 0 &&
        (step % options.checkpointEvery == 0 || step == options.steps) &&
        !writeCheckpoint(*executor, plan, *options.checkpointDir, step, error))
      return false;
  }
  if (options.progress)
    std::fprintf(stderr, "\n");
  if (log && !log->close(error)) {
    error = "--log: " + error;
    return false;
  }
  return !options.savePath ||
         saveParameters(*executor, plan.training(), *options.savePath, options, error);
}

} // namespace memc::runtime
