//===- NodeImporter.cpp - what an ONNX op builder sees --------------------===//
#include "compiler/importer/NodeImporter.h"

using namespace mlir;

namespace memc {

LogicalResult NodeImporter::error(const Twine &message) const {
  return emitError(loc) << node.op_type() << ": " << message;
}

bool NodeImporter::hasInput(size_t index) const {
  return index < static_cast<size_t>(node.input_size()) && !node.input(index).empty();
}

FailureOr<Value> NodeImporter::input(size_t index, std::optional<Type> elementType) {
  if (!hasInput(index))
    return error("missing input " + std::to_string(index));
  ImportedTensor *tensor = scope.lookup(node.input(index));
  if (!tensor)
    return error("input '" + node.input(index) + "' is not defined");
  return scope.materialize(*tensor, elementType, loc);
}

const HostTensor *NodeImporter::constantInput(size_t index) {
  if (!hasInput(index))
    return nullptr;
  ImportedTensor *tensor = scope.lookup(node.input(index));
  return tensor && tensor->constant ? &*tensor->constant : nullptr;
}

FailureOr<HostTensor> NodeImporter::requireConstant(size_t index, StringRef what) {
  if (!hasInput(index))
    return error("missing " + what);
  if (const HostTensor *constant = constantInput(index))
    return *constant;
  if (ImportedTensor *tensor = scope.lookup(node.input(index)); tensor && tensor->value) {
    FailureOr<HostTensor> read = scope.readConstant(node.input(index), loc);
    if (succeeded(read))
      return read;
  }
  return error(what + " ('" + node.input(index) +
               "') must be a constant: it is computed at run time, which memc's static shapes "
               "do not allow");
}

FailureOr<RankedTensorType> NodeImporter::inputType(size_t index) {
  if (!hasInput(index))
    return error("missing input " + std::to_string(index));
  ImportedTensor *tensor = scope.lookup(node.input(index));
  if (tensor && tensor->value)
    return cast<RankedTensorType>(tensor->value.getType());
  FailureOr<Value> value = input(index);
  if (failed(value))
    return failure();
  return cast<RankedTensorType>(value->getType());
}

FailureOr<SmallVector<Value>> NodeImporter::elementwiseInputs() {
  // Where's condition stays boolean and does not decide the data type.
  size_t firstData = node.op_type() == "Where" ? 1 : 0;
  std::optional<Type> common;
  for (size_t i = firstData; i < numInputs() && !common; ++i) {
    ImportedTensor *tensor = hasInput(i) ? scope.lookup(node.input(i)) : nullptr;
    if (tensor && tensor->value && !tensor->constant)
      common = cast<RankedTensorType>(tensor->value.getType()).getElementType();
  }
  SmallVector<Value> operands;
  for (size_t i = 0; i < numInputs(); ++i) {
    ImportedTensor *tensor = hasInput(i) ? scope.lookup(node.input(i)) : nullptr;
    bool isConstant = tensor && tensor->constant;
    FailureOr<Value> operand = input(i, isConstant && i >= firstData ? common : std::nullopt);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  return operands;
}

const onnx::AttributeProto *NodeImporter::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

namespace {
std::string attrTypeName(onnx::AttributeProto::AttributeType type) {
  return onnx::AttributeProto::AttributeType_Name(type);
}
} // namespace

FailureOr<int64_t> NodeImporter::intAttr(StringRef name, std::optional<int64_t> fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr) {
    if (fallback)
      return *fallback;
    return error("missing attribute '" + name + "'");
  }
  if (attr->type() != onnx::AttributeProto::INT)
    return error("attribute '" + name + "' must be INT, got " + attrTypeName(attr->type()));
  return attr->i();
}

FailureOr<double> NodeImporter::floatAttr(StringRef name, std::optional<double> fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr) {
    if (fallback)
      return *fallback;
    return error("missing attribute '" + name + "'");
  }
  if (attr->type() != onnx::AttributeProto::FLOAT)
    return error("attribute '" + name + "' must be FLOAT, got " + attrTypeName(attr->type()));
  return static_cast<double>(attr->f());
}

FailureOr<std::string> NodeImporter::stringAttr(StringRef name,
                                                std::optional<std::string> fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr) {
    if (fallback)
      return *fallback;
    return error("missing attribute '" + name + "'");
  }
  if (attr->type() != onnx::AttributeProto::STRING)
    return error("attribute '" + name + "' must be STRING, got " + attrTypeName(attr->type()));
  return attr->s();
}

FailureOr<std::vector<int64_t>>
NodeImporter::intsAttr(StringRef name, std::optional<std::vector<int64_t>> fallback) const {
  const onnx::AttributeProto *attr = attribute(name);
  if (!attr) {
    if (fallback)
      return *fallback;
    return error("missing attribute '" + name + "'");
  }
  if (attr->type() != onnx::AttributeProto::INTS)
    return error("attribute '" + name + "' must be INTS, got " + attrTypeName(attr->type()));
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

bool NodeImporter::isOutputUsed(size_t index) const {
  return index < static_cast<size_t>(node.output_size()) && !node.output(index).empty() &&
         scope.isUsed(node.output(index));
}

void NodeImporter::setOutput(size_t index, Value value) {
  if (index < static_cast<size_t>(node.output_size()) && !node.output(index).empty())
    scope.define(node.output(index), ImportedTensor{value, std::nullopt});
}

void NodeImporter::setOutputConstant(size_t index, HostTensor constant) {
  if (index < static_cast<size_t>(node.output_size()) && !node.output(index).empty())
    scope.define(node.output(index), ImportedTensor{nullptr, std::move(constant)});
}

LogicalResult NodeImporter::requireOutputsUnused(size_t firstUnsupported, StringRef why) const {
  for (size_t i = firstUnsupported; i < numOutputs(); ++i)
    if (isOutputUsed(i))
      return error("output " + std::to_string(i) + " ('" + node.output(i) +
                   "') is used, but " + why);
  return success();
}

LogicalResult NodeImporter::verifyCreated(Operation *op) {
  if (succeeded(mlir::verify(op, /*verifyRecursively=*/false)))
    return success();
  op->erase();
  return failure();
}

} // namespace memc
