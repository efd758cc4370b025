//===- OnnxImporter.h - ONNX model -> memc IR -------------------*- C++ -*-===//
//
// Imports an ONNX ModelProto as `func.func @forward` in the memc dialect: graph inputs, then one
// argument per parameter and buffer (weights stay in their files, see WeightStore), statically
// shaped ops in canonical form, shape subgraphs folded away. Errors are emitted through the
// MLIRContext's diagnostic engine; all problems of one kind (e.g. every unsupported op) are
// reported together.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_ONNXIMPORTER_H
#define MEMC_COMPILER_IMPORTER_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace memc {

class WeightStore;

struct ImportOptions {
  /// Static shapes for graph inputs whose ONNX shapes have symbolic dimensions
  /// (`--input-shape NAME=4x128`).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  std::string functionName = "forward";
  /// Warn when the model shows a folded or renamed export or an embedding padding row ONNX
  /// cannot record (ExportEvidence.h): for training, where it decides what trains.
  bool warnAboutExportEvidence = false;
  /// With warnAboutExportEvidence: a folded export (foldedExportWarning) is a warning, not an
  /// error (`--accept-folded-export`); it would train other weights than the module's.
  bool acceptFoldedExport = false;
  /// Warn when Dropout nodes run in training mode: for inference, which they make random.
  bool warnAboutTrainingModeDropout = false;
  /// `--weights-from`: a Hugging Face checkpoint the parameters are bound to by name, and
  /// `--weights-from-map`'s renames (CheckpointWeights.h); empty: the model's own initializers.
  std::string weightsFrom, weightsFromMap;
  /// `--micro-batch N` and `--seq-len T`: axes 0 and 1 of every graph input where they are
  /// symbolic (0: not set).
  int64_t batchSize = 0, sequenceLength = 0;
};

/// On the imported module when a graph input's batch (axis 0) is symbolic, so --micro-batch
/// applies.
inline constexpr llvm::StringLiteral kSymbolicBatchAttr = "memc.symbolic_batch";

/// Adds `--input-shape` text `NAME=4x128` to `options.inputShapes`; false with a message for
/// malformed text, a dimension that is not positive, or more elements than one tensor may have.
bool addInputShape(llvm::StringRef text, ImportOptions &options, std::string &error);

/// Reads the model at `modelPath` and imports it. Returns null after emitting errors. When
/// `weights` is given, it receives the index of the model's initializers, from which the
/// parameters' data can be read later.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  const std::string &modelPath,
                                                  const ImportOptions &options,
                                                  WeightStore *weights = nullptr);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_ONNXIMPORTER_H
