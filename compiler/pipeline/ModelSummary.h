//===- ModelSummary.h - what an imported model holds ------------*- C++ -*-===//
//
// What `memc MODEL.onnx` tells the user after import, read off the IR: its memc ops, its
// parameters and their size, the other persistent buffers, and the graph's inputs and outputs
// with their types.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_PIPELINE_MODELSUMMARY_H
#define MEMC_COMPILER_PIPELINE_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memc {

struct ModelSummary {
  int64_t ops = 0;
  int64_t parameters = 0, parameterElements = 0, parameterBytes = 0;
  /// Persistent arguments that are not parameters (BatchNorm statistics, masks).
  int64_t buffers = 0;
  /// "NAME TYPE" of each graph input and output, e.g. "input_ids i64[2x128]".
  std::vector<std::string> inputs, outputs;
};

ModelSummary summarizeModel(mlir::ModuleOp module);

} // namespace memc

#endif // MEMC_COMPILER_PIPELINE_MODELSUMMARY_H
