//===- SaveAdapter.h - LoRA adapters in PEFT's format -----------*- C++ -*-===//
//
// --save-adapter DIR writes what PEFT's PeftModel.from_pretrained(base, DIR) loads:
// DIR/adapter_model.safetensors, each adapter under `base_model.model.<module>.lora_A.weight`
// and `.lora_B.weight` in f32, and DIR/adapter_config.json (peft_type LORA, r, lora_alpha,
// lora_dropout, target_modules, bias "none"), from the plan's training.lora.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_SAVEADAPTER_H
#define MEMC_RUNTIME_TRAIN_SAVEADAPTER_H

#include "runtime/io/HostArray.h"

#include <string>
#include <vector>

namespace memc::plan {
class Training;
} // namespace memc::plan

namespace memc::runtime {

/// The two files --save-adapter `dir` writes.
std::vector<std::string> adapterFiles(const std::string &dir);

/// Before the first step: the program trains adapters, and their files can be written in `dir`
/// (which exists, or its parent does and it is made).
bool checkSaveAdapter(const plan::Training &training, const std::string &dir, std::string &error);

/// Writes the adapters among `parameters` (Executor::readWholeParameters' arrays) to `dir`.
bool saveAdapter(const NamedArrays &parameters, const plan::Training &training,
                 const std::string &dir, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_SAVEADAPTER_H
