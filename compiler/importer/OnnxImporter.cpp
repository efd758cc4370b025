//===- OnnxImporter.cpp - ONNX model -> memc IR ---------------------------===//
//
// The graph walk: load and validate the model, reject unsupported ops all at once, lay out
// @forward's arguments (graph inputs, then parameters and buffers), import each node through
// the builder table (OnnxOpBuilders.cpp) or fold it on the host, and return the graph outputs.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/OnnxImporter.h"
#include "compiler/importer/ExportEvidence.h"
#include "compiler/importer/ExportMetadata.h"
#include "compiler/importer/GraphChecks.h"
#include "compiler/importer/LoopUnroller.h"
#include "compiler/importer/NodeImporter.h"
#include "compiler/importer/NonFiniteScan.h"
#include "compiler/importer/OnnxTypes.h"
#include "compiler/importer/WeightStore.h"
#include "dialects/memc/ShapeInference.h"
#include "kernels/DTypeTable.h"
#include "kernels/ShapeRules.h"
#include "runtime/io/Files.h"
#include "runtime/plan/PlanVocabulary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cstring>
#include <unistd.h>

using namespace mlir;

namespace memc {
namespace {

// Opsets 1-5 differ from 6 in a few attribute forms the builders map (Reshape's shape, Cast's
// type name, Pad's paddings, Concat's default axis) and in consumed_inputs, an optimization hint
// without meaning here.
constexpr int64_t kMinOpset = 1, kMaxOpset = 18;
/// Integer initializers up to this size are shape-like data (reshape targets, axes) and are
/// imported as constants; larger ones (and all float ones) are buffers or parameters.
constexpr int64_t kMaxConstantInitializerElements = 64;

/// `graph` and every graph nested in its nodes' attributes (a Loop's body, at any depth): a body
/// reads outer-scope names, so uses of a name are counted over all of them.
std::vector<const onnx::GraphProto *> graphAndSubgraphs(const onnx::GraphProto &graph) {
  std::vector<const onnx::GraphProto *> graphs = {&graph};
  for (size_t i = 0; i < graphs.size(); ++i)
    for (const onnx::NodeProto &node : graphs[i]->node())
      for (const onnx::AttributeProto &attr : node.attribute()) {
        if (attr.has_g())
          graphs.push_back(&attr.g());
        for (const onnx::GraphProto &nested : attr.graphs())
          graphs.push_back(&nested);
      }
  return graphs;
}

/// Every node of `graph` and of its subgraphs.
std::vector<const onnx::NodeProto *> allNodes(const onnx::GraphProto &graph) {
  std::vector<const onnx::NodeProto *> nodes;
  for (const onnx::GraphProto *each : graphAndSubgraphs(graph))
    for (const onnx::NodeProto &node : each->node())
      nodes.push_back(&node);
  return nodes;
}

/// Names used only as BatchNormalization running statistics: buffers, whatever their type.
llvm::StringSet<> runningStatistics(const onnx::GraphProto &graph) {
  llvm::StringSet<> statistics, otherUses;
  for (const onnx::NodeProto *nodePointer : allNodes(graph)) {
    const onnx::NodeProto &node = *nodePointer;
    for (int i = 0; i < node.input_size(); ++i) {
      bool isStatistic = node.op_type() == "BatchNormalization" && (i == 3 || i == 4);
      (isStatistic ? statistics : otherUses).insert(node.input(i));
    }
  }
  for (const auto &name : otherUses)
    statistics.erase(name.getKey());
  return statistics;
}

/// Names used only as the weights of matrix products and convolutions, as Gather tables or
/// through Transpose (a head tied to its embedding): weights whatever their values, so the
/// inf/NaN scan skips them and importing a 7B model still reads no weight bytes.
llvm::StringSet<> usedOnlyAsWeights(const onnx::GraphProto &graph) {
  llvm::StringSet<> weights, otherUses;
  for (const onnx::NodeProto *node : allNodes(graph))
    for (int i = 0; i < node->input_size(); ++i) {
      const std::string &type = node->op_type();
      bool asWeight = type == "MatMul" || type == "Gemm" || type == "Conv" ||
                      type == "ConvTranspose" ||
                      ((type == "Gather" || type == "Transpose") && i == 0);
      (asWeight ? weights : otherUses).insert(node->input(i));
    }
  for (const auto &name : otherUses)
    weights.erase(name.getKey());
  return weights;
}

/// Whether `shape` could be a causal buffer: [..., N, N], leading dims 1, small enough to read.
bool mayBeCausalBuffer(ArrayRef<int64_t> shape) {
  if (shape.size() < 2 || shape.back() < 2 || shape[shape.size() - 2] != shape.back() ||
      numElements(shape) > kMaxHostElements)
    return false;
  return llvm::all_of(shape.drop_back(2), [](int64_t dim) { return dim == 1; });
}

/// Whether `tensor` (see mayBeCausalBuffer) is torch.tril(ones(N, N)): exactly 1 on and below
/// the diagonal and 0 above, so any cast of it keeps which keys it hides.
bool isLowerTriangleOfOnes(const HostTensor &tensor) {
  int64_t n = tensor.shape.back();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t index = i * n + j;
      double value = tensor.isFloating() ? tensor.floatAt(index) : double(tensor.intAt(index));
      if (value != (j <= i ? 1.0 : 0.0))
        return false;
    }
  return true;
}

/// Whether `tensor` (see mayBeCausalBuffer) is the additive causal mask
/// torch.full((N, N), -inf).triu(1): 0 on and below the diagonal and -inf above.
bool isAdditiveCausalMask(const HostTensor &tensor) {
  if (!tensor.isFloating())
    return false;
  int64_t n = tensor.shape.back();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double value = tensor.floatAt(i * n + j);
      if (j <= i ? value != 0.0 : !(std::isinf(value) && value < 0))
        return false;
    }
  return true;
}

/// A flag that sets one axis of every graph input where that axis is symbolic.
struct AxisBinding {
  int64_t axis, size;
  const char *flag, *what;
};

class OnnxImporter : public ImportScope {
public:
  OnnxImporter(MLIRContext &context, std::string modelPath, const ImportOptions &options)
      : context(context), modelPath(std::move(modelPath)), options(options), builder(&context) {}

  OwningOpRef<ModuleOp> run();
  WeightStore &weightStore() { return weights; }

  // ImportScope.
  ImportedTensor *lookup(const std::string &name) override;
  bool isUsed(const std::string &name) const override { return useCounts.count(name) != 0; }
  FailureOr<Value> materialize(ImportedTensor &tensor, std::optional<Type> elementType,
                               Location loc) override;
  FailureOr<HostTensor> readConstant(const std::string &name, Location loc) override;
  void define(const std::string &name, ImportedTensor tensor) override {
    tensors[name] = std::move(tensor);
  }
  void forget(const std::string &name) override { tensors.erase(name); }
  ImportBudget &budget() override { return importBudget; }
  std::optional<int64_t> paddingRow(const std::string &name) const override {
    if (!exportMetadata)
      return std::nullopt;
    auto row = exportMetadata->paddingRows.find(name);
    return row == exportMetadata->paddingRows.end() ? std::nullopt
                                                    : std::optional<int64_t>(row->second);
  }

private:
  LogicalResult loadModel();
  LogicalResult checkOpset();
  LogicalResult checkNodesSupported();
  LogicalResult checkStructure();
  LogicalResult checkDeclaredShapes(const onnx::NodeProto &node, Location loc);
  void countUses();
  LogicalResult createFunction();
  LogicalResult collectInputs(SmallVectorImpl<Type> &types, SmallVectorImpl<DictionaryAttr> &attrs,
                              SmallVectorImpl<std::string> &names);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &input);
  LogicalResult collectParameters(SmallVectorImpl<Type> &types,
                                  SmallVectorImpl<DictionaryAttr> &attrs,
                                  SmallVectorImpl<std::string> &names);
  LogicalResult importNodes();
  LogicalResult importGraphNode(const onnx::NodeProto &node, Location loc);
  LogicalResult importNode(const onnx::NodeProto &node, Location loc);
  bool foldsSmall(const onnx::NodeProto &node);
  LogicalResult foldOnHost(const onnx::NodeProto &node, Location loc);
  LogicalResult createReturn();
  Location modelLocation() { return FileLineColLoc::get(&context, modelPath, 0, 0); }
  Location nodeLocation(const onnx::NodeProto &node, int index);
  void warnAboutTrainingModeDropout();

  MLIRContext &context;
  std::string modelPath;
  const ImportOptions &options;
  onnx::ModelProto model;
  WeightStore weights;
  /// What python/memc_export.py recorded; none for a plain export.
  std::optional<ExportMetadata> exportMetadata;
  int64_t opset = 0;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  func::FuncOp function;
  llvm::StringMap<ImportedTensor> tensors;
  llvm::StringMap<unsigned> useCounts;
  /// The shapes value_info and the graph outputs state (checkDeclaredShapes).
  llvm::StringMap<std::vector<std::optional<int64_t>>> declaredShapes;
  /// Parameters recreated from another initializer by an Identity node (exporter dedup).
  llvm::StringSet<> identityParameters;
  ImportBudget importBudget;
  /// Whether a graph input's axis 0 is symbolic, and the inputs --micro-batch (axis 0) and
  /// --seq-len (axis 1) bound.
  bool symbolicBatch = false;
  int64_t boundInputs[2] = {0, 0};
};

OwningOpRef<ModuleOp> OnnxImporter::run() {
  if (failed(loadModel()) || failed(checkOpset()) || failed(checkStructure()) ||
      failed(checkNodesSupported()))
    return nullptr;
  countUses();
  module = ModuleOp::create(modelLocation());
  module->getOperation()->setAttr(kWeightsFileAttr, builder.getStringAttr(modelPath));
  if (failed(createFunction()) || failed(importNodes()) || failed(createReturn()))
    return nullptr;
  if (options.warnAboutExportEvidence)
    if (std::string evidence = foldedExportWarning(model.graph(), weights); !evidence.empty()) {
      if (!options.acceptFoldedExport) {
        emitError(modelLocation())
            << evidence << "; or pass --accept-folded-export to train it as it is";
        return nullptr;
      }
      emitWarning(modelLocation()) << evidence;
    }
  if (options.warnAboutExportEvidence && !exportMetadata)
    if (std::string warning = unrecordedPaddingWarning(model.graph(), weights); !warning.empty())
      emitWarning(modelLocation()) << warning;
  if (options.warnAboutTrainingModeDropout)
    warnAboutTrainingModeDropout();
  return std::move(module);
}

void OnnxImporter::warnAboutTrainingModeDropout() {
  // The importer makes a memc.dropout only of a Dropout that drops (training mode, ratio > 0),
  // located at the node's name.
  std::vector<std::string> dropoutNodes;
  function.walk([&](DropoutOp dropout) {
    auto name = dyn_cast<NameLoc>(dropout.getLoc());
    dropoutNodes.push_back("'" + (name ? name.getName().str() : "Dropout") + "'");
  });
  if (std::string warning = trainingModeDropoutWarning(dropoutNodes); !warning.empty())
    emitWarning(modelLocation()) << warning;
}

/// protobuf's own default, stated so the message can name it.
constexpr int kMaxProtobufNesting = 100;

LogicalResult OnnxImporter::loadModel() {
  std::string openError;
  int fd = runtime::openRegularFileForReading(modelPath, openError);
  if (fd < 0)
    return emitError(modelLocation()) << openError;
  bool parsed;
  {
    google::protobuf::io::FileInputStream stream(fd);
    google::protobuf::io::CodedInputStream coded(&stream);
    coded.SetTotalBytesLimit(INT32_MAX);
    // The parser recurses once per nested message: a bound keeps the stack safe (a Loop body
    // costs three levels, so about 33 Loops may nest).
    coded.SetRecursionLimit(kMaxProtobufNesting);
    parsed = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
    stream.Close();
  }
  if (!parsed)
    return emitError(modelLocation())
           << "not a valid ONNX model: the protobuf does not parse (the file is truncated, "
              "corrupted, nests messages more than "
           << kMaxProtobufNesting << " levels deep, or is not ONNX)";
  if (!model.has_graph() || model.ir_version() <= 0 || model.opset_import_size() == 0)
    return emitError(modelLocation())
           << "not an ONNX model: it has no graph, IR version or opset import";
  if (model.graph().output_size() == 0)
    return emitError(modelLocation()) << "the ONNX graph has no outputs";
  std::string error;
  if (!weights.index(model, modelPath, error) || !readExportMetadata(model, exportMetadata, error))
    return emitError(modelLocation()) << error;
  if (exportMetadata)
    for (const std::string &key : exportMetadata->unknownKeys)
      emitWarning(modelLocation()) << "metadata_props key '" << key
                                   << "' is not one memc's export helper writes (misspelled?); "
                                      "it is ignored";
  // The weight store reads data from the files when asked; the parsed copies are not needed.
  for (onnx::TensorProto &initializer : *model.mutable_graph()->mutable_initializer())
    initializer.clear_raw_data();
  return success();
}

LogicalResult OnnxImporter::checkOpset() {
  for (const onnx::OperatorSetIdProto &import : model.opset_import())
    if (isDefaultDomain(import.domain()))
      opset = import.version();
  if (opset >= kMinOpset && opset <= kMaxOpset)
    return success();
  return emitError(modelLocation())
         << "the model uses ONNX opset " << opset << "; memc imports opsets " << kMinOpset << " to "
         << kMaxOpset << " (export with torch.onnx.export(..., opset_version=17))";
}

LogicalResult OnnxImporter::checkNodesSupported() {
  // Op type -> names of the nodes using it, in first-seen order, for one complete report.
  llvm::MapVector<std::string, std::vector<std::string>, std::map<std::string, unsigned>>
      unsupported;
  const llvm::StringMap<OnnxOpBuilder> &builders = onnxOpBuilders();
  std::vector<const onnx::NodeProto *> nodes = allNodes(model.graph());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto &node = *nodes[i];
    std::string name = node.name().empty() ? "#" + std::to_string(i) : node.name();
    if (!isDefaultDomain(node.domain()))
      unsupported[node.domain() + "::" + node.op_type() + " (unknown domain '" + node.domain() +
                  "')"]
          .push_back(name);
    else if (node.op_type() == "Loop") {
      if (std::string why = staticLoopRefusal(node); !why.empty())
        unsupported["Loop (" + why + ")"].push_back(name);
    } else if (!builders.count(node.op_type()))
      unsupported[node.op_type()].push_back(name);
  }
  if (unsupported.empty())
    return success();
  InFlightDiagnostic diag = emitError(modelLocation());
  diag << unsupported.size() << " unsupported op type(s) at opset " << opset << ":";
  for (auto &[opType, nodes] : unsupported) {
    diag << "\n  " << opType << ": " << nodes.size() << " node(s): ";
    for (size_t i = 0; i < nodes.size() && i < 8; ++i)
      diag << (i ? ", " : "") << "'" << nodes[i] << "'";
    if (nodes.size() > 8)
      diag << ", ...";
  }
  return diag;
}

LogicalResult OnnxImporter::checkStructure() {
  GraphStructureError error;
  if (checkGraphStructure(model.graph(), error))
    return success();
  Location loc =
      error.node < 0 ? modelLocation() : nodeLocation(model.graph().node(error.node), error.node);
  return emitError(loc) << error.message;
}

/// The shape a value_info or graph output states, where it states one: each dim the number it
/// gives, or std::nullopt for a symbolic or unknown dim, which nothing can contradict.
std::optional<std::vector<std::optional<int64_t>>> declaredShape(const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape())
    return std::nullopt;
  std::vector<std::optional<int64_t>> dims;
  for (const onnx::TensorShapeProto::Dimension &dim : info.type().tensor_type().shape().dim())
    dims.push_back(dim.has_dim_value() ? std::optional<int64_t>(dim.dim_value()) : std::nullopt);
  return dims;
}

LogicalResult OnnxImporter::checkDeclaredShapes(const onnx::NodeProto &node, Location loc) {
  // What shape inference would refuse: a value's stated shape that contradicts what its node
  // computes (a rank, or a number against a number).
  for (const std::string &output : node.output()) {
    auto declared = declaredShapes.find(output);
    ImportedTensor *tensor = output.empty() ? nullptr : lookup(output);
    if (declared == declaredShapes.end() || !tensor)
      continue;
    if (!tensor->value && !tensor->constant)
      continue;
    SmallVector<int64_t> computed =
        tensor->value ? llvm::to_vector(cast<RankedTensorType>(tensor->value.getType()).getShape())
                      : llvm::to_vector(tensor->constant->shape);
    const std::vector<std::optional<int64_t>> &stated = declared->second;
    bool agrees = stated.size() == computed.size();
    for (size_t i = 0; agrees && i < stated.size(); ++i)
      agrees = !stated[i] || *stated[i] == computed[i];
    if (agrees)
      continue;
    std::string text;
    for (const std::optional<int64_t> &dim : stated)
      text += (text.empty() ? "" : ",") + (dim ? std::to_string(*dim) : std::string("?"));
    return emitError(loc) << node.op_type() << ": output '" << output << "' has shape "
                          << formatShape(computed) << ", but the model declares [" << text
                          << "] for it";
  }
  return success();
}

void OnnxImporter::countUses() {
  for (const onnx::GraphProto *graph : graphAndSubgraphs(model.graph())) {
    for (const onnx::NodeProto &node : graph->node())
      for (const std::string &input : node.input())
        if (!input.empty())
          ++useCounts[input];
    for (const onnx::ValueInfoProto &output : graph->output())
      ++useCounts[output.name()];
  }
}

LogicalResult OnnxImporter::createFunction() {
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
  if (failed(collectInputs(argTypes, argAttrs, argNames)) ||
      failed(collectParameters(argTypes, argAttrs, argNames)))
    return failure();
  builder.setInsertionPointToEnd(module->getBody());
  function = builder.create<func::FuncOp>(modelLocation(), options.functionName,
                                          builder.getFunctionType(argTypes, {}));
  function.setAllArgAttrs(argAttrs);
  if (symbolicBatch)
    (*module)->setAttr(kSymbolicBatchAttr, builder.getUnitAttr());
  Block *entry = function.addEntryBlock();
  for (auto [name, argument] : llvm::zip(argNames, entry->getArguments()))
    tensors[name] = ImportedTensor{argument, std::nullopt};
  builder.setInsertionPointToStart(entry);
  return success();
}

FailureOr<RankedTensorType> OnnxImporter::inputType(const onnx::ValueInfoProto &input) {
  const std::string &name = input.name();
  if (!input.type().has_tensor_type())
    return emitError(modelLocation()) << "graph input '" << name << "' is not a tensor";
  const onnx::TypeProto::Tensor &tensorType = input.type().tensor_type();
  Type elementType = elementTypeFor(&context, tensorType.elem_type());
  if (!elementType)
    return emitError(modelLocation())
           << "graph input '" << name << "' has element type "
           << onnxDataTypeName(tensorType.elem_type()) << ", which memc does not support";
  if (!tensorType.has_shape())
    return emitError(modelLocation())
           << "graph input '" << name << "' has no shape; give one with --input-shape " << name
           << "=DIMS";
  SmallVector<int64_t> shape;
  std::string written; // the ONNX shape, symbolic names included, for messages
  bool symbolic = false;
  for (const onnx::TensorShapeProto::Dimension &dim : tensorType.shape().dim()) {
    written += written.empty() ? "" : ",";
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      shape.push_back(dim.dim_value());
      written += std::to_string(dim.dim_value());
    } else {
      symbolic = true;
      shape.push_back(ShapedType::kDynamic);
      written += dim.has_dim_param() && !dim.dim_param().empty() ? dim.dim_param() : "?";
    }
  }
  auto joined = [](const std::vector<int64_t> &dims) {
    return llvm::join(llvm::map_range(dims, [](int64_t d) { return std::to_string(d); }), "x");
  };
  const std::vector<int64_t> *bound = nullptr;
  bool fromExample = false;
  const std::vector<int64_t> *example = exportMetadata && exportMetadata->exampleShapes.count(name)
                                            ? &exportMetadata->exampleShapes.at(name)
                                            : nullptr;
  // --micro-batch and --seq-len: axes 0 and 1 where they are symbolic; the input's other
  // symbolic dimensions as in the export's example.
  std::vector<int64_t> batched;
  symbolicBatch |= !shape.empty() && shape[0] == ShapedType::kDynamic;
  const AxisBinding bindings[] = {{0, options.batchSize, "--micro-batch", "batch"},
                                  {1, options.sequenceLength, "--seq-len", "sequence"}};
  for (const AxisBinding &binding : bindings) {
    if (!binding.size || int64_t(shape.size()) <= binding.axis ||
        shape[binding.axis] != ShapedType::kDynamic)
      continue;
    if (options.inputShapes.count(name))
      return emitError(modelLocation())
             << "--input-shape " << name << " and " << binding.flag << " both set the "
             << binding.what << " of graph input '" << name << "': give one of them";
    if (batched.empty())
      batched.assign(shape.begin(), shape.end());
    batched[binding.axis] = binding.size;
    ++boundInputs[binding.axis];
  }
  for (size_t i = 0; i < batched.size(); ++i)
    if (batched[i] == ShapedType::kDynamic) {
      if (!example || example->size() != batched.size())
        return emitError(modelLocation())
               << "graph input '" << name << "' [" << written << "] has symbolic dimension " << i
               << " that neither --micro-batch (axis 0) nor --seq-len (axis 1) binds; bind the "
                  "whole shape with --input-shape "
               << name << "=DIMS instead";
      batched[i] = (*example)[i];
    }
  if (!batched.empty())
    bound = &batched;
  else if (auto given = options.inputShapes.find(name); given != options.inputShapes.end())
    bound = &given->second;
  else if (!symbolic)
    return RankedTensorType::get(shape, elementType);
  else if (example) {
    bound = example;
    fromExample = true;
    emitRemark(modelLocation()) << "graph input '" << name << "' [" << written
                                << "] takes the shape of the export's example, " << joined(*bound)
                                << " (memc.example_shapes); --input-shape " << name
                                << "=DIMS binds another";
  } else
    return emitError(modelLocation())
           << "graph input '" << name << "' has symbolic shape [" << written
           << "]; bind it with --input-shape " << name << "=DIMS (e.g. 4x128)";
  const std::vector<int64_t> &dims = *bound;
  bool agrees = dims.size() == shape.size();
  for (size_t i = 0; agrees && i < dims.size(); ++i)
    agrees = dims[i] >= 0 && (shape[i] == ShapedType::kDynamic || shape[i] == dims[i]);
  if (!agrees)
    return emitError(modelLocation())
           << (fromExample ? "memc.example_shapes " : "--input-shape ") << name << "="
           << joined(dims) << " does not fit the model's shape [" << written << "]";
  return RankedTensorType::get(dims, elementType);
}

LogicalResult OnnxImporter::collectInputs(SmallVectorImpl<Type> &types,
                                          SmallVectorImpl<DictionaryAttr> &attrs,
                                          SmallVectorImpl<std::string> &names) {
  llvm::StringSet<> inputNames;
  bool failedAny = false;
  for (const onnx::ValueInfoProto &input : model.graph().input()) {
    // Before IR version 4, initializers were listed as inputs too.
    if (weights.find(input.name()))
      continue;
    if (!inputNames.insert(input.name()).second)
      return emitError(modelLocation()) << "graph input '" << input.name() << "' is declared twice";
    FailureOr<RankedTensorType> type = inputType(input);
    if (failed(type)) {
      failedAny = true; // report every input's problem, not only the first
      continue;
    }
    types.push_back(*type);
    attrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(kInputNameAttr, builder.getStringAttr(input.name()))));
    names.push_back(input.name());
  }
  if (options.batchSize && !boundInputs[0] && !failedAny) {
    emitError(modelLocation()) << "--micro-batch " << options.batchSize
                               << ": no graph input has a symbolic batch (axis 0); the model's "
                                  "batch is fixed at export (export it with a dynamic batch, as "
                                  "python/memc_export.py does by default)";
    failedAny = true;
  }
  if (options.sequenceLength && !boundInputs[1] && !failedAny) {
    emitError(modelLocation()) << "--seq-len " << options.sequenceLength
                               << ": no graph input has a symbolic sequence (axis 1); the "
                                  "model's sequence length is fixed at export";
    failedAny = true;
  }
  for (const auto &[name, dims] : options.inputShapes)
    if (!inputNames.contains(name)) {
      std::string known;
      for (const auto &entry : inputNames)
        known += (known.empty() ? "" : ", ") + entry.getKey().str();
      emitError(modelLocation()) << "--input-shape names '" << name
                                 << "', which is not a graph input (inputs: " << known << ")";
      failedAny = true;
    }
  return failure(failedAny);
}

LogicalResult OnnxImporter::collectParameters(SmallVectorImpl<Type> &types,
                                              SmallVectorImpl<DictionaryAttr> &attrs,
                                              SmallVectorImpl<std::string> &names) {
  llvm::StringSet<> statistics = runningStatistics(model.graph());
  llvm::StringSet<> weightsOnly = usedOnlyAsWeights(model.graph());
  llvm::StringMap<bool> nonFinite; // by stored name: holds an inf or a NaN
  // By stored name: the causal buffer's attribute, torch.tril(ones) (kLowerTriangularAttr) or
  // an additive -inf mask (kCausalAdditiveMaskAttr), or none.
  llvm::StringMap<StringRef> causalBuffers;
  // Weights are never read for this; what else has a causal buffer's shape is read once.
  auto causalBufferKind = [&](const StoredTensor &stored) -> FailureOr<StringRef> {
    if (weightsOnly.contains(stored.name) || !mayBeCausalBuffer(stored.shape))
      return StringRef();
    auto [known, fresh] = causalBuffers.try_emplace(stored.name, StringRef());
    if (fresh) {
      FailureOr<HostTensor> values = readConstant(stored.name, modelLocation());
      if (failed(values))
        return failure();
      if (isLowerTriangleOfOnes(*values))
        known->second = kLowerTriangularAttr;
      else if (isAdditiveCausalMask(*values))
        known->second = kCausalAdditiveMaskAttr;
    }
    return known->second;
  };
  // Only floating tensors can train; masks, ids and running statistics are buffers, and so are
  // tensors holding an inf or a NaN (additive -inf masks; weights are not scanned), which no
  // optimizer step could keep finite. Other float buffers ONNX cannot tell apart (RoPE tables,
  // 0/1 masks) keep their names for --freeze.
  auto trainableByGuess = [&](const StoredTensor &stored,
                              const std::string &name) -> FailureOr<bool> {
    if (!isFloatingOnnxType(stored.dataType) || statistics.contains(name))
      return false;
    if (weightsOnly.contains(name))
      return true;
    auto [scanned, fresh] = nonFinite.try_emplace(stored.name, false);
    std::string error;
    if (fresh && !holdsNonFiniteValue(weights, stored, scanned->second, error))
      return emitError(modelLocation()) << "cannot read " << error;
    return !scanned->second;
  };
  // The export helper's list is the module's requires_grad; a name recreated by an Identity
  // node trains like the initializer it copies (readExportMetadata refused non-float ones).
  auto trainableByMetadata = [&](const StoredTensor &stored) -> FailureOr<bool> {
    return exportMetadata->parameters.count(stored.name) != 0;
  };
  // `carriedOnly`: a buffer no op reads, kept only to be saved (see below).
  auto addParameter = [&](const StoredTensor &stored, const std::string &name,
                          bool carriedOnly = false) -> LogicalResult {
    Type elementType = elementTypeFor(&context, stored.dataType);
    if (!elementType)
      return emitError(modelLocation())
             << "initializer '" << stored.name << "' has element type "
             << onnxDataTypeName(stored.dataType) << ", which memc does not support";
    FailureOr<bool> trainable = carriedOnly      ? false
                                : exportMetadata ? trainableByMetadata(stored)
                                                 : trainableByGuess(stored, name);
    if (failed(trainable))
      return failure();
    auto kind = *trainable ? plan::KIND_PARAMETER : plan::KIND_BUFFER;
    SmallVector<NamedAttribute> attributes = {
        builder.getNamedAttr(kParamNameAttr, builder.getStringAttr(name)),
        builder.getNamedAttr(kParamKindAttr,
                             builder.getStringAttr(plan::bindingKindInfo(kind).name))};
    if (name != stored.name)
      attributes.push_back(
          builder.getNamedAttr(kParamSourceAttr, builder.getStringAttr(stored.name)));
    FailureOr<StringRef> causal = causalBufferKind(stored);
    if (failed(causal))
      return failure();
    if (!causal->empty())
      attributes.push_back(builder.getNamedAttr(*causal, builder.getUnitAttr()));
    types.push_back(RankedTensorType::get(stored.shape, elementType));
    attrs.push_back(builder.getDictionaryAttr(attributes));
    names.push_back(name);
    return success();
  };

  for (const StoredTensor &stored : weights.tensors()) {
    if (!isUsed(stored.name)) {
      // The export helper writes the state_dict entries the graph does not read (BatchNorm's
      // num_batches_tracked): buffers carried through checkpoints and --save, so that
      // load_state_dict(strict=True) takes what memc saves. In a plain export a dead
      // initializer is not part of the model.
      if (exportMetadata && failed(addParameter(stored, stored.name, /*carriedOnly=*/true)))
        return failure();
      continue;
    }
    bool shapeLike = !isFloatingOnnxType(stored.dataType) &&
                     numElements(stored.shape) <= kMaxConstantInitializerElements;
    if (shapeLike) {
      FailureOr<HostTensor> constant = readConstant(stored.name, modelLocation());
      if (failed(constant))
        return failure();
      tensors[stored.name] = ImportedTensor{nullptr, std::move(*constant)};
      continue;
    }
    if (failed(addParameter(stored, stored.name)))
      return failure();
  }

  // torch.onnx.export stores initializers with equal values once and recreates the other names
  // with Identity nodes. Each recreated name is a parameter of its own, initialized from the
  // stored one, so every layer keeps training on its own.
  llvm::StringMap<const StoredTensor *> sourceOf;
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (node.op_type() != "Identity" || !isDefaultDomain(node.domain()) || node.input_size() != 1 ||
        node.output_size() != 1 || node.output(0).empty())
      continue;
    const StoredTensor *source = weights.find(node.input(0));
    if (!source)
      source = sourceOf.lookup(node.input(0));
    if (!source || tensors.count(source->name) || weights.find(node.output(0)))
      continue; // folded constants stay constants
    sourceOf[node.output(0)] = source;
    identityParameters.insert(node.output(0));
    if (failed(addParameter(*source, node.output(0))))
      return failure();
  }
  return success();
}

Location OnnxImporter::nodeLocation(const onnx::NodeProto &node, int index) {
  std::string name = !node.name().empty()     ? node.name()
                     : node.output_size() > 0 ? node.op_type() + ":" + node.output(0)
                                              : node.op_type() + "#" + std::to_string(index);
  return NameLoc::get(builder.getStringAttr(name));
}

LogicalResult OnnxImporter::importNodes() {
  const onnx::GraphProto &graph = model.graph();
  for (const auto *infos : {&graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *infos)
      if (auto shape = declaredShape(info))
        declaredShapes[info.name()] = std::move(*shape);
  for (int i = 0; i < graph.node_size(); ++i)
    if (failed(importGraphNode(graph.node(i), nodeLocation(graph.node(i), i))))
      return failure();
  return success();
}

LogicalResult OnnxImporter::importGraphNode(const onnx::NodeProto &node, Location loc) {
  for (const std::string &input : node.input())
    if (!input.empty() && !tensors.count(input))
      return emitError(loc) << node.op_type() << ": input '" << input
                            << "' is not defined by an earlier node, a graph input or an "
                               "initializer (the graph must be topologically sorted)";
  if (node.op_type() == "Identity" && node.output_size() == 1 &&
      identityParameters.contains(node.output(0)))
    return success();
  if (failed(importNode(node, loc)) || failed(checkDeclaredShapes(node, loc)))
    return failure();
  for (const std::string &output : node.output())
    if (!output.empty() && isUsed(output) && !tensors.count(output))
      return emitError(loc) << node.op_type() << ": output '" << output
                            << "' is used but this op does not produce it in memc";
  return success();
}

/// Expand of constants folds only when its result is shape-sized (torch.onnx.export writes
/// repeat_interleave as Expands of constant shapes); a large one, a mask say, stays a broadcast
/// computed at run time instead of a constant carried in the program.
bool OnnxImporter::foldsSmall(const onnx::NodeProto &node) {
  if (node.op_type() != "Expand" || node.input_size() != 2)
    return true;
  const HostTensor &data = *tensors[node.input(0)].constant;
  const HostTensor &shape = *tensors[node.input(1)].constant;
  constexpr int64_t kShapeSized = 4096;
  // At least the result's elements: the data's times every target dimension above 1.
  int64_t count = std::max<int64_t>(1, data.numElements());
  for (int64_t d = 0; d < shape.numElements() && !shape.ints.empty(); ++d) {
    int64_t dim = shape.ints[shape.splat ? 0 : d];
    if (dim > 1 && count > kShapeSized / dim)
      return false;
    count *= std::max<int64_t>(1, dim);
  }
  return true;
}

LogicalResult OnnxImporter::importNode(const onnx::NodeProto &node, Location loc) {
  // Range and ConstantOfShape exist only on the host: read initializers they take as constants.
  if (node.op_type() == "Range" || node.op_type() == "ConstantOfShape")
    for (const std::string &input : node.input())
      if (ImportedTensor *tensor = lookup(input); tensor && !tensor->constant)
        if (FailureOr<HostTensor> value = readConstant(input, loc); succeeded(value))
          tensor->constant = std::move(*value);
  bool allConstant = node.input_size() > 0;
  for (const std::string &input : node.input())
    allConstant &= input.empty() || tensors[input].constant.has_value();
  if (allConstant && isHostEvaluable(node.op_type()) && foldsSmall(node))
    return foldOnHost(node, loc);
  NodeImporter importer(node, opset, builder, *this, loc);
  if (node.op_type() == "Loop")
    return unrollLoop(importer, *this, [&](const onnx::NodeProto &bodyNode, Location bodyLoc) {
      return importGraphNode(bodyNode, bodyLoc);
    });
  return onnxOpBuilders().lookup(node.op_type())(importer);
}

LogicalResult OnnxImporter::foldOnHost(const onnx::NodeProto &node, Location loc) {
  NodeImporter importer(node, opset, builder, *this, loc);
  HostAttributes attributes;
  for (const onnx::AttributeProto &attr : node.attribute()) {
    const std::string &name = attr.name();
    if (attr.type() == onnx::AttributeProto::INT) {
      if (name == "axis")
        attributes.axis = attr.i();
      else if (name == "to")
        attributes.to = attr.i();
      else if (name == "keepdims")
        attributes.keepdims = attr.i();
    } else if (attr.type() == onnx::AttributeProto::INTS) {
      std::vector<int64_t> values(attr.ints().begin(), attr.ints().end());
      if (name == "axes")
        attributes.axes = values;
      else if (name == "perm")
        attributes.perm = values;
      else if (name == "split")
        attributes.split = values;
    } else if (attr.type() == onnx::AttributeProto::TENSOR && name == "value") {
      std::string error;
      FailureOr<HostTensor> value = decodeTensorProto(attr.t(), error);
      if (failed(value))
        return importer.error(error);
      attributes.value = std::move(*value);
    }
  }
  attributes.outputCount = static_cast<size_t>(node.output_size());
  std::vector<const HostTensor *> inputs;
  for (const std::string &input : node.input())
    inputs.push_back(input.empty() ? nullptr : &*tensors[input].constant);
  std::vector<HostTensor> outputs;
  std::string error;
  if (!evaluateOnHost(node.op_type(), inputs, attributes, outputs, error))
    return importer.error(error);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].splat && !importBudget.spendFoldedElements(outputs[i].numElements(), error))
      return importer.error(error);
    importer.setOutputConstant(i, std::move(outputs[i]));
  }
  return success();
}

LogicalResult OnnxImporter::createReturn() {
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    ImportedTensor *tensor = lookup(output.name());
    if (!tensor)
      return emitError(modelLocation())
             << "graph output '" << output.name() << "' is not produced by any node";
    FailureOr<Value> value = materialize(*tensor, std::nullopt, modelLocation());
    if (failed(value))
      return failure();
    results.push_back(*value);
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(kOutputNameAttr, builder.getStringAttr(output.name()))));
  }
  builder.create<func::ReturnOp>(modelLocation(), results);
  function.setType(
      builder.getFunctionType(function.getArgumentTypes(), ValueRange(results).getTypes()));
  function.setAllResultAttrs(resultAttrs);
  return success();
}

ImportedTensor *OnnxImporter::lookup(const std::string &name) {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

/// A dense attribute holding a host tensor's values in `elementType`.
DenseElementsAttr toElementsAttr(const HostTensor &tensor, RankedTensorType type) {
  Type elementType = type.getElementType();
  int64_t count = tensor.splat ? 1 : tensor.numElements();
  // APInt/APFloat values, not an Attribute per element: a context uniques every attribute it
  // makes and keeps it, which made a 4M-element constant take seconds and gigabytes.
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> values;
    values.reserve(count);
    for (int64_t i = 0; i < count; ++i) {
      bool lost;
      APFloat converted(tensor.isFloating() ? tensor.floatAt(i) : double(tensor.intAt(i)));
      converted.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(converted);
    }
    return tensor.splat ? DenseElementsAttr::get(type, values[0])
                        : DenseElementsAttr::get(type, values);
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  values.reserve(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t value = tensor.intAt(i); // saturates floats, unlike a plain conversion
    if (width == 1)
      value = value != 0;
    values.push_back(APInt(width, value, /*isSigned=*/width > 1));
  }
  return tensor.splat ? DenseElementsAttr::get(type, values[0])
                      : DenseElementsAttr::get(type, values);
}

FailureOr<Value> OnnxImporter::materialize(ImportedTensor &tensor, std::optional<Type> elementType,
                                           Location loc) {
  if (tensor.value && (!elementType || getElementTypeOrSelf(tensor.value) == *elementType))
    return tensor.value;
  // A computed value cannot change type (only constants take their user's): the model combines
  // operands of different element types.
  if (!tensor.constant) {
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "operand types differ: " << getElementTypeOrSelf(tensor.value) << " where the op needs "
       << *elementType << " (" << tensor.value.getType() << ")";
    return emitError(loc) << message;
  }
  const HostTensor &constant = *tensor.constant;
  Type natural = elementTypeFor(&context, constant.dataType);
  // memc has no f64: double scalars that exporters write for constants become f32.
  if (!natural && constant.dataType == onnx::TensorProto::DOUBLE)
    natural = builder.getF32Type();
  Type type = elementType ? *elementType : natural;
  if (!type)
    return emitError(loc) << "a constant of type " << onnxDataTypeName(constant.dataType)
                          << " is used as data, and memc has no such element type";
  auto tensorType = RankedTensorType::get(constant.shape, type);
  Value value = builder.create<ConstantOp>(loc, toElementsAttr(constant, tensorType));
  if (type == natural)
    tensor.value = value;
  return value;
}

FailureOr<HostTensor> OnnxImporter::readConstant(const std::string &name, Location loc) {
  const StoredTensor *stored = weights.find(name);
  if (!stored)
    return failure();
  std::vector<char> bytes;
  std::string error;
  if (numElements(stored->shape) > kMaxHostElements || !weights.read(*stored, bytes, error))
    return emitError(loc) << "cannot read initializer '" << name << "': " << error;
  FailureOr<HostTensor> decoded = decodeRawTensor(stored->dataType, stored->shape, bytes, error);
  if (failed(decoded))
    return emitError(loc) << "initializer '" << name << "': " << error;
  return decoded;
}

} // namespace

OwningOpRef<ModuleOp> importOnnxModel(MLIRContext &context, const std::string &modelPath,
                                      const ImportOptions &options, WeightStore *weights) {
  context.loadDialect<MemcDialect, func::FuncDialect>();
  OnnxImporter importer(context, modelPath, options);
  OwningOpRef<ModuleOp> module = importer.run();
  if (module && weights)
    *weights = std::move(importer.weightStore());
  return module;
}

bool addInputShape(llvm::StringRef text, ImportOptions &options, std::string &error) {
  auto [name, dims] = text.rsplit('=');
  if (name.empty() || dims.empty() || !text.contains('=')) {
    error = "--input-shape expects NAME=DIMS (e.g. input_ids=4x128), got '" + text.str() + "'";
    return false;
  }
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim <= 0) {
      error = "--input-shape " + text.str() + ": '" + part.str() + "' is not a positive dimension";
      return false;
    }
    shape.push_back(dim);
  }
  int64_t elements;
  if (!kernels::checkedNumElements(shape, elements)) {
    error = "--input-shape " + text.str() +
            ": too large (more than 2^48 elements, memc's limit for one tensor)";
    return false;
  }
  options.inputShapes[name.str()] = shape;
  return true;
}

} // namespace memc
