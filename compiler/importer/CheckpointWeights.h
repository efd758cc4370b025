//===- CheckpointWeights.h - parameters from a Hugging Face checkpoint -*- C++ -*-===//
//
// `--weights-from DIR_OR_FILE` binds a model's parameters and buffers by state_dict name to the
// tensors of a Hugging Face checkpoint: DIR/model.safetensors, or a sharded checkpoint's
// DIR/model.safetensors.index.json (its weight_map names each tensor's file), or either file
// named directly. So the ONNX file may be exported with placeholder weights. Each bound tensor's
// store entry points at its bytes in the checkpoint (f32, f16 or bf16; the program writer
// converts to the plan's type, one tensor at a time); nothing is read while binding. A
// parameter the exporter deduplicated (memc.param_source) gets its own entry.
//
// Strict, as load_state_dict(strict=True): a checkpoint tensor that names no parameter or buffer,
// a parameter the checkpoint lacks, or another shape is an error naming it. Buffers the
// checkpoint lacks (non-persistent ones: RoPE tables, causal masks) keep the model's values.
// `--weights-from-map MAP.json`, {"checkpoint name": "model name" or null}, renames tensors of a
// module wrapped differently, or drops them (null).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_CHECKPOINTWEIGHTS_H
#define MEMC_COMPILER_IMPORTER_CHECKPOINTWEIGHTS_H

#include "compiler/importer/WeightStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace memc {

/// Rebinds the store entries of `forward`'s parameters and buffers (their memc.param names) to
/// the checkpoint at `path`, renamed by the map at `mapPath` (empty: none). False with a message.
bool bindCheckpointWeights(mlir::func::FuncOp forward, const std::string &path,
                           const std::string &mapPath, WeightStore &weights, std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_CHECKPOINTWEIGHTS_H
