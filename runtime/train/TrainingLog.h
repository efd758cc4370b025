//===- TrainingLog.h - what a training run reports each step ----*- C++ -*-===//
//
// Each optimizer step's record goes to stderr (a line, or a progress line that rewrites itself)
// and, with --log, to a JSON-lines file: step, loss, lr, ms, peak_bytes, grad_norm where the
// program computes it, and loss_scale and skipped under fp16 loss scaling. JSON has no NaN: a
// non-finite value is written as null.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_TRAININGLOG_H
#define MEMC_RUNTIME_TRAIN_TRAININGLOG_H

#include "runtime/io/Files.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace memc::runtime {

/// What one optimizer step reports.
struct StepRecord {
  int64_t step = 0;
  float loss = 0;
  double learningRate = 0, milliseconds = 0;
  uint64_t peakBytes = 0;
  /// fp16 loss scaling: the scale the step used and whether it skipped its update.
  bool scalesLoss = false;
  float lossScale = 0;
  bool skipped = false;
  /// Passes over the data so far (Hugging Face's fractional epoch); negative for token streams.
  double epoch = -1;
  /// The gradients' global norm, where the program computes it (clipping, --log-grad-norm).
  std::optional<float> gradNorm;
  /// --eval-data on this step: the held-out loss.
  std::optional<double> evalLoss;
};

/// The --log file, written as the steps go.
class TrainingLog {
public:
  /// Creates (replaces) `path`; null with "--log: ..." in `error`.
  static std::unique_ptr<TrainingLog> create(const std::string &path, std::string &error);
  bool write(const StepRecord &record, std::string &error);
  bool close(std::string &error);

private:
  explicit TrainingLog(std::unique_ptr<StreamedFile> file) : file(std::move(file)) {}
  std::unique_ptr<StreamedFile> file;
};

/// What one step processes: tokens for language models (labels [batch, T]), samples otherwise.
struct Throughput {
  int64_t perStep = 0;
  const char *unit = "samples";
};

/// The step's line on stderr; with `progress`, one line of `steps` that rewrites itself, with
/// the throughput, the mean step time so far and the time left at it.
void printStep(const StepRecord &record, bool progress, int64_t steps, const Throughput &rate,
               double averageMs);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_TRAININGLOG_H
