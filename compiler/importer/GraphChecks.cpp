//===- GraphChecks.cpp - what onnx.checker refuses about a graph's structure ---===//
#include "compiler/importer/GraphChecks.h"

#include <unordered_map>
#include <unordered_set>

namespace memc {

bool checkGraphStructure(const onnx::GraphProto &graph, GraphStructureError &error) {
  auto fail = [&](int node, std::string message) {
    error = {node, std::move(message)};
    return false;
  };
  std::unordered_set<std::string> outputs;
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!outputs.insert(output.name()).second)
      return fail(-1, "graph output '" + output.name() + "' is listed twice");

  // Static single assignment: every value has one writer. Before IR version 4 initializers
  // were listed as graph inputs too, so a name may be both.
  std::unordered_map<std::string, std::string> writer;
  for (const onnx::ValueInfoProto &input : graph.input())
    writer.try_emplace(input.name(), "is a graph input");
  for (const onnx::TensorProto &initializer : graph.initializer())
    writer.try_emplace(initializer.name(), "is an initializer");
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::unordered_set<std::string> attributes;
    for (const onnx::AttributeProto &attribute : node.attribute())
      if (!attributes.insert(attribute.name()).second)
        return fail(i, node.op_type() + ": attribute '" + attribute.name() + "' is given twice");
    std::string name = node.name().empty() ? "#" + std::to_string(i) : "'" + node.name() + "'";
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      auto [existing, fresh] = writer.try_emplace(output, "is written by node " + name);
      if (!fresh)
        return fail(i, node.op_type() + ": output '" + output + "' " + existing->second +
                           " already (each value must have one writer)");
    }
  }
  return true;
}

} // namespace memc
