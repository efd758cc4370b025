//===- HostTensor.h - small tensors evaluated while importing ---*- C++ -*-===//
//
// Exported graphs compute shapes at run time (Shape -> Gather -> Concat -> Reshape). With static
// shapes those subgraphs are constants; the importer evaluates them on the host with HostTensor
// instead of emitting IR, so every shape operand is known when its consumer is imported.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_COMPILER_IMPORTER_HOSTTENSOR_H
#define MEMC_COMPILER_IMPORTER_HOSTTENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memc {

/// A dense tensor held in host memory. Integer and boolean elements live in `ints`, floating
/// elements in `floats` (doubles hold f32/f16/bf16 values exactly). A splat stores one element.
struct HostTensor {
  /// An onnx::TensorProto_DataType value (FLOAT = 1, INT64 = 7, BOOL = 9, ...).
  int32_t dataType = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  bool splat = false;

  bool isFloating() const;
  int64_t numElements() const;
  int64_t intAt(int64_t index) const;
  double floatAt(int64_t index) const;
  /// The elements as int64 (floating values truncated toward zero).
  std::vector<int64_t> toInts() const;

  static HostTensor ofInts(int32_t dataType, std::vector<int64_t> shape,
                           std::vector<int64_t> values);
  static HostTensor ofFloats(int32_t dataType, std::vector<int64_t> shape,
                             std::vector<double> values);
  static HostTensor splatOf(int32_t dataType, std::vector<int64_t> shape, double value);
};

constexpr int64_t kMaxHostElements = int64_t(1) << 24;

/// A 1-D tensor of INT32 or INT64 that parameterizes an op (starts, axes, a shape), read
/// whole; false with a message naming `what` otherwise (a float or a 2-D shape).
bool readIndexVector(const std::string &what, const HostTensor &tensor,
                     std::vector<int64_t> &values, std::string &error);

/// True if `opType` (default ONNX domain) can be evaluated by `evaluateOnHost`.
bool isHostEvaluable(const std::string &opType);

/// The attributes of a node that host evaluation reads, already decoded by the importer.
struct HostAttributes {
  std::optional<int64_t> axis;
  std::optional<int64_t> to;       // Cast
  std::optional<std::vector<int64_t>> axes, perm;
  std::optional<HostTensor> value;    // ConstantOfShape
  int64_t keepdims = 1;
  std::optional<std::vector<int64_t>> split; // Split before opset 13
  size_t outputCount = 1;                    // Split: the node's outputs
};

/// Evaluates one node of the default domain whose inputs are all host tensors (optional inputs
/// that are absent are null). Supported: Gather, Slice, Concat,
/// Unsqueeze, Squeeze, Reshape, Cast, Equal, Less, Greater, Not, Where, Range, ConstantOfShape,
/// Add, Sub, Mul, Div, Neg, Identity, Transpose, ReduceProd, Expand, and Split (one output each).
/// Outputs over kMaxHostElements elements (except splats) are refused rather than allocated.
/// Returns false with a message in `error` on unsupported input or an ONNX rule violation.
bool evaluateOnHost(const std::string &opType, const std::vector<const HostTensor *> &inputs,
                    const HostAttributes &attributes, std::vector<HostTensor> &outputs,
                    std::string &error);

} // namespace memc

#endif // MEMC_COMPILER_IMPORTER_HOSTTENSOR_H
