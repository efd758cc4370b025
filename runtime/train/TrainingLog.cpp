//===- TrainingLog.cpp - what a training run reports each step ------------===//
#include "runtime/train/TrainingLog.h"

#include <cmath>
#include <cstdio>

namespace memc::runtime {

std::unique_ptr<TrainingLog> TrainingLog::create(const std::string &path, std::string &error) {
  std::unique_ptr<StreamedFile> file = StreamedFile::create(path, error);
  if (!file) {
    error = "--log: " + error;
    return nullptr;
  }
  return std::unique_ptr<TrainingLog>(new TrainingLog(std::move(file)));
}

bool TrainingLog::write(const StepRecord &record, std::string &error) {
  char lossText[32] = "null";
  if (std::isfinite(record.loss))
    std::snprintf(lossText, sizeof(lossText), "%.9g", record.loss);
  char scaling[96] = "";
  if (record.scalesLoss)
    std::snprintf(scaling, sizeof(scaling), ", \"loss_scale\": %.9g, \"skipped\": %s",
                  record.lossScale, record.skipped ? "true" : "false");
  char epoch[96] = "";
  int used = 0;
  if (record.epoch >= 0)
    used = std::snprintf(epoch, sizeof(epoch), ", \"epoch\": %.6g", record.epoch);
  if (record.evalLoss)
    std::snprintf(epoch + used, sizeof(epoch) - used, ", \"eval_loss\": %.9g", *record.evalLoss);
  char line[400];
  std::snprintf(line, sizeof(line),
                "{\"step\": %lld, \"loss\": %s, \"lr\": %.9g, \"ms\": %.3f, "
                "\"peak_bytes\": %llu%s%s}\n",
                (long long)record.step, lossText, record.learningRate, record.milliseconds,
                (unsigned long long)record.peakBytes, epoch, scaling);
  if (file->write(line, error))
    return true;
  error = "--log: " + error;
  return false;
}

bool TrainingLog::close(std::string &error) {
  if (file->close(error))
    return true;
  error = "--log: " + error;
  return false;
}

void printStep(const StepRecord &record, bool progress, int64_t steps, int64_t samplesPerStep,
               double averageMs) {
  if (progress) {
    double eta = static_cast<double>(steps - record.step) * averageMs / 1e3;
    std::fprintf(stderr,
                 "\rstep %lld/%lld  loss %.5f  %.1f samples/s  %.1f ms/step  ETA %.0f s  "
                 "memory %.1f MiB",
                 (long long)record.step, (long long)steps, record.loss,
                 samplesPerStep / (record.milliseconds / 1e3), averageMs, eta,
                 record.peakBytes / 1048576.0);
  } else if (record.scalesLoss) {
    std::fprintf(stderr, "step %lld loss %.6f loss_scale %g%s\n", (long long)record.step,
                 record.loss, record.lossScale, record.skipped ? " skipped" : "");
  } else {
    std::fprintf(stderr, "step %lld loss %.6f\n", (long long)record.step, record.loss);
  }
  // The progress line stays above the evaluations, one line each.
  if (record.evalLoss)
    std::fprintf(stderr, "%sstep %lld eval_loss %.6f\n", progress ? "\n" : "",
                 (long long)record.step, *record.evalLoss);
}

} // namespace memc::runtime
