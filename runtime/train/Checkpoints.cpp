//===- Checkpoints.cpp - a training run's checkpoints ---------------------===//
#include "runtime/train/Checkpoints.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/CheckpointIntegrity.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"

#include <cstdio>
#include <set>

namespace memc::runtime {
namespace {

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

/// Why a checkpoint written by another program does not continue this one; empty if it does.
std::string checkpointMismatch(const CheckpointMetadata &saved, const plan::Plan &plan) {
  if (saved.program == programFingerprint(plan))
    return "";
  std::string what;
  if (saved.model != plan.model())
    what = "of model '" + saved.model + "', this program trains '" + plan.model() + "'";
  else if (saved.optimizer != plan.training().optimizer())
    what = "with " + saved.optimizer + ", this program trains with " + plan.training().optimizer();
  else
    what = "with other training flags or ops (learning rate, schedule, loss, frozen "
           "parameters, optimizer settings, or the model's computation)";
  return "the checkpoint was written by another program, training " + what +
         "; resume it with the program that wrote it, or start without --resume";
}

} // namespace

std::string checkpointPath(const std::string &dir, CheckpointShard shard) {
  if (shard.ranks == 1)
    return dir + "/checkpoint.safetensors";
  return dir + "/checkpoint.rank-" + std::to_string(shard.rank) + "-of-" +
         std::to_string(shard.ranks) + ".safetensors";
}

bool writeCheckpoint(Executor &executor, const plan::Plan &plan, const std::string &dir,
                     CheckpointShard shard, int64_t step, const RunIdentity &run,
                     std::string &error) {
  NamedArrays state;
  if (!executor.readParameters(state, error))
    return false;
  std::vector<TensorRef> tensors;
  for (const auto &[name, array] : state)
    tensors.push_back(tensorRef(name, array));
  CheckpointMetadata fields{step,     programFingerprint(plan),
                            plan.model(), plan.training().optimizer(),
                            run.seed, run.data, run.schedule.peak, run.schedule.shape(),
                            run.settings};
  return writeSafetensors(checkpointPath(dir, shard), tensors, checkpointMetadata(fields, tensors),
                          error);
}

int64_t resumeFrom(Executor &executor, const plan::Plan &plan, const std::string &dir,
                   CheckpointShard shard, int64_t steps, const RunIdentity &run,
                   const std::function<void(const std::string &)> &note, std::string &error) {
  SafetensorsFile checkpoint;
  const std::string path = checkpointPath(dir, shard);
  if (!checkpoint.open(path, error))
    return -1;
  CheckpointMetadata fields;
  if (!readCheckpointMetadata(checkpoint, fields, error)) {
    error = "--resume " + dir + ": " + path + ": " + error;
    return -1;
  }
  std::string mismatch = checkpointMismatch(fields, plan);
  if (!mismatch.empty()) {
    error = "--resume " + dir + ": " + mismatch;
    return -1;
  }
  int64_t saved = fields.step;
  if (saved >= steps) {
    error = "--resume " + dir + ": the checkpoint is at step " + std::to_string(saved) +
            ", and --steps is " + std::to_string(steps) +
            ": nothing is left to train (--steps counts from the start; pass more than " +
            std::to_string(saved) + ")";
    return -1;
  }
  if (!fields.schedule.empty() && fields.schedule != run.schedule.shape()) {
    error = "--resume " + dir + ": the checkpoint's run followed the schedule '" +
            fields.schedule + "' and this one '" + run.schedule.shape() +
            "': the rates from step " + std::to_string(saved + 1) +
            " on would be another run's; give the same --schedule, --warmup-steps (and, with "
            "--schedule, --steps), or start without --resume";
    return -1;
  }
  if (!executor.restoreParameters(checkpoint, error))
    return -1;
  if (!fields.settings.empty() && fields.settings != run.settings)
    note("--resume " + dir + ": the checkpoint's run had " + fields.settings + " and this one " +
         run.settings + " from step " + std::to_string(saved + 1));
  if (fields.learningRate && *fields.learningRate != run.schedule.peak) {
    char text[96];
    std::snprintf(text, sizeof(text), "had --lr %.9g and this one trains from step %lld at %.9g",
                  *fields.learningRate, static_cast<long long>(saved + 1), run.schedule.peak);
    note("--resume " + dir + ": the checkpoint's run " + text + " (the schedule's shape is "
         "unchanged)");
  }
  if (fields.seed && *fields.seed != run.seed)
    note("--resume " + dir + ": the checkpoint's run had --seed " + std::to_string(*fields.seed) +
         " and this one has --seed " + std::to_string(run.seed) + ": its dropout masks from step " +
         std::to_string(saved + 1) + " on differ from an uninterrupted run's (pass --seed " +
         std::to_string(*fields.seed) + " to continue it exactly)");
  if (!fields.data.empty() && fields.data != run.data)
    note("--resume " + dir + ": the checkpoint's run read other data (" + fields.data +
         "; this run's: " + run.data + "): its micro-batches from step " +
         std::to_string(saved + 1) + " on are not the ones an uninterrupted run reads");
  return saved;
}

} // namespace memc::runtime
