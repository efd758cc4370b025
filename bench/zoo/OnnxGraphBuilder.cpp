//===- OnnxGraphBuilder.cpp -----------------------------------------------===//

#include "OnnxGraphBuilder.h"

#include "kernels/DTypeTable.h"

#include <cstdio>
#include <cstdlib>

namespace memc::zoo {
namespace {

/// A broken builder call is a bug in a model file, not a user error: stop loudly (no exceptions here,
/// the tree builds with -fno-exceptions).
[[noreturn]] void fatal(const std::string &message) {
  std::fprintf(stderr, "memc-zoo: internal error: %s\n", message.c_str());
  std::abort();
}

uint64_t elementSize(int32_t elemType) {
  const kernels::DTypeInfo *row = kernels::findOnnxDType(elemType);
  if (!row)
    fatal("unsupported initializer element type " + std::to_string(elemType));
  return kernels::dtypeSize(row->dtype);
}

/// The most data one model may hold: offsets and lengths stay exact in 64 bits with room to align.
constexpr uint64_t kMaxDataBytes = uint64_t(1) << 62;

/// A model too large to describe: the options' limits keep the published models far from this, so
/// it is the user's sizes, said as an error (the files are not written yet).
[[noreturn]] void tooLarge(const std::string &name) {
  std::fprintf(stderr,
               "memc-zoo: error: initializer '%s' would exceed 2^62 bytes; use smaller sizes\n",
               name.c_str());
  std::exit(1);
}

uint64_t byteCount(const std::string &name, const Shape &shape, uint64_t elementBytes) {
  uint64_t count = elementBytes;
  for (int64_t dim : shape) {
    if (dim <= 0)
      fatal("initializer dimensions must be positive");
    if (__builtin_mul_overflow(count, uint64_t(dim), &count) || count > kMaxDataBytes)
      tooLarge(name);
  }
  return count;
}

void setTensorType(onnx::ValueInfoProto &value, int32_t elemType, const GraphShape &shape) {
  onnx::TypeProto_Tensor *tensorType = value.mutable_type()->mutable_tensor_type();
  tensorType->set_elem_type(elemType);
  onnx::TensorShapeProto *shapeProto = tensorType->mutable_shape();
  for (const GraphDim &dim : shape) {
    onnx::TensorShapeProto::Dimension *written = shapeProto->add_dim();
    if (dim.symbol.empty())
      written->set_dim_value(dim.size);
    else
      written->set_dim_param(dim.symbol);
  }
}

void addExternalDataEntry(onnx::TensorProto &tensor, const std::string &key,
                          const std::string &value) {
  onnx::StringStringEntryProto *entry = tensor.add_external_data();
  entry->set_key(key);
  entry->set_value(value);
}

} // namespace

onnx::AttributeProto attrInt(const std::string &name, int64_t value) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INT);
  attr.set_i(value);
  return attr;
}

onnx::AttributeProto attrInts(const std::string &name, const std::vector<int64_t> &values) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values)
    attr.add_ints(value);
  return attr;
}

onnx::AttributeProto attrFloat(const std::string &name, float value) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::FLOAT);
  attr.set_f(value);
  return attr;
}

onnx::AttributeProto attrFloatTensor(const std::string &name, float value) {
  onnx::AttributeProto attr;
  attr.set_name(name);
  attr.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *tensor = attr.mutable_t();
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_dims(1);
  tensor->add_float_data(value);
  return attr;
}

OnnxGraphBuilder::OnnxGraphBuilder(const std::string &graphName, std::string dataLocation)
    : graph(modelProto.mutable_graph()), dataLocation(std::move(dataLocation)) {
  // IR version 8 is the one that goes with opset 17, which is what memc's importer targets.
  modelProto.set_ir_version(8);
  modelProto.set_producer_name("memc-zoo");
  onnx::OperatorSetIdProto *opset = modelProto.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  graph->set_name(graphName);
}

OnnxGraphBuilder::Module::Module(OnnxGraphBuilder &builder, const std::string &name)
    : builder(builder) {
  builder.modules.push_back(name);
}

OnnxGraphBuilder::Module::~Module() { builder.modules.pop_back(); }

std::string OnnxGraphBuilder::input(const std::string &name, int32_t elemType,
                                    const GraphShape &shape) {
  setTensorType(*graph->add_input(), elemType, shape);
  graph->mutable_input(graph->input_size() - 1)->set_name(name);
  return name;
}

void OnnxGraphBuilder::output(const std::string &value, const std::string &name, int32_t elemType,
                              const GraphShape &shape) {
  bool renamed = false;
  for (int n = graph->node_size() - 1; n >= 0 && !renamed; --n) {
    onnx::NodeProto *node = graph->mutable_node(n);
    for (int i = 0; i < node->output_size(); ++i)
      if (node->output(i) == value) {
        node->set_output(i, name);
        renamed = true;
      }
  }
  if (!renamed)
    fatal("graph output '" + value + "' is not produced by any node");
  onnx::ValueInfoProto *out = graph->add_output();
  out->set_name(name);
  setTensorType(*out, elemType, shape);
}

std::string OnnxGraphBuilder::uniqueNodeName(const std::string &opType) {
  std::string base;
  for (const std::string &module : modules)
    base += "/" + module;
  base += "/" + opType;
  int uses = nodeNameUses[base]++;
  return uses == 0 ? base : base + "_" + std::to_string(uses);
}

std::vector<std::string> OnnxGraphBuilder::opN(const std::string &opType,
                                               const std::vector<std::string> &inputs,
                                               int numOutputs,
                                               const std::vector<onnx::AttributeProto> &attrs) {
  onnx::NodeProto *node = graph->add_node();
  node->set_op_type(opType);
  node->set_name(uniqueNodeName(opType));
  for (const std::string &in : inputs)
    node->add_input(in);
  std::vector<std::string> outputs;
  for (int i = 0; i < numOutputs; ++i) {
    outputs.push_back(node->name() + "_output_" + std::to_string(i));
    node->add_output(outputs.back());
  }
  for (const onnx::AttributeProto &attr : attrs)
    *node->add_attribute() = attr;
  return outputs;
}

std::string OnnxGraphBuilder::op(const std::string &opType, const std::vector<std::string> &inputs,
                                 const std::vector<onnx::AttributeProto> &attrs) {
  return opN(opType, inputs, 1, attrs).front();
}

std::string OnnxGraphBuilder::constantFloat(float value) {
  onnx::AttributeProto attr;
  attr.set_name("value");
  attr.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *tensor = attr.mutable_t();
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  tensor->add_float_data(value);
  return op("Constant", {}, {attr});
}

std::string OnnxGraphBuilder::constantInt64(int64_t value) {
  onnx::AttributeProto attr;
  attr.set_name("value");
  attr.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *tensor = attr.mutable_t();
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_int64_data(value);
  return op("Constant", {}, {attr});
}

std::string OnnxGraphBuilder::constantInt64s(const std::vector<int64_t> &values) {
  onnx::AttributeProto attr;
  attr.set_name("value");
  attr.set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *tensor = attr.mutable_t();
  tensor->set_data_type(onnx::TensorProto::INT64);
  tensor->add_dims(int64_t(values.size()));
  for (int64_t value : values)
    tensor->add_int64_data(value);
  return op("Constant", {}, {attr});
}

std::string OnnxGraphBuilder::qualifiedName(const std::string &localName) const {
  std::string name;
  for (const std::string &module : modules)
    name += module + ".";
  return name + localName;
}

std::string OnnxGraphBuilder::parameter(const std::string &localName, const Shape &shape,
                                        WeightInit init) {
  return initializer(qualifiedName(localName), onnx::TensorProto::FLOAT, shape, std::move(init),
                     /*trainable=*/true);
}

std::string OnnxGraphBuilder::buffer(const std::string &localName, int32_t elemType,
                                     const Shape &shape, WeightInit init) {
  return initializer(qualifiedName(localName), elemType, shape, std::move(init),
                     /*trainable=*/false);
}

std::string OnnxGraphBuilder::initializer(const std::string &name, int32_t elemType,
                                          const Shape &shape, WeightInit init, bool trainable) {
  if (!initializerNames.insert(name).second)
    fatal("initializer '" + name + "' defined twice");
  const uint64_t byteSize = byteCount(name, shape, elementSize(elemType));
  const uint64_t count = byteSize / elementSize(elemType);
  if (init.kind == WeightInit::Kind::Bytes && init.bytes.size() != byteSize)
    fatal("initializer '" + name + "' has " + std::to_string(init.bytes.size()) +
          " bytes of data for " + std::to_string(byteSize) + " bytes of shape");
  if (elemType != onnx::TensorProto::FLOAT && init.kind != WeightInit::Kind::Bytes &&
      init.kind != WeightInit::Kind::Zeros)
    fatal("initializer '" + name + "': generated contents are float32 only");

  ExternalTensor entry;
  entry.name = name;
  entry.offset = (dataSize + kExternalDataAlignment - 1) / kExternalDataAlignment *
                 kExternalDataAlignment;
  entry.byteSize = byteSize;
  entry.trainable = trainable;
  entry.init = std::move(init);
  dataSize = entry.offset + byteSize;
  if (dataSize > kMaxDataBytes)
    tooLarge(name);
  (trainable ? numParameters : numBufferElements) += count;

  onnx::TensorProto *tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(elemType);
  for (int64_t dim : shape)
    tensor->add_dims(dim);
  tensor->set_data_location(onnx::TensorProto::EXTERNAL);
  addExternalDataEntry(*tensor, "location", dataLocation);
  addExternalDataEntry(*tensor, "offset", std::to_string(entry.offset));
  addExternalDataEntry(*tensor, "length", std::to_string(byteSize));

  tensors.push_back(std::move(entry));
  return name;
}

} // namespace memc::zoo
