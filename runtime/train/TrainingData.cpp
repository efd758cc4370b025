//===- TrainingData.cpp - the micro-batches a training program is fed -----===//
#include "runtime/train/TrainingData.h"
#include "runtime/io/Npy.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/Crc32c.h"
#include "runtime/support/SplitMix64.h"
#include "runtime/train/TokenStream.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace memc::runtime {

namespace {

/// Row after row of `sequence` tokens, each from its window's start plus `offset`.
HostArray windowRows(const Dataset &dataset, int64_t index, DType dtype, int64_t offset) {
  HostArray rows{dtype, {dataset.batch, dataset.sequence},
                 std::vector<uint8_t>(dataset.batch * dataset.sequence * elementSize(dtype))};
  for (int64_t row = 0; row < dataset.batch; ++row) {
    int64_t start = dataset.tiled ? dataset.sampleAt(index, row) * dataset.sequence
                                  : dataset.tokens->windowStart(dataset.seed, index, dataset.batch,
                                                                row, dataset.sequence);
    for (int64_t t = 0; t < dataset.sequence; ++t) {
      int64_t token = dataset.tokens->at(start + offset + t);
      if (dtype == DType::I64)
        rows.as<int64_t>()[row * dataset.sequence + t] = token;
      else
        rows.as<int32_t>()[row * dataset.sequence + t] = static_cast<int32_t>(token);
    }
  }
  return rows;
}

} // namespace

int64_t Dataset::sampleAt(int64_t index, int64_t row) const {
  unsigned __int128 position = static_cast<unsigned __int128>(index) * static_cast<uint64_t>(batch) +
                               static_cast<uint64_t>(row);
  auto epoch = static_cast<int64_t>(position / static_cast<uint64_t>(samples));
  auto offset = static_cast<int64_t>(position % static_cast<uint64_t>(samples));
  if (!shuffle)
    return offset;
  if (epoch != orderedEpoch) {
    // Fisher-Yates, each swap's draw a hash of the seed, the epoch and the place.
    order.resize(samples);
    for (int64_t i = 0; i < samples; ++i)
      order[i] = i;
    uint64_t epochKey = splitmix64(seed) ^ splitmix64(static_cast<uint64_t>(epoch));
    for (int64_t k = samples - 1; k > 0; --k) {
      auto j = static_cast<int64_t>(splitmix64(epochKey ^ static_cast<uint64_t>(k)) %
                                    static_cast<uint64_t>(k + 1));
      std::swap(order[k], order[j]);
    }
    orderedEpoch = epoch;
  }
  return order[offset];
}

NamedArrays Dataset::microBatch(int64_t index) const {
  if (tokens)
    return {{tokenInput, windowRows(*this, index, tokenType, 0)},
            {labelsInput, windowRows(*this, index, labelsType, 1)}};
  NamedArrays batchArrays;
  for (const auto &[name, array] : arrays) {
    size_t row = array.size / samples;
    HostArray slice{array.dtype, array.shape, std::vector<uint8_t>(row * batch)};
    slice.shape[0] = batch;
    for (int64_t i = 0; i < batch; ++i) {
      int64_t sample = sampleAt(index, i);
      std::memcpy(slice.bytes.data() + i * row, array.data + sample * row, row);
    }
    batchArrays.emplace_back(name, std::move(slice));
  }
  return batchArrays;
}

std::string dataFingerprint(const Dataset &dataset) {
  if (dataset.tokens)
    return dataset.tokens->fingerprint();
  uint32_t crc = 0;
  for (const auto &[name, array] : dataset.arrays) {
    std::string header =
        name + " " + std::string(dtypeString(array.dtype)) + shapeString(array.shape);
    crc = crc32c(header, crc);
    crc = crc32c({reinterpret_cast<const char *>(array.data), array.size}, crc);
  }
  return std::to_string(dataset.samples) + " samples, crc32c " + crc32cHex(crc) +
         (dataset.shuffle ? ", shuffled per epoch" : "");
}

bool checkLabels(const plan::Training &training, const HostArray &labels, std::string &error) {
  return checkLabels(training, ArrayView::of(labels), error);
}

bool checkLabels(const plan::Training &training, const ArrayView &labels, std::string &error) {
  if (training.classes() <= 0 || (labels.dtype != DType::I64 && labels.dtype != DType::I32))
    return true;
  size_t count = labels.size / elementSize(labels.dtype);
  for (size_t i = 0; i < count; ++i) {
    // memcpy: an array read in place from an npz need not be aligned.
    int64_t label;
    if (labels.dtype == DType::I64) {
      std::memcpy(&label, labels.data + i * 8, 8);
    } else {
      int32_t narrow;
      std::memcpy(&narrow, labels.data + i * 4, 4);
      label = narrow;
    }
    if (label != training.ignore_index() && (label < 0 || label >= training.classes())) {
      error = "label " + std::to_string(label) + " at flat index " + std::to_string(i) + " of '" +
              training.labels_input() + "' is outside [0, " + std::to_string(training.classes()) +
              ") and is not the ignored index " + std::to_string(training.ignore_index());
      return false;
    }
  }
  return true;
}

int64_t countedLabels(const plan::Training &training, const NamedArrays &batch) {
  for (const auto &[name, labels] : batch) {
    if (name != training.labels_input() ||
        (labels.dtype != DType::I64 && labels.dtype != DType::I32))
      continue;
    size_t count = labels.bytes.size() / elementSize(labels.dtype);
    int64_t counted = 0;
    for (size_t i = 0; i < count; ++i) {
      int64_t label =
          labels.dtype == DType::I64 ? labels.as<int64_t>()[i] : labels.as<int32_t>()[i];
      counted += label != training.ignore_index();
    }
    return counted;
  }
  return -1;
}

std::vector<double> lossWeights(const std::vector<int64_t> &counted, int64_t microBatches,
                                double totalCounted) {
  std::vector<double> weights;
  for (int64_t count : counted)
    weights.push_back(totalCounted > 0 ? static_cast<double>(std::max<int64_t>(0, count)) *
                                             static_cast<double>(microBatches) / totalCounted
                                       : 1.0);
  return weights;
}

std::string allIgnored(const plan::Training &training, int64_t counted, int64_t step,
                       int64_t microBatch, bool checkpoints) {
  if (training.classes() <= 0 || counted != 0)
    return "";
  return "every label of step " + std::to_string(step) + "'s batch (micro-batch " +
         std::to_string(microBatch) + ") is the ignored index " +
         std::to_string(training.ignore_index()) +
         ": its loss is undefined (PyTorch's is NaN); training stopped" +
         (checkpoints ? " (the last checkpoint is the last good state)" : "");
}

bool prepareTokenDataset(const LoadedPlan &plan, const plan::Training &training,
                         const TokenStream &stream, uint64_t seed, Dataset &dataset,
                         std::string &error) {
  const std::string &labels = training.labels_input();
  std::vector<const PlanBinding *> others;
  const PlanBinding *labelsBinding = nullptr;
  for (const PlanBinding &input : plan.inputs) {
    if (plan::isScalarInput(input.name))
      continue;
    if (input.name == labels)
      labelsBinding = &input;
    else
      others.push_back(&input);
  }
  auto isTokenRows = [&](const PlanBinding *binding) {
    const PlanBuffer &buffer = plan.buffers[binding->buffer];
    return buffer.shape.size() == 2 && (buffer.dtype == DType::I64 || buffer.dtype == DType::I32);
  };
  if (!labelsBinding || others.size() != 1 || !isTokenRows(others[0]) ||
      !isTokenRows(labelsBinding) ||
      plan.buffers[others[0]->buffer].shape != plan.buffers[labelsBinding->buffer].shape) {
    std::string inputs;
    for (const PlanBinding &input : plan.inputs)
      if (!plan::isScalarInput(input.name))
        inputs += (inputs.empty() ? "" : ", ") + input.name + " " +
                  dtypeString(plan.buffers[input.buffer].dtype) +
                  shapeString(plan.buffers[input.buffer].shape);
    error = "--tokens feeds a language model: one integer token input and integer labels, both "
            "[batch, T]; this program takes " +
            inputs;
    return false;
  }
  const PlanBuffer &rows = plan.buffers[others[0]->buffer];
  dataset.tokens = &stream;
  dataset.tokenInput = others[0]->name;
  dataset.labelsInput = labels;
  dataset.tokenType = rows.dtype;
  dataset.labelsType = plan.buffers[labelsBinding->buffer].dtype;
  dataset.batch = rows.shape[0];
  dataset.sequence = rows.shape[1];
  dataset.seed = seed;
  dataset.samples = stream.size();
  if (stream.size() <= dataset.sequence) {
    error = "the token file holds " + std::to_string(stream.size()) +
            " tokens, fewer than one window of the program's " +
            std::to_string(dataset.sequence) + " + 1";
    return false;
  }
  return true;
}

bool prepareTiledTokenDataset(const LoadedPlan &plan, const plan::Training &training,
                              const TokenStream &stream, Dataset &dataset, std::string &error) {
  if (!prepareTokenDataset(plan, training, stream, 0, dataset, error))
    return false;
  dataset.tiled = true;
  // Each window needs its T + 1 tokens: the last one ends on the file's last token at most.
  dataset.samples = (stream.size() - 1) / dataset.sequence;
  return true;
}

bool prepareDataset(const LoadedPlan &plan, const NamedViews &data, Dataset &dataset,
                    const std::function<void(const std::string &)> &note, std::string &error) {
  std::map<std::string, const ArrayView *> byName;
  for (const auto &[name, array] : data)
    byName[name] = &array;
  std::vector<std::string> problems;
  for (const PlanBinding &input : plan.inputs) {
    if (plan::isScalarInput(input.name))
      continue;
    const PlanBuffer &buffer = plan.buffers[input.buffer];
    auto it = byName.find(input.name);
    std::string expected =
        std::string(dtypeString(buffer.dtype)) + "[N" + (buffer.shape.size() > 1 ? "," : "") +
        shapeString(
            {buffer.shape.begin() + std::min<size_t>(1, buffer.shape.size()), buffer.shape.end()})
            .substr(1);
    if (it == byName.end()) {
      problems.push_back("'" + input.name + "' is missing (expected " + expected + ")");
      continue;
    }
    const ArrayView &array = *it->second;
    HostArray described{array.dtype, array.shape, {}, array.fileType}; // for the messages
    std::string problem = inputTypeProblem(described, buffer.dtype);
    bool fits = problem.empty() && !buffer.shape.empty() && array.dtype == buffer.dtype &&
                array.shape.size() == buffer.shape.size() && !array.shape.empty() &&
                array.shape[0] > 0 &&
                std::equal(array.shape.begin() + 1, array.shape.end(), buffer.shape.begin() + 1);
    if (!fits) {
      problems.push_back("'" + input.name + "' is " + fileDTypeString(described) +
                         shapeString(array.shape) + ", expected " + expected +
                         (problem.empty() ? "" : " (" + problem + ")"));
      continue;
    }
    if (array.fileType == FileType::Float64)
      note(float64Note(input.name));
    if (dataset.samples != 0 && array.shape[0] != dataset.samples) {
      problems.push_back("'" + input.name + "' has " + std::to_string(array.shape[0]) +
                         " samples, the other arrays " + std::to_string(dataset.samples));
      continue;
    }
    dataset.samples = array.shape[0];
    dataset.batch = buffer.shape[0];
    dataset.arrays.emplace_back(input.name, array);
  }
  // An array the program does not read would be ignored: most often a misspelled input.
  std::string inputNames;
  for (const PlanBinding &input : plan.inputs)
    if (!plan::isScalarInput(input.name))
      inputNames += (inputNames.empty() ? "'" : ", '") + input.name + "'";
  for (const auto &[name, array] : data)
    if (std::none_of(plan.inputs.begin(), plan.inputs.end(),
                     [&](const PlanBinding &input) { return input.name == name; }) ||
        plan::isScalarInput(name))
      problems.push_back("'" + name + "' is no input of the program (its inputs are " + inputNames +
                         ")");
  if (problems.empty() && dataset.samples < dataset.batch) {
    error = "the data has " + std::to_string(dataset.samples) +
            " samples, fewer than one micro-batch of the program (" +
            std::to_string(dataset.batch) + " samples, axis 0 of its inputs)";
    return false;
  }
  if (problems.empty()) {
    if (int64_t tail = dataset.samples % dataset.batch; tail != 0)
      note("the data's " + std::to_string(dataset.samples) +
           " samples are not a multiple of the micro-batch (" + std::to_string(dataset.batch) +
           "): micro-batches run on from one pass over the data into the next (micro-batch " +
           std::to_string(dataset.samples / dataset.batch) + " takes the last " +
           std::to_string(tail) + " samples of the first pass and the first " +
           std::to_string(dataset.batch - tail) + " of the second), so no sample is dropped");
    return true;
  }
  error = "the data does not fit the program's inputs:";
  for (const std::string &problem : problems)
    error += "\n  " + problem;
  return false;
}

} // namespace memc::runtime
