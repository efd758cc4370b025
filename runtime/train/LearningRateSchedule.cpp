//===- LearningRateSchedule.cpp - the learning rate of each step ---------===//
#include "runtime/train/LearningRateSchedule.h"
#include "runtime/plan/Plan.pb.h"

#include <algorithm>
#include <cmath>

namespace memc::runtime {

LearningRateSchedule LearningRateSchedule::ofPlan(const plan::Training &training) {
  LearningRateSchedule schedule;
  schedule.peak = training.learning_rate();
  schedule.warmup = training.warmup_steps();
  if (training.decay_steps() > 0) {
    schedule.kind = Kind::Cosine;
    schedule.total = training.warmup_steps() + training.decay_steps();
  }
  return schedule;
}

double LearningRateSchedule::at(int64_t step) const {
  // transformers' lr_lambda(current_step), in doubles as Python computes it.
  const double current = static_cast<double>(step - 1);
  const double warmupSteps = static_cast<double>(warmup);
  if (current < warmupSteps)
    return peak * (current / std::max(1.0, warmupSteps));
  const double remaining = std::max(1.0, static_cast<double>(total) - warmupSteps);
  switch (kind) {
  case Kind::Constant:
    return peak;
  case Kind::Linear:
    return peak * std::max(0.0, (static_cast<double>(total) - current) / remaining);
  case Kind::Cosine: {
    const double progress = (current - warmupSteps) / remaining;
    return peak * std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 2.0 * 0.5 * progress)));
  }
  }
  return peak;
}

std::string LearningRateSchedule::shape() const {
  std::string text = scheduleKindName(kind);
  if (kind != Kind::Constant)
    text += " to step " + std::to_string(total);
  return text + ", warmup " + std::to_string(warmup);
}

std::optional<LearningRateSchedule::Kind> parseScheduleKind(const std::string &name) {
  for (auto kind : {LearningRateSchedule::Kind::Constant, LearningRateSchedule::Kind::Linear,
                    LearningRateSchedule::Kind::Cosine})
    if (name == scheduleKindName(kind))
      return kind;
  return std::nullopt;
}

const char *scheduleKindName(LearningRateSchedule::Kind kind) {
  switch (kind) {
  case LearningRateSchedule::Kind::Constant:
    return "constant";
  case LearningRateSchedule::Kind::Linear:
    return "linear";
  case LearningRateSchedule::Kind::Cosine:
    return "cosine";
  }
  return "constant";
}

} // namespace memc::runtime
