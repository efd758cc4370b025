//===- OnnxTemplate.cpp - the model a training program saves --------------===//
#include "compiler/lowering/OnnxTemplate.h"
#include "compiler/importer/ExportMetadata.h"
#include "compiler/importer/OnnxTypes.h"
#include "compiler/importer/WeightStore.h"
#include "runtime/io/Files.h"
#include "runtime/plan/PlanVocabulary.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <set>
#include <unistd.h>

namespace memc {
namespace {

bool isOnnxOp(const onnx::NodeProto &node, const char *opType) {
  return node.op_type() == opType && isDefaultDomain(node.domain());
}

bool parseModel(const std::string &path, onnx::ModelProto &model, std::string &error) {
  int fd = runtime::openRegularFileForReading(path, error);
  if (fd < 0)
    return false;
  bool parsed;
  {
    google::protobuf::io::FileInputStream stream(fd);
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT32_MAX);
    parsed = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!parsed)
    error = "'" + path + "' no longer parses as an ONNX model";
  return parsed;
}

/// The initializers the runtime writes: one per parameter and buffer binding, typed and shaped
/// as the model declares the tensor that initialized it; none for the parameters memc made.
bool listInitializers(plan::Plan &plan, const WeightStore &weights,
                      const std::set<std::string> &madeByMemc, std::string &error) {
  plan::Training *training = plan.mutable_training();
  for (const plan::Binding &binding : plan.parameters()) {
    if (!plan::bindingKindInfo(binding.kind()).modelWeight || madeByMemc.count(binding.name()))
      continue;
    const std::string &source = binding.source().empty() ? binding.name() : binding.source();
    const StoredTensor *stored = weights.find(source);
    if (!stored) {
      error = "parameter '" + binding.name() + "': the model has no initializer '" + source + "'";
      return false;
    }
    plan::OnnxInitializer *initializer = training->add_onnx_initializers();
    initializer->set_name(binding.name());
    initializer->set_data_type(stored->modelDataType);
    initializer->mutable_dims()->Add(stored->shape.begin(), stored->shape.end());
  }
  return true;
}

/// The other names of tied parameters (memc.tied), which `--save OUT.safetensors` writes too.
bool listSavedAliases(plan::Plan &plan, const onnx::ModelProto &model, std::string &error) {
  std::optional<ExportMetadata> metadata;
  if (!readExportMetadata(model, metadata, error))
    return false;
  if (!metadata)
    return true;
  std::set<std::string> saved;
  for (const plan::Binding &binding : plan.parameters())
    if (plan::bindingKindInfo(binding.kind()).modelWeight)
      saved.insert(binding.name());
  for (const std::vector<std::string> &group : metadata->tied) {
    if (!saved.count(group.front()))
      continue; // not in the plan (unused by the step)
    for (size_t i = 1; i < group.size(); ++i) {
      if (!saved.insert(group[i]).second) {
        error = "memc.tied names '" + group[i] + "' twice or as a saved tensor of its own";
        return false;
      }
      plan::SavedAlias *alias = plan.mutable_training()->add_saved_aliases();
      alias->set_name(group.front());
      alias->set_alias(group[i]);
    }
  }
  return true;
}

/// Removes the initializers the runtime writes; reads in the external data of those that stay.
bool stripInitializers(onnx::GraphProto &graph, const std::set<std::string> &written,
                       const WeightStore &weights, std::string &error) {
  auto *initializers = graph.mutable_initializer();
  initializers->erase(std::remove_if(initializers->begin(), initializers->end(),
                                     [&](const onnx::TensorProto &tensor) {
                                       return written.count(tensor.name()) != 0;
                                     }),
                      initializers->end());
  for (onnx::TensorProto &tensor : *initializers) {
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    const StoredTensor *stored = weights.find(tensor.name());
    if (!stored) {
      error = "initializer '" + tensor.name() + "' is not in the weight index";
      return false;
    }
    std::vector<char> bytes;
    if (!weights.read(*stored, bytes, error))
      return false;
    tensor.clear_external_data();
    tensor.clear_data_location();
    tensor.set_raw_data(bytes.data(), bytes.size());
  }
  return true;
}

/// Removes the Identity nodes that recreate a written initializer from another one; nothing
/// else may produce a written name.
bool removeRecreatingIdentities(onnx::GraphProto &graph, const std::set<std::string> &written,
                                std::string &error) {
  auto *nodes = graph.mutable_node();
  nodes->erase(std::remove_if(nodes->begin(), nodes->end(),
                              [&](const onnx::NodeProto &node) {
                                return isOnnxOp(node, "Identity") && node.output_size() == 1 &&
                                       written.count(node.output(0)) != 0;
                              }),
               nodes->end());
  for (const onnx::NodeProto &node : *nodes)
    for (const std::string &output : node.output())
      if (written.count(output)) {
        error = "node '" + node.name() + "' (" + node.op_type() + ") computes '" + output +
                "', which memc trains as a parameter";
        return false;
      }
  return true;
}

/// The model as inference sees it: a training-mode BatchNormalization normalizes with its
/// running statistics (whose trained values the runtime writes as initializers) and a Dropout
/// passes its input through, as module.eval() would. What the training form adds goes: the
/// training_mode attribute and the updated-statistics outputs of BatchNormalization (which
/// nothing may read), and the training_mode input of Dropout. Everything else is unchanged.
bool switchToInferenceForm(onnx::GraphProto &graph, std::string &error) {
  std::set<std::string> read;
  for (const onnx::NodeProto &node : graph.node())
    read.insert(node.input().begin(), node.input().end());
  for (const onnx::ValueInfoProto &output : graph.output())
    read.insert(output.name());
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    if (isOnnxOp(node, "BatchNormalization")) {
      auto *attributes = node.mutable_attribute();
      attributes->erase(std::remove_if(attributes->begin(), attributes->end(),
                                       [](const onnx::AttributeProto &attribute) {
                                         return attribute.name() == "training_mode";
                                       }),
                        attributes->end());
      for (int i = 1; i < node.output_size(); ++i)
        if (!node.output(i).empty() && read.count(node.output(i))) {
          error = "BatchNormalization '" + node.name() + "' has its updated statistic '" +
                  node.output(i) + "' read by the model, which an inference model cannot do";
          return false;
        }
      while (node.output_size() > 1)
        node.mutable_output()->RemoveLast();
    } else if (isOnnxOp(node, "Dropout")) {
      while (node.input_size() > 2)
        node.mutable_input()->RemoveLast();
    }
  }
  return true;
}

/// Before IR version 4 every initializer is also a graph input: declare the recreated ones.
void declareAsInputs(onnx::GraphProto &graph, const plan::Training &training) {
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto &input : graph.input())
    inputs.insert(input.name());
  for (const plan::OnnxInitializer &initializer : training.onnx_initializers()) {
    if (inputs.count(initializer.name()))
      continue;
    onnx::ValueInfoProto *input = graph.add_input();
    input->set_name(initializer.name());
    onnx::TypeProto::Tensor *type = input->mutable_type()->mutable_tensor_type();
    type->set_elem_type(initializer.data_type());
    for (int64_t dim : initializer.dims())
      type->mutable_shape()->add_dim()->set_dim_value(dim);
  }
}

} // namespace

bool addOnnxTemplate(plan::Plan &plan, const std::string &modelPath, const WeightStore &weights,
                     const std::set<std::string> &madeByMemc, std::string &error) {
  onnx::ModelProto model;
  if (!parseModel(modelPath, model, error) || !listSavedAliases(plan, model, error) ||
      !listInitializers(plan, weights, madeByMemc, error))
    return false;
  const plan::Training &training = plan.training();
  std::set<std::string> written;
  for (const plan::OnnxInitializer &initializer : training.onnx_initializers())
    written.insert(initializer.name());
  onnx::GraphProto &graph = *model.mutable_graph();
  if (!stripInitializers(graph, written, weights, error) ||
      !removeRecreatingIdentities(graph, written, error) || !switchToInferenceForm(graph, error))
    return false;
  if (model.ir_version() < 4)
    declareAsInputs(graph, training);
  if (model.ByteSizeLong() > INT32_MAX) {
    error = "the model without its trained initializers is still larger than 2 GiB";
    return false;
  }
  if (!model.SerializeToString(plan.mutable_training()->mutable_onnx_template())) {
    error = "cannot serialize the ONNX template";
    return false;
  }
  return true;
}

} // namespace memc
