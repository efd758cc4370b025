//===- LoopUnroller.h - ONNX Loop with a constant trip count, unrolled -*- C++ -*-===//
//
// memc's shapes are static, so a Loop can only be imported where its trip count is known at
// import: the body is then imported once per iteration, with the iteration number a host
// constant. nn.EmbeddingBag exports this way (a Loop over the bags whose trip count is a folded
// Shape -> Gather), and so may any loop over a static dimension.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_LOOPUNROLLER_H
#define MEMC_COMPILER_IMPORTER_LOOPUNROLLER_H

#include "compiler/importer/NodeImporter.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace memc {

/// The most iterations memc unrolls: beyond this the IR (one copy of the body per iteration)
/// would be larger than any model it imports today, so a bigger loop is refused by name.
constexpr int64_t kMaxUnrolledIterations = 4096;

/// Imports one node of a body graph as the graph walk imports top-level nodes.
using BodyNodeImport =
    llvm::function_ref<mlir::LogicalResult(const onnx::NodeProto &node, mlir::Location loc)>;

/// Why `loop` (a Loop node) cannot be unrolled whatever its inputs' values, or "" if it may be:
/// no trip count, or a body that is not one graph. Checked before import, so that such a loop
/// is named with the other unsupported nodes.
std::string staticLoopRefusal(const onnx::NodeProto &loop);

/// Unrolls `loop`: imports its body once per iteration through `importBodyNode` and defines
/// the Loop's outputs (the loop-carried values after the last iteration, then each scan output
/// stacked along a new axis 0). Errors name the Loop where the trip count or the condition is
/// not known at import.
mlir::LogicalResult unrollLoop(NodeImporter &loop, ImportScope &scope,
                               BodyNodeImport importBodyNode);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_LOOPUNROLLER_H
