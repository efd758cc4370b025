//===- NodeImporter.h - what an ONNX op builder sees ------------*- C++ -*-===//
//
// The interface between the importer's graph walk and the per-op builders (OnnxOpBuilders.cpp):
// typed access to one node's inputs, constant inputs and attributes, result registration, and
// op creation that reports shape errors instead of aborting.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_NODEIMPORTER_H
#define MEMC_COMPILER_IMPORTER_NODEIMPORTER_H

#include "compiler/importer/HostTensor.h"
#include "compiler/importer/ImportBudget.h"
#include "compiler/importer/WeightStore.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

#include <onnx/onnx_pb.h>

#include <type_traits>

namespace memc {

/// A tensor name's meaning during import: an SSA value, a constant known on the host, or both
/// (a host constant gets a value once an op needs it as an operand).
struct ImportedTensor {
  mlir::Value value;
  std::optional<HostTensor> constant;
};

/// Services the importer provides to node builders.
class ImportScope {
public:
  virtual ~ImportScope() = default;
  virtual ImportedTensor *lookup(const std::string &name) = 0;
  virtual bool isUsed(const std::string &name) const = 0;
  virtual mlir::FailureOr<mlir::Value> materialize(ImportedTensor &tensor,
                                                   std::optional<mlir::Type> elementType,
                                                   mlir::Location loc) = 0;
  virtual mlir::FailureOr<HostTensor> readConstant(const std::string &name,
                                                   mlir::Location loc) = 0;
  virtual void define(const std::string &name, ImportedTensor tensor) = 0;
  /// Drops a name's binding (a Loop body's names between iterations).
  virtual void forget(const std::string &name) = 0;
  /// The row of initializer `name` that embedding lookups give no gradient (the export
  /// helper's memc.padding_idx), if any.
  virtual std::optional<int64_t> paddingRow(const std::string &name) const = 0;
  /// What unrolling and folding may still create in this import.
  virtual ImportBudget &budget() = 0;
};

class NodeImporter {
public:
  NodeImporter(const onnx::NodeProto &node, int64_t opset, mlir::OpBuilder &builder,
               ImportScope &scope, mlir::Location loc)
      : node(node), opset(opset), builder(builder), scope(scope), loc(loc) {}

  const onnx::NodeProto &node;
  const int64_t opset;
  mlir::OpBuilder &builder;

  mlir::Location location() const { return loc; }
  mlir::LogicalResult error(const llvm::Twine &message) const;

  // Inputs. Absent optional inputs have empty names.
  size_t numInputs() const { return node.input_size(); }
  bool hasInput(size_t index) const;
  mlir::FailureOr<mlir::Value> input(size_t index,
                                     std::optional<mlir::Type> elementType = std::nullopt);
  /// The input's value if it is known on the host, else null.
  const HostTensor *constantInput(size_t index);
  /// The input's value for an operand that must be constant (a shape, axes, a bound); reads
  /// the initializer if the input is a parameter.
  mlir::FailureOr<HostTensor> requireConstant(size_t index, llvm::StringRef what);
  /// The static type the input has (also for host constants not yet materialized).
  mlir::FailureOr<mlir::RankedTensorType> inputType(size_t index);
  /// Operands for an elementwise op: host constants take the element type of the first
  /// non-constant input, since exporters write scalars in whatever type is handy.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> elementwiseInputs();
  /// The export helper's padding row for the initializer the input reads, if any.
  std::optional<int64_t> paddingRow(size_t index) const {
    return scope.paddingRow(node.input(index));
  }

  // Attributes.
  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef name, std::optional<int64_t> fallback) const;
  mlir::FailureOr<double> floatAttr(llvm::StringRef name, std::optional<double> fallback) const;
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef name,
                                          std::optional<std::string> fallback) const;
  mlir::FailureOr<std::vector<int64_t>>
  intsAttr(llvm::StringRef name, std::optional<std::vector<int64_t>> fallback) const;

  // Outputs.
  size_t numOutputs() const { return node.output_size(); }
  bool isOutputUsed(size_t index) const;
  void setOutput(size_t index, mlir::Value value);
  void setOutputConstant(size_t index, HostTensor constant);
  /// Errors if any output from `firstUnsupported` on is consumed.
  mlir::LogicalResult requireOutputsUnused(size_t firstUnsupported, llvm::StringRef why) const;

  /// Creates an op whose result types the op infers; shape errors become import errors.
  template <typename OpT>
  mlir::FailureOr<mlir::Operation *> create(mlir::ValueRange operands,
                                            llvm::ArrayRef<mlir::NamedAttribute> attributes = {});
  /// Creates an op with a stated result type (reshape, cast, broadcast_to) and verifies it.
  template <typename OpT>
  mlir::FailureOr<mlir::Value> createTyped(mlir::Type resultType, mlir::ValueRange operands,
                                           llvm::ArrayRef<mlir::NamedAttribute> attributes = {});
  /// Shorthand for single-result ops.
  template <typename OpT>
  mlir::FailureOr<mlir::Value> create1(mlir::ValueRange operands,
                                       llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::FailureOr<mlir::Operation *> op = create<OpT>(operands, attributes);
    if (mlir::failed(op))
      return mlir::failure();
    return (*op)->getResult(0);
  }

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) const {
    return builder.getNamedAttr(name, value);
  }

private:
  mlir::LogicalResult verifyCreated(mlir::Operation *op);

  ImportScope &scope;
  mlir::Location loc;
};

namespace detail {
template <typename OpT, typename = void>
struct HasProperties : std::false_type {};
template <typename OpT>
struct HasProperties<OpT, std::void_t<typename OpT::Properties>> : std::true_type {};
} // namespace detail

template <typename OpT>
mlir::FailureOr<mlir::Operation *>
NodeImporter::create(mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> attributes) {
  mlir::MLIRContext *context = builder.getContext();
  mlir::OperationState state(loc, OpT::getOperationName());
  state.addOperands(operands);
  state.addAttributes(attributes);
  // As the generated builders do: inherent attributes live in properties, which inference reads.
  if constexpr (detail::HasProperties<OpT>::value) {
    if (!attributes.empty()) {
      mlir::OpaqueProperties properties = &state.getOrAddProperties<typename OpT::Properties>();
      if (mlir::failed(state.name.getRegisteredInfo()->setOpPropertiesFromAttribute(
              state.name, properties, state.attributes.getDictionary(context), nullptr)))
        return error("internal: bad attributes for " + OpT::getOperationName());
    }
  }
  llvm::SmallVector<mlir::Type> resultTypes;
  if (mlir::failed(OpT::inferReturnTypes(context, loc, operands,
                                         state.attributes.getDictionary(context),
                                         state.getRawProperties(), state.regions, resultTypes)))
    return mlir::failure();
  state.addTypes(resultTypes);
  mlir::Operation *op = builder.create(state);
  if (mlir::failed(verifyCreated(op)))
    return mlir::failure();
  return op;
}

template <typename OpT>
mlir::FailureOr<mlir::Value>
NodeImporter::createTyped(mlir::Type resultType, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attributes) {
  mlir::OperationState state(loc, OpT::getOperationName());
  state.addOperands(operands);
  state.addAttributes(attributes);
  state.addTypes(resultType);
  mlir::Operation *op = builder.create(state);
  if (mlir::failed(verifyCreated(op)))
    return mlir::failure();
  return op->getResult(0);
}

/// Builds memc IR for one ONNX node. The table maps ONNX op types (default domain) to builders.
using OnnxOpBuilder = mlir::LogicalResult (*)(NodeImporter &);
const llvm::StringMap<OnnxOpBuilder> &onnxOpBuilders();

/// The MLIR element type of an ONNX data type: the dtype table's row for it if memc computes
/// it, else null.
mlir::Type elementTypeFor(mlir::MLIRContext *context, int32_t onnxDataType);

/// Decodes little-endian tensor bytes (an initializer's data) into a host tensor.
mlir::FailureOr<HostTensor> decodeRawTensor(int32_t onnxDataType, llvm::ArrayRef<int64_t> shape,
                                            llvm::ArrayRef<char> bytes, std::string &error);
/// Decodes a TensorProto embedded in the graph (a Constant's value).
mlir::FailureOr<HostTensor> decodeTensorProto(const onnx::TensorProto &tensor, std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_NODEIMPORTER_H
