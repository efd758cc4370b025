//===- GraphChecks.h - what onnx.checker refuses about a graph's structure -*- C++ -*-===//
//
// A graph memc would otherwise import with a silent choice: a graph output listed twice (the
// program then fails binding it), a value two nodes write (the later would win), an attribute
// given twice (the first would win). onnx.checker refuses all three; so does memc, before any
// node is imported, naming the node.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_GRAPHCHECKS_H
#define MEMC_COMPILER_IMPORTER_GRAPHCHECKS_H

#include <onnx/onnx_pb.h>

#include <string>

namespace memc {

struct GraphStructureError {
  /// The node at fault, or -1 for the graph's own lists (outputs).
  int node = -1;
  std::string message;
};

/// The first structural error of `graph`, if any: false with it in `error`.
bool checkGraphStructure(const onnx::GraphProto &graph, GraphStructureError &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_GRAPHCHECKS_H
