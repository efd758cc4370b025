//===- TrainingData.h - the micro-batches a training program is fed -*- C++ -*-===//
//
// The data file's arrays matched to the program's inputs (one array per data input, samples
// along axis 0), the micro-batches cut from them in order (wrapping around), and the label
// checks cross_entropy needs before and during training.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_TRAININGDATA_H
#define MEMC_RUNTIME_TRAIN_TRAININGDATA_H

#include "runtime/io/HostArray.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace memc::plan {
class Training;
} // namespace memc::plan

namespace memc::runtime {

struct LoadedPlan;

class TokenStream;

/// The data the loop feeds: one array per data input, samples along axis 0; or windows of a
/// token stream.
struct Dataset {
  NamedViews arrays;
  int64_t samples = 0;
  int64_t batch = 0;
  /// A token stream (TokenStream.h) instead of arrays: its windows of `sequence` + 1 tokens,
  /// drawn with `seed`, fill the program's token input and its labels, both [batch, sequence].
  const TokenStream *tokens = nullptr;
  std::string tokenInput, labelsInput;
  DType tokenType = DType::I64, labelsType = DType::I64;
  int64_t sequence = 0;
  uint64_t seed = 0;
  /// A held-out stream is read in order instead: window w starts at token w * sequence, and the
  /// `samples` windows cover the file once (--eval-data with --tokens).
  bool tiled = false;
  /// Arrays only: each epoch (a pass over the samples) in its own order, a permutation drawn
  /// from `seed` and the epoch's number; micro-batches still run on across epoch boundaries.
  bool shuffle = false;

  /// The sample in row `row` of micro-batch `index`: position index * batch + row of the data's
  /// order (epoch after epoch), taken in 128 bits: a resumed step near 2^63 must not wrap.
  int64_t sampleAt(int64_t index, int64_t row) const;

  /// Micro-batch `index` (0-based): `batch` samples from index * batch, wrapping around.
  NamedArrays microBatch(int64_t index) const;

private:
  /// The last epoch's order sampleAt drew (drawing one is O(samples)).
  mutable int64_t orderedEpoch = -1;
  mutable std::vector<int64_t> order;
};

/// What identifies the data a run reads, for its checkpoints: the sample count and a CRC-32C
/// of every array's name, type, shape and bytes ("1024 samples, crc32c 0a1b2c3d").
std::string dataFingerprint(const Dataset &dataset);

/// Matches `data` to the program's data inputs (name, dtype, every axis but the first) into
/// `dataset`; false with every mismatch listed, an array that is no input among them. A float64
/// array (converted) is a `note`, and so is a sample count that is not a multiple of the
/// micro-batch (the micro-batches wrap around the data's end).
bool prepareDataset(const LoadedPlan &plan, const NamedViews &data, Dataset &dataset,
                    const std::function<void(const std::string &)> &note, std::string &error);

/// Matches a token stream to the program: exactly one data input besides the labels, both
/// integer [batch, T], and a stream longer than T. False naming what does not fit.
bool prepareTokenDataset(const LoadedPlan &plan, const plan::Training &training,
                         const TokenStream &stream, uint64_t seed, Dataset &dataset,
                         std::string &error);

/// The same for held-out tokens, read as consecutive windows (`Dataset::tiled`).
bool prepareTiledTokenDataset(const LoadedPlan &plan, const plan::Training &training,
                              const TokenStream &stream, Dataset &dataset, std::string &error);

/// cross_entropy labels must be classes or the ignored index: checked for the whole data set
/// before the first step, naming the first bad sample.
bool checkLabels(const plan::Training &training, const HostArray &labels, std::string &error);
bool checkLabels(const plan::Training &training, const ArrayView &labels, std::string &error);

/// The labels of `batch` that cross_entropy counts (not the ignored index); -1 without labels.
int64_t countedLabels(const plan::Training &training, const NamedArrays &batch);

/// Each micro-batch's memc.loss_weight for one optimizer step from its `counted` labels: the
/// count times the number of micro-batches the step averages over over the counted labels of
/// them all (the weights average 1, and the weighted mean of the micro-batches' losses is the
/// loss of one batch of them all). `microBatches` and `totalCounted` are the step's whole,
/// beyond this process's `counted` where ranks share the step.
std::vector<double> lossWeights(const std::vector<int64_t> &counted, int64_t microBatches,
                                double totalCounted);

/// cross_entropy over a batch whose labels are all the ignored index (`counted` is 0) has no
/// value (PyTorch's is NaN): the message that stops training at `step`, or empty.
std::string allIgnored(const plan::Training &training, int64_t counted, int64_t step,
                       int64_t microBatch, bool checkpoints);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_TRAININGDATA_H
