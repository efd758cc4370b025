//===- OnnxTemplate.h - the model a training program saves -------*- C++ -*-===//
//
// `--save OUT.onnx` writes the source model with the trained weights, in inference form (what
// module.eval() would export), and the runtime does it without the ONNX library
// (runtime/io/OnnxWriter.h): memc hands it a template, the model minus what training changes,
// and the list of initializers to add back. Before and after, for a model whose exporter
// deduplicated two equal LayerNorm weights:
//
//   graph {                                       graph {
//     initializer ln1.weight = [1, 1, ...]          (ln1.weight, ln2.weight: added at save
//     node Identity(ln1.weight) -> ln2.weight        time, each with its own trained values)
//     node LayerNormalization(x, ln1.weight)        node LayerNormalization(x, ln1.weight)
//     node LayerNormalization(y, ln2.weight)        node LayerNormalization(y, ln2.weight)
//   }                                             }
//
// Each parameter and buffer binding of the plan stands for one initializer of that name. The
// Identity nodes go because in memc each recreated name is a parameter of its own that trains
// on its own. A training-form BatchNormalization loses its training_mode attribute and its
// updated-statistics outputs (it then normalizes with the trained running statistics, saved as
// buffers), and a Dropout its training_mode input (so it passes its input through). Initializers
// without a binding (shape-like constants, unused tensors) stay, with
// any external data read in, so the saved model needs no file but its own.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_LOWERING_ONNXTEMPLATE_H
#define MEMC_COMPILER_LOWERING_ONNXTEMPLATE_H

#include "runtime/plan/Plan.pb.h"

#include <set>
#include <string>

namespace memc {

class WeightStore;

/// Sets `plan.training`'s onnx_template and onnx_initializers for the model at `modelPath`,
/// whose initializers `weights` indexes, from the plan's parameter and buffer bindings (except
/// `madeByMemc`'s: LoRA adapters and NF4 scales, which the runtime merges into the weights they
/// belong to), and its saved_aliases from the export helper's memc.tied (the other state_dict
/// names of a tied parameter, which `--save OUT.safetensors` writes too). False with a message.
bool addOnnxTemplate(plan::Plan &plan, const std::string &modelPath, const WeightStore &weights,
                     const std::set<std::string> &madeByMemc, std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_ONNXTEMPLATE_H
