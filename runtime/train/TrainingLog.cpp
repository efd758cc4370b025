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

namespace {

/// A JSON number of `digits` significant digits, or null for a non-finite value (JSON has no
/// NaN).
std::string jsonNumber(double value, int digits = 9) {
  if (!std::isfinite(value))
    return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

} // namespace

bool TrainingLog::write(const StepRecord &record, std::string &error) {
  char head[200];
  std::snprintf(head, sizeof(head),
                "{\"step\": %lld, \"loss\": %s, \"lr\": %.9g, \"ms\": %.3f, "
                "\"peak_bytes\": %llu",
                (long long)record.step, jsonNumber(record.loss).c_str(), record.learningRate,
                record.milliseconds, (unsigned long long)record.peakBytes);
  std::string line = head;
  if (record.epoch >= 0)
    line += ", \"epoch\": " + jsonNumber(record.epoch, 6);
  if (record.evalLoss)
    line += ", \"eval_loss\": " + jsonNumber(*record.evalLoss);
  if (record.gradNorm)
    line += ", \"grad_norm\": " + jsonNumber(*record.gradNorm);
  if (record.scalesLoss)
    line += ", \"loss_scale\": " + jsonNumber(record.lossScale) +
            ", \"skipped\": " + (record.skipped ? "true" : "false");
  line += "}\n";
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

void printStep(const StepRecord &record, bool progress, int64_t steps, const Throughput &rate,
               double averageMs) {
  char norm[48] = "";
  if (record.gradNorm)
    std::snprintf(norm, sizeof(norm), progress ? "  grad norm %.4g" : " grad_norm %.6g",
                  *record.gradNorm);
  if (progress) {
    double eta = static_cast<double>(steps - record.step) * averageMs / 1e3;
    std::fprintf(stderr,
                 "\rstep %lld/%lld  loss %.5f%s  %.1f %s/s  %.1f ms/step  ETA %.0f s  "
                 "memory %.1f MiB",
                 (long long)record.step, (long long)steps, record.loss, norm,
                 static_cast<double>(rate.perStep) / (record.milliseconds / 1e3), rate.unit,
                 averageMs, eta, record.peakBytes / 1048576.0);
  } else if (record.scalesLoss) {
    std::fprintf(stderr, "step %lld loss %.6f%s loss_scale %g%s\n", (long long)record.step,
                 record.loss, norm, record.lossScale, record.skipped ? " skipped" : "");
  } else {
    std::fprintf(stderr, "step %lld loss %.6f%s\n", (long long)record.step, record.loss, norm);
  }
  // The progress line stays above the evaluations, one line each.
  if (record.evalLoss)
    std::fprintf(stderr, "%sstep %lld eval_loss %.6f\n", progress ? "\n" : "",
                 (long long)record.step, *record.evalLoss);
}

} // namespace memc::runtime
