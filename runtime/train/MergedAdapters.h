//===- MergedAdapters.h - a LoRA program's weights as one model -*- C++ -*-===//
//
// `--save OUT.onnx` of a program with LoRA adapters (memc --lora-rank) writes the model the
// adapters make: each adapted weight W becomes W + (alpha / r) B A (its transpose for a weight
// stored [in, out], PEFT's fan_in_fan_out), as PEFT's merge_and_unload, and a weight stored in
// NF4 (--quantize-base nf4) is dequantized first, so the saved model is an ordinary f32 (or the
// model's 16-bit) ONNX file. The merged weights are held in memory with the others until the
// file is written: an NF4 base takes its f32 size there.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_MERGEDADAPTERS_H
#define MEMC_RUNTIME_TRAIN_MERGEDADAPTERS_H

#include "runtime/io/HostArray.h"
#include "runtime/plan/LoadedPlan.h"

#include <string>
#include <vector>

namespace memc::plan {
class OnnxInitializer;
class Training;
} // namespace memc::plan

namespace memc::runtime {

/// Whether the initializer is one the save computes (an NF4 weight, or a weight with
/// adapters); false with an empty `error` when it is not, with a message when its parts do not
/// fit its shape.
bool isMergedWeight(const plan::Training &training, const LoadedPlan &plan,
                    const plan::OnnxInitializer &initializer, std::string &error);

/// The initializer's f32 values (its dims) from the parameters (Executor::readWholeParameters'
/// arrays, in binding order): the NF4 weight dequantized, plus (alpha / r) B A where adapted.
bool mergedWeight(const plan::Training &training, const LoadedPlan &plan,
                  const plan::OnnxInitializer &initializer, const NamedArrays &parameters,
                  HostArray &out, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_MERGEDADAPTERS_H
