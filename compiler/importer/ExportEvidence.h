//===- ExportEvidence.h - signs of a folded or renamed ONNX export -*- C++ -*-===//
//
// torch.onnx.export's defaults (eval mode, constant folding) rewrite the weights a user trains:
// nn.Linear weights become pre-transposed `onnx::MatMul_N` initializers and a tied
// embedding/head becomes two initializers holding the same values. ONNX cannot say what the
// module was; these are the traces it leaves, gathered so that memc can warn once. Likewise an
// embedding's padding row, which ONNX has no field for, and Dropout nodes a training-mode export
// keeps, which an inference program runs.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_EXPORTEVIDENCE_H
#define MEMC_COMPILER_IMPORTER_EXPORTEVIDENCE_H

#include <string>
#include <vector>

namespace onnx {
class GraphProto;
} // namespace onnx

namespace memc {

class WeightStore;

/// The warning's text when `graph` shows a folded or renamed export: floating initializers
/// named `onnx::*` that feed MatMul, Gemm or Conv, and initializers feeding a MatMul or Gemm that
/// hold the same values as (or the transpose of) one feeding a Gather, i.e. a broken tie. Other
/// `onnx::*` floating initializers (folded expressions, often of buffers) are listed alongside.
/// Empty when there is no such evidence; pairs whose weights cannot be read are no evidence.
std::string foldedExportWarning(const onnx::GraphProto &graph, const WeightStore &weights);

/// The warning's text when a float32 2-D table read by a Gather has exactly one all-zero row,
/// the padding row nn.Embedding(padding_idx=N) keeps, which a model without the helper's
/// memc.padding_idx cannot name. Empty otherwise.
std::string unrecordedPaddingWarning(const onnx::GraphProto &graph, const WeightStore &weights);

/// The warning's text for an inference program whose model keeps Dropout nodes in training
/// mode (`dropoutNodes`, their names): ONNX says they drop at inference too, and memc follows,
/// but a user who runs inference almost surely wants eval. Empty when there are none.
std::string trainingModeDropoutWarning(const std::vector<std::string> &dropoutNodes);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_EXPORTEVIDENCE_H
