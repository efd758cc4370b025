//===- LearningRateSchedule.h - the learning rate of each step -*- C++ -*-===//
//
// Hugging Face's schedules, by transformers' own formulas (get_constant_schedule_with_warmup,
// get_linear_schedule_with_warmup, get_cosine_schedule_with_warmup with half a cycle). The
// scheduler steps after each optimizer step, so optimizer step s (from 1) runs at the factor of
// scheduler count s - 1: with a warmup, the first step runs at lr 0.
//
// A program takes its schedule from memc's flags (--lr, --warmup, --decay-steps: cosine to zero
// over the decay steps after the warmup); the training program's --lr, --warmup-steps and
// --schedule override it (a --schedule decays to zero at the run's --steps, as Trainer does at
// num_training_steps).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_LEARNINGRATESCHEDULE_H
#define MEMC_RUNTIME_TRAIN_LEARNINGRATESCHEDULE_H

#include <cstdint>
#include <optional>
#include <string>

namespace memc::plan {
class Training;
} // namespace memc::plan

namespace memc::runtime {

struct LearningRateSchedule {
  enum class Kind { Constant, Linear, Cosine };
  Kind kind = Kind::Constant;
  double peak = 0;
  int64_t warmup = 0;
  /// The optimizer step the decay reaches zero at (num_training_steps); not read by Constant.
  int64_t total = 0;

  /// The program's compiled schedule.
  static LearningRateSchedule ofPlan(const plan::Training &training);

  /// The learning rate of optimizer step `step` (from 1).
  double at(int64_t step) const;
  /// The schedule without its peak, as checkpoints record it: "cosine to step 1000, warmup 100".
  std::string shape() const;
};

/// "constant", "linear" or "cosine".
std::optional<LearningRateSchedule::Kind> parseScheduleKind(const std::string &name);
const char *scheduleKindName(LearningRateSchedule::Kind kind);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_LEARNINGRATESCHEDULE_H
