//===- TrainingLoop.h - run a training program's steps ----------*- C++ -*-===//
//
// A training program's plan computes one optimizer step: forward, loss, backward and update,
// with parameters and optimizer state in the persistent region. The loop feeds it micro-batches
// from a .npz file (samples along axis 0, wrapping around), sets the learning rate of the
// schedule and the step number, and logs the loss. The loop's parts, each in its own file: the
// data (TrainingData.h), checkpoints (Checkpoints.h), saving the trained weights
// (SaveTrained.h) and the step log (TrainingLog.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_TRAININGLOOP_H
#define MEMC_RUNTIME_TRAIN_TRAININGLOOP_H

#include "runtime/device/Device.h"
#include "runtime/io/Safetensors.h"
#include "runtime/train/LearningRateSchedule.h"
#include "runtime/train/TokenStream.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace memc::plan {
class Plan;
class Training;
} // namespace memc::plan

namespace memc::runtime {

struct TrainingOptions {
  std::string dataPath;
  /// A data-parallel program's ranks (host reductions of counts and losses; the device's
  /// collectives where the device has none of its own); null for one process. Rank r of N reads
  /// micro-batches ((step - 1) * N + r) * K + j (DistributedSampler's assignment, K per step).
  /// Only rank 0 is given the log, the checkpoints (under ZeRO every rank writes its own),
  /// --dump-grads and the notes; every rank is given --save, which rank 0 writes.
  kernels::Collectives *ranks = nullptr;
  /// The device's own collectives over the same ranks (NCCL for CUDA ranks), which the plan's
  /// collective steps call instead of `ranks`; null where the device has none.
  kernels::Collectives *deviceCollectives = nullptr;
  /// `dataPath` is a flat token file of this width (TokenStream.h), not an npz.
  std::optional<TokenStream::Width> tokens;
  int64_t steps = 1;
  /// One JSON object per step: step, loss, lr, ms, peak_bytes (and loss_scale, skipped with fp16
  /// loss scaling).
  std::optional<std::string> logPath;
  /// The gradients of the first step (before any update), one array per trainable parameter.
  std::optional<std::string> dumpGradientsPath;
  /// The trained parameters and buffers: safetensors, or, for a path ending in ".onnx", the
  /// source model with the trained weights (the program's ONNX template, OnnxWriter.h).
  std::optional<std::string> savePath;
  /// A program with LoRA adapters: DIR/adapter_model.safetensors and adapter_config.json in
  /// PEFT's format (SaveAdapter.h).
  std::optional<std::string> saveAdapterDir;
  /// --profile [TRACE.json]: each step's kernels timed, a table after the run (rank 0) and
  /// optionally a Chrome trace (runtime/exec/StepProfile.h).
  bool profile = false;
  std::optional<std::string> profileTrace;
  /// Every `checkpointEvery` steps, DIR/checkpoint.safetensors: parameters, buffers and
  /// optimizer state with the step number, the program's fingerprint (its training settings,
  /// parameters, optimizer state and the set of ops it runs) and checksums (CheckpointIntegrity.h),
  /// written atomically (write, then rename).
  std::optional<std::string> checkpointDir;
  int64_t checkpointEvery = 0;
  /// Continue from DIR/checkpoint.safetensors: the step after the saved one, with the same
  /// micro-batches, so the losses are those of an uninterrupted run. Refused: a damaged
  /// checkpoint (a checksum mismatch) or one without checksums, invalid metadata, a checkpoint
  /// another program wrote (another fingerprint) and one at or past `steps`.
  std::optional<std::string> resumeDir;
  /// A progress line on stderr.
  bool progress = false;
  /// Seeds the dropout masks: each micro-batch's masks depend on the seed and its index, so a
  /// run (and a resumed run) is reproducible and masks differ between steps.
  int64_t seed = 0;
  /// The program's own flags over its compiled schedule (LearningRateSchedule.h): --lr,
  /// --warmup-steps, and --schedule, which decays to zero at `steps`.
  std::optional<double> learningRate;
  std::optional<int64_t> warmupSteps;
  std::optional<LearningRateSchedule::Kind> schedule;
  /// --weight-decay and --clip-grad-norm over the compiled values (the program must have them).
  std::optional<double> weightDecay, clipGradNorm;
  /// An npz of held-out samples (arrays as --data's): every `evalEvery` steps and after the last,
  /// the loss over all of it in eval mode (the program's evaluation plan: no update, no dropout,
  /// BatchNorm on its running statistics), logged as eval_loss.
  std::optional<std::string> evalDataPath;
  int64_t evalEvery = 0;
  /// Instead of `steps`: enough steps to pass over the samples this many times.
  std::optional<int64_t> epochs;
  /// Each pass over an npz's samples in its own order, drawn from `seed` (Dataset::shuffle).
  bool shuffle = false;
  /// Where notes go (a conversion of the data, an unchecked checkpoint): stderr by default.
  std::function<void(const std::string &)> note = [](const std::string &text) {
    std::fprintf(stderr, "note: %s\n", text.c_str());
  };
};

/// The schedule a run follows: the program's, with `options`' overrides.
LearningRateSchedule runSchedule(const plan::Training &training, const TrainingOptions &options);

/// Runs `options.steps` training steps of `plan` on `device`. Returns false with a message;
/// a loss that is not finite, or a cross_entropy batch whose labels are all the ignored index,
/// stops training with the step number. Data with fewer samples than one micro-batch is refused.
bool runTraining(const plan::Plan &plan, const SafetensorsFile &weights, Device &device,
                 const TrainingOptions &options, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_TRAININGLOOP_H
