//===- OnnxGraphBuilder.h - building an ONNX graph the way torch names it --===//
//
// A small layer over onnx::ModelProto for writing models by hand. It names nodes and initializers
// after the PyTorch module being emitted, as torch.onnx.export does, and places every initializer in
// the one external-data file:
//
//   OnnxGraphBuilder b("gpt2", "model.onnx.data");
//   OnnxGraphBuilder::Module transformer(b, "transformer"), block(b, "h.0");
//   std::string w = b.parameter("weight", {768, 2304}, WeightInit::normal(0.02f));
//   std::string y = b.op("MatMul", {x, w});
//   // node "/transformer/h.0/MatMul", output "/transformer/h.0/MatMul_output_0",
//   // initializer "transformer.h.0.weight" with external_data {location, offset, length}
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_BENCH_ZOO_ONNXGRAPHBUILDER_H
#define MEMC_BENCH_ZOO_ONNXGRAPHBUILDER_H

#include "ExternalDataFile.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace memc::zoo {

using Shape = std::vector<int64_t>;

/// A dimension of a graph input or output: a size, or the name of a symbolic one (dim_param).
struct GraphDim {
  GraphDim(int64_t size) : size(size) {}
  GraphDim(const char *symbol) : symbol(symbol) {}
  int64_t size = 0;
  std::string symbol; ///< Empty for a sized dimension.
};
using GraphShape = std::vector<GraphDim>;

onnx::AttributeProto attrInt(const std::string &name, int64_t value);
onnx::AttributeProto attrInts(const std::string &name, const std::vector<int64_t> &values);
onnx::AttributeProto attrFloat(const std::string &name, float value);
/// A one-element float32 tensor [1], as torch writes ConstantOfShape's `value` for torch.full.
onnx::AttributeProto attrFloatTensor(const std::string &name, float value);

class OnnxGraphBuilder {
public:
  /// `dataLocation` is the external-data file's path relative to the model file.
  OnnxGraphBuilder(const std::string &graphName, std::string dataLocation);

  /// While alive, names nodes and parameters as inside the PyTorch submodule `name`: Module "h.0"
  /// within Module "transformer" gives nodes "/transformer/h.0/<Op>" and parameters
  /// "transformer.h.0.<local>".
  class Module {
  public:
    Module(OnnxGraphBuilder &builder, const std::string &name);
    ~Module();
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;

  private:
    OnnxGraphBuilder &builder;
  };

  std::string input(const std::string &name, int32_t elemType, const GraphShape &shape);
  /// Makes `value` the graph output `name`, renaming the producing node's output as torch does with
  /// output_names.
  void output(const std::string &value, const std::string &name, int32_t elemType,
              const GraphShape &shape);

  /// Appends a node with one output and returns that output's name.
  std::string op(const std::string &opType, const std::vector<std::string> &inputs,
                 const std::vector<onnx::AttributeProto> &attrs = {});
  std::vector<std::string> opN(const std::string &opType, const std::vector<std::string> &inputs,
                               int numOutputs, const std::vector<onnx::AttributeProto> &attrs = {});

  /// Constant nodes, as torch emits for Python scalars and static shapes.
  std::string constantFloat(float value); ///< 0-d float32.
  std::string constantInt64(int64_t value); ///< 0-d int64, as torch writes an index or Trilu's k.
  std::string constantInt64s(const std::vector<int64_t> &values); ///< 1-d int64.

  /// A trainable float32 initializer named "<module path>.<localName>".
  std::string parameter(const std::string &localName, const Shape &shape, WeightInit init);
  /// A non-trainable initializer (a registered buffer in PyTorch terms).
  std::string buffer(const std::string &localName, int32_t elemType, const Shape &shape,
                     WeightInit init);

  /// Trainable elements, each initializer counted once however many nodes use it.
  uint64_t parameterCount() const { return numParameters; }
  uint64_t bufferElementCount() const { return numBufferElements; }
  const std::vector<ExternalTensor> &externalTensors() const { return tensors; }
  uint64_t externalDataSize() const { return dataSize; }
  onnx::ModelProto &model() { return modelProto; }

private:
  std::string uniqueNodeName(const std::string &opType);
  std::string qualifiedName(const std::string &localName) const;
  std::string initializer(const std::string &name, int32_t elemType, const Shape &shape,
                          WeightInit init, bool trainable);

  onnx::ModelProto modelProto;
  onnx::GraphProto *graph;
  std::string dataLocation;
  std::vector<std::string> modules;
  std::map<std::string, int> nodeNameUses;
  std::vector<ExternalTensor> tensors;
  std::set<std::string> initializerNames;
  uint64_t dataSize = 0;
  uint64_t numParameters = 0;
  uint64_t numBufferElements = 0;
};

} // namespace memc::zoo

#endif // MEMC_BENCH_ZOO_ONNXGRAPHBUILDER_H
