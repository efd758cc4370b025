//===- Checkpoints.h - a training run's checkpoints -------------*- C++ -*-===//
//
// DIR/checkpoint.safetensors: parameters, buffers and optimizer state with the step number, the
// program's fingerprint and checksums (CheckpointIntegrity.h), written atomically. A run resumes
// only from a checkpoint its own program wrote (the same fingerprint), after the saved step.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_CHECKPOINTS_H
#define MEMC_RUNTIME_TRAIN_CHECKPOINTS_H

#include "runtime/train/LearningRateSchedule.h"

#include <cstdint>
#include <functional>
#include <string>

namespace memc::plan {
class Plan;
} // namespace memc::plan

namespace memc::runtime {

class Executor;

/// What a run records in its checkpoints besides its state: what decides its micro-batches and
/// masks, so that a resume that differs can say so.
struct RunIdentity {
  int64_t seed = 0;
  /// dataFingerprint (TrainingData.h) of the data it reads.
  std::string data;
  /// The learning rates it trains with.
  LearningRateSchedule schedule;
  /// The global norm it clips to (0: none), and its weight decay and clipping as text.
  double clipNorm = 0;
  std::string settings;
};

/// Whose state a checkpoint file holds. Under ZeRO (--zero-stage 1-2) rank R of N holds its own
/// shards of the optimizer state (and gradient accumulators) and writes them, with everything
/// else it holds, to DIR/checkpoint.rank-R-of-N.safetensors; a program of one process, or of
/// ranks that all hold the same state (stage 0, rank 0 writing), has DIR/checkpoint.safetensors.
struct CheckpointShard {
  int rank = 0;
  int ranks = 1;
};

/// The checkpoint file of checkpoint folder `dir` (of rank `shard.rank`'s shards).
std::string checkpointPath(const std::string &dir, CheckpointShard shard = {});

/// Writes the executor's parameters, buffers and optimizer state, taken after `step`.
bool writeCheckpoint(Executor &executor, const plan::Plan &plan, const std::string &dir,
                     CheckpointShard shard, int64_t step, const RunIdentity &run,
                     std::string &error);

/// Restores a checkpoint into the executor; returns the step it was taken after, or -1 with a
/// message: a damaged or foreign checkpoint, or one at or past `steps`, the run's last step. A
/// checkpoint of a run with another seed or other data is a `note` naming what differs: the
/// resumed run is then not the uninterrupted one.
int64_t resumeFrom(Executor &executor, const plan::Plan &plan, const std::string &dir,
                   CheckpointShard shard, int64_t steps, const RunIdentity &run,
                   const std::function<void(const std::string &)> &note, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_CHECKPOINTS_H
