//===- ProgramWriter.h - plan + weights -> one executable -------*- C++ -*-===//
#ifndef MEMC_COMPILER_LOWERING_PROGRAMWRITER_H
#define MEMC_COMPILER_LOWERING_PROGRAMWRITER_H

#include "runtime/plan/Plan.pb.h"

#include <string>

namespace memc {

class WeightStore;

/// The plan's weights file (safetensors): the initial values of every parameter binding's
/// source tensor, read from the model through `weights`, each stored once under its name (the
/// runtime initializes deduplicated parameters from their shared source).
bool serializeWeights(const plan::Plan &plan, const WeightStore &weights, std::string &out,
                      std::string &error);

/// Writes the executable `outPath`: the prebuilt runner at `runnerPath` with the serialized
/// plan and its weights appended (the runtime's bundle format).
bool writeProgram(const plan::Plan &plan, const WeightStore &weights,
                  const std::string &runnerPath, const std::string &outPath, std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_LOWERING_PROGRAMWRITER_H
