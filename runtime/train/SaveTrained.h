//===- SaveTrained.h - the trained weights a run saves ----------*- C++ -*-===//
//
// --save writes the trained parameters and buffers: for a path ending in ".onnx", the source
// model (the program's ONNX template) with the trained weights in its own types; otherwise a
// safetensors file that load_state_dict reads (tied weights under each of their names).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_TRAIN_SAVETRAINED_H
#define MEMC_RUNTIME_TRAIN_SAVETRAINED_H

#include "runtime/io/HostArray.h"

#include <functional>
#include <string>
#include <vector>

namespace memc::plan {
class Training;
} // namespace memc::plan

namespace memc::runtime {

struct LoadedPlan;

/// Before the first step: the save path can be written, and an ONNX save has what it needs.
bool checkSavePath(const plan::Training &training, const LoadedPlan &plan, const std::string &path,
                   std::string &error);

/// The files --save `path` may write: the file itself and, for an ONNX model too large for one
/// protobuf, its external data.
std::vector<std::string> filesSavedTo(const std::string &path);

/// Saves `parameters` (Executor::readWholeParameters' arrays, in the plan's binding order, which
/// an ONNX save may narrow to the model's 16-bit types) to `path`; a `note` says when 16-bit
/// parameters are saved as their f32 master weights.
bool saveParameters(NamedArrays &parameters, const LoadedPlan &plan,
                    const plan::Training &training, const std::string &path,
                    const std::function<void(const std::string &)> &note, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_TRAIN_SAVETRAINED_H
