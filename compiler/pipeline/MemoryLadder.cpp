//===- MemoryLadder.cpp - the techniques of the guides, one rung at a time ===//
#include "compiler/pipeline/MemoryLadder.h"

#include <algorithm>
#include <utility>

namespace memc {
namespace {

/// The ladder's flags as they stand after some rungs: one value per flag, in a fixed order.
class LadderFlags {
public:
  void set(const std::string &name, const std::string &value) {
    auto found = std::find_if(values.begin(), values.end(),
                              [&](const auto &entry) { return entry.first == name; });
    if (found != values.end())
      found->second = value;
    else
      values.emplace_back(name, value);
  }
  std::vector<std::string> arguments() const {
    std::vector<std::string> result;
    for (const auto &[name, value] : values) {
      result.push_back("--" + name);
      result.push_back(value);
    }
    return result;
  }

private:
  std::vector<std::pair<std::string, std::string>> values;
};

} // namespace

std::vector<LadderRung> memoryLadder(const LadderSetting &setting) {
  bool adam = setting.optimizer == "adamw" || setting.optimizer == "adamw8bit";
  bool dataParallel = setting.worldSize > 1;
  LadderFlags flags;
  flags.set("precision", "fp32");
  flags.set("remat", "none");
  flags.set("fuse-attention", "off");
  flags.set("fuse-loss", "off");
  flags.set("optimizer", adam ? "adamw" : setting.optimizer);
  if (dataParallel)
    flags.set("zero-stage", "0");
  flags.set("offload-optimizer", "none");

  // The user's flags a rung cannot take: fp16's loss scaling in fp32, DDP's buckets from
  // ZeRO-2 on (gradients are reduce-scattered as they are made), --freeze where only adapters
  // train.
  std::set<std::string> drops = {"loss-scale", "loss-scale-window"};
  std::vector<LadderRung> rungs;
  auto add = [&](const std::string &name) { rungs.push_back({name, flags.arguments(), drops}); };
  add("fp32 baseline");
  const char *half = setting.fp16 ? "fp16" : "bf16";
  flags.set("precision", half);
  drops.clear();
  add(std::string("+ ") + half + (setting.fp16 ? " (loss scaling)" : ""));
  flags.set("remat", "full");
  add("+ checkpointing (full)");
  if (setting.budget) {
    flags.set("remat", "auto");
    add("+ checkpointing (auto at the budget)");
  }
  flags.set("fuse-attention", "auto");
  flags.set("fuse-loss", "auto");
  add("+ flash attention, fused loss");
  if (adam) {
    flags.set("optimizer", "adamw8bit");
    add("+ 8-bit optimizer states");
  }
  if (dataParallel)
    for (int stage = 1; stage <= 3; ++stage) {
      flags.set("zero-stage", std::to_string(stage));
      if (stage == 2)
        drops.insert("bucket-cap-mb");
      add("+ ZeRO-" + std::to_string(stage));
    }
  flags.set("offload-optimizer", "cpu");
  add("+ optimizer offload");
  // QLoRA's recipe: rank 16 on every linear layer but the head, the base in NF4 with its
  // absmax double-quantized (memc's default). memc does not shard a 4-bit base: ZeRO-2.
  if (dataParallel)
    flags.set("zero-stage", "2");
  flags.set("lora-rank", "16");
  flags.set("lora-targets", "all-linear");
  flags.set("quantize-base", "nf4");
  drops.insert("freeze");
  add("+ QLoRA (r 16, all linear, NF4)");
  return rungs;
}

const std::set<std::string> &ladderFlagNames() {
  static const std::set<std::string> names = {
      "precision",     "remat",           "fuse-attention",    "fuse-loss",
      "optimizer",     "zero-stage",      "offload-optimizer", "offload-activations",
      "lora-rank",     "lora-alpha",      "lora-dropout",      "lora-targets",
      "quantize-base", "no-double-quant"};
  return names;
}

} // namespace memc
