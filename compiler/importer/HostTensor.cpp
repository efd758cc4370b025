//===- HostTensor.cpp - small tensors evaluated while importing -----------===//
//
// ONNX semantics (opsets 13-17) of the ops PyTorch writes into shape subgraphs. Node inputs come
// from untrusted model files, so every rank, axis, index and element count is checked before it
// is used: a malformed graph gets an error message, never a crash, an overflow or a huge
// allocation.
//
// Results take the precision of their type: integers narrower than 64 bits wrap as C conversions
// do, int64 overflow is an error (an overflowing shape computation has no meaningful result), and
// floating results round to f32/f16/bf16 when that is their type.
//
//===----------------------------------------------------------------------===//

#include "compiler/importer/HostTensor.h"
#include "compiler/importer/OnnxTypes.h"
#include "kernels/ShapeRules.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memc {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// onnx::TensorProto_DataType codes; this file stays free of the onnx headers.
constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
                  kInt64 = 7, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12,
                  kBfloat16 = 16;

using Operands = std::vector<const HostTensor *>;

bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

std::string str(int64_t value) { return std::to_string(value); }

//===----------------------------------------------------------------------===//
// Data types and element conversions
//===----------------------------------------------------------------------===//

/// Storage width of an integer type, 0 for types not evaluated as integers (UINT64 values do
/// not fit the int64 storage).
int integerBits(int32_t type) {
  switch (type) {
  case kBool:
    return 1;
  case kUint8:
  case kInt8:
    return 8;
  case kUint16:
  case kInt16:
    return 16;
  case kUint32:
  case kInt32:
    return 32;
  case kInt64:
    return 64;
  default:
    return 0;
  }
}

bool isUnsignedType(int32_t type) {
  return type == kBool || type == kUint8 || type == kUint16 || type == kUint32;
}

bool isSupportedType(int64_t type) {
  if (type < 0 || type > std::numeric_limits<int32_t>::max())
    return false;
  return isFloatingOnnxType(static_cast<int32_t>(type)) || integerBits(static_cast<int32_t>(type));
}

bool isIndexType(int32_t type) { return type == kInt32 || type == kInt64; }

std::string typeName(int32_t type) {
  switch (type) {
  case kFloat: return "FLOAT";
  case kUint8: return "UINT8";
  case kInt8: return "INT8";
  case kUint16: return "UINT16";
  case kInt16: return "INT16";
  case kInt32: return "INT32";
  case kInt64: return "INT64";
  case kBool: return "BOOL";
  case kFloat16: return "FLOAT16";
  case kDouble: return "DOUBLE";
  case kUint32: return "UINT32";
  case kBfloat16: return "BFLOAT16";
  default: return "data type " + str(type);
  }
}

/// The value of `type` whose low bits are `bits`, as a C conversion to that type gives it; BOOL
/// is the exception, true for any nonzero value as ONNX Cast defines it.
int64_t wrapBits(uint64_t bits, int32_t type) {
  int width = integerBits(type);
  if (type == kBool)
    return bits != 0;
  if (width == 64)
    return static_cast<int64_t>(bits);
  uint64_t low = bits & ((uint64_t(1) << width) - 1);
  if (isUnsignedType(type))
    return static_cast<int64_t>(low);
  uint64_t sign = uint64_t(1) << (width - 1);
  return static_cast<int64_t>(low ^ sign) - static_cast<int64_t>(sign);
}

int64_t wrapInteger(int64_t value, int32_t type) {
  return wrapBits(static_cast<uint64_t>(value), type);
}

/// Rounds to nearest-even with `precision` significand bits within a binary format's exponent
/// range (subnormals included, overflow to infinity): the value an element of that format holds.
double roundToBinaryFormat(double value, int precision, int minExponent, int maxExponent) {
  if (!std::isfinite(value) || value == 0)
    return value;
  int exponent = 0;
  std::frexp(value, &exponent); // |value| = m * 2^exponent with 0.5 <= m < 1
  int unitExponent = std::max(exponent - 1, minExponent) - (precision - 1);
  double rounded =
      std::ldexp(std::nearbyint(std::ldexp(value, -unitExponent)), unitExponent);
  double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), maxExponent);
  if (std::fabs(rounded) > largest)
    return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

double roundFloating(double value, int32_t type) {
  switch (type) {
  case kFloat:
    return roundToBinaryFormat(value, 24, -126, 127);
  case kFloat16:
    return roundToBinaryFormat(value, 11, -14, 15);
  case kBfloat16:
    return roundToBinaryFormat(value, 8, -126, 127);
  default:
    return value;
  }
}

/// Float to int64, truncating toward zero; nullopt for NaN and values outside int64.
std::optional<int64_t> truncateToInt64(double value) {
  if (!(value >= -0x1p63 && value < 0x1p63))
    return std::nullopt;
  return static_cast<int64_t>(value);
}

int64_t saturatingTruncate(double value) {
  if (std::optional<int64_t> truncated = truncateToInt64(value))
    return *truncated;
  if (std::isnan(value))
    return 0;
  return value > 0 ? kInt64Max : kInt64Min;
}

//===----------------------------------------------------------------------===//
// Checked integer arithmetic and shapes
//===----------------------------------------------------------------------===//

bool addOverflows(int64_t a, int64_t b) {
  return b > 0 ? a > kInt64Max - b : a < kInt64Min - b;
}

bool subOverflows(int64_t a, int64_t b) {
  return b < 0 ? a > kInt64Max + b : a < kInt64Min + b;
}

bool mulOverflows(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return false;
  if (a > 0)
    return b > 0 ? a > kInt64Max / b : b < kInt64Min / a;
  return b > 0 ? a < kInt64Min / b : b < kInt64Max / a;
}

/// Element count of `shape`; nullopt if a dimension is negative or the count overflows int64.
std::optional<int64_t> elementCount(const std::vector<int64_t> &shape) {
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    empty |= dim == 0;
  }
  // A zero dimension empties the tensor whatever the other dimensions multiply to.
  if (empty)
    return 0;
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (mulOverflows(count, dim))
      return std::nullopt;
    count *= dim;
  }
  return count;
}

/// Product of shape[begin, end). Only used on tensors that have elements, where every partial
/// product is bounded by the element count.
int64_t productOf(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  return elementCount(std::vector<int64_t>(shape.begin() + begin, shape.begin() + end))
      .value_or(0);
}

/// Row-major strides. An empty tensor gets zeros: nothing is addressed through them, and the
/// partial products of its other dimensions need not fit in int64.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  if (elementCount(shape).value_or(0) == 0)
    return strides;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

/// Refuses result shapes whose element count overflows, and dense results too large to
/// materialize on the host.
bool checkResultShape(const std::string &op, const std::vector<int64_t> &shape, bool splat,
                      std::string &error) {
  std::optional<int64_t> count = elementCount(shape);
  if (!count)
    return fail(error, op + " result has more elements than int64 can count");
  if (!splat && *count > kMaxHostElements)
    return fail(error, op + " result has " + str(*count) + " elements, more than the " +
                           str(kMaxHostElements) + " evaluated on the host");
  return true;
}

/// Maps an ONNX axis in [-rank, rank) to [0, rank).
bool normalizeAxis(const std::string &op, int64_t axis, int64_t rank, int64_t &normalized,
                   std::string &error) {
  if (axis < -rank || axis >= rank)
    return fail(error, op + " axis " + str(axis) + " out of range for rank " + str(rank));
  normalized = axis < 0 ? axis + rank : axis;
  return true;
}

bool normalizeAxes(const std::string &op, const std::vector<int64_t> &axes, int64_t rank,
                   std::vector<int64_t> &normalized, std::string &error) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  normalized.clear();
  for (int64_t axis : axes) {
    int64_t index = 0;
    if (!normalizeAxis(op, axis, rank, index, error))
      return false;
    if (seen[index])
      return fail(error, op + " axis " + str(axis) + " is repeated");
    seen[index] = true;
    normalized.push_back(index);
  }
  return true;
}

std::vector<bool> axisMask(const std::vector<int64_t> &axes, size_t rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t axis : axes)
    mask[axis] = true;
  return mask;
}

/// Visits the coordinates of `shape` in row-major order and tracks the linear index each one
/// reads from a source addressed through `strides` (0 along broadcast dimensions).
class StridedWalk {
public:
  StridedWalk(std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t base)
      : shape(std::move(shape)), strides(std::move(strides)), coordinate(this->shape.size(), 0),
        current(base) {}

  int64_t offset() const { return current; }

  void advance() {
    for (size_t d = shape.size(); d-- > 0;) {
      current += strides[d];
      if (++coordinate[d] < shape[d])
        return;
      current -= strides[d] * shape[d];
      coordinate[d] = 0;
    }
  }

private:
  std::vector<int64_t> shape, strides, coordinate;
  int64_t current;
};

//===----------------------------------------------------------------------===//
// Operand checks and element access
//===----------------------------------------------------------------------===//

/// Rejects tensors whose storage contradicts their type or shape, so that the evaluators may
/// index storage freely.
bool checkWellFormed(const HostTensor &tensor, std::string &error) {
  if (!isSupportedType(tensor.dataType))
    return fail(error, "tensors of " + typeName(tensor.dataType) +
                           " are not evaluated on the host");
  std::optional<int64_t> count = elementCount(tensor.shape);
  if (!count)
    return fail(error, "shape has a negative dimension or more elements than int64 counts");
  size_t needed = tensor.splat ? 1 : static_cast<size_t>(*count);
  bool floating = tensor.isFloating();
  size_t held = floating ? tensor.floats.size() : tensor.ints.size();
  size_t misplaced = floating ? tensor.ints.size() : tensor.floats.size();
  if (held != needed || misplaced != 0)
    return fail(error, "tensor holds " + str(held + misplaced) + " values, its shape needs " +
                           str(needed));
  for (int64_t value : tensor.ints)
    if (wrapInteger(value, tensor.dataType) != value)
      return fail(error, typeName(tensor.dataType) + " tensor holds " + str(value) +
                             ", outside the range of its type");
  return true;
}

bool checkSameType(const std::string &op, const HostTensor &a, const HostTensor &b,
                   std::string &error) {
  if (a.dataType == b.dataType)
    return true;
  return fail(error, op + " operands have different types, " + typeName(a.dataType) + " and " +
                         typeName(b.dataType));
}

/// The axes of Unsqueeze, Squeeze and ReduceProd: the second input (opset 13+, 18+ for
/// ReduceProd) or else the attribute of earlier opsets.
bool readAxesOperand(const std::string &op, const Operands &in, const HostAttributes &attributes,
                     std::optional<std::vector<int64_t>> &axes, std::string &error) {
  axes = attributes.axes;
  if (in.size() < 2 || !in[1])
    return true;
  std::vector<int64_t> values;
  if (!readIndexVector(op + " axes", *in[1], values, error))
    return false;
  axes = std::move(values);
  return true;
}

void appendElement(HostTensor &target, const HostTensor &source, int64_t index) {
  if (source.isFloating())
    target.floats.push_back(source.floatAt(index));
  else
    target.ints.push_back(source.intAt(index));
}

size_t storedCount(const HostTensor &tensor) {
  return tensor.isFloating() ? tensor.floats.size() : tensor.ints.size();
}

/// `source` with a new shape and the same elements in the same order.
HostTensor reshaped(const HostTensor &source, std::vector<int64_t> shape) {
  HostTensor result = source;
  result.shape = std::move(shape);
  return result;
}

/// The elements of `source` that a strided view selects; a splat stays a splat, whatever it is
/// viewed as.
HostTensor viewOf(const HostTensor &source, std::vector<int64_t> shape, int64_t base,
                  std::vector<int64_t> strides) {
  if (source.splat)
    return reshaped(source, std::move(shape));
  HostTensor result;
  result.dataType = source.dataType;
  result.shape = shape;
  int64_t count = elementCount(shape).value_or(0);
  StridedWalk walk(std::move(shape), std::move(strides), base);
  for (int64_t i = 0; i < count; ++i, walk.advance())
    appendElement(result, source, walk.offset());
  return result;
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise ops
//===----------------------------------------------------------------------===//

/// The numpy (multidirectional) broadcast of the operands' shapes (the memc ops' rule).
bool broadcastShapes(const std::string &op, const Operands &operands,
                     std::vector<int64_t> &shape, std::string &error) {
  std::vector<kernels::Shape> shapes;
  for (const HostTensor *operand : operands)
    shapes.push_back(operand->shape);
  kernels::BroadcastConflict conflict;
  if (!kernels::broadcastShapes(shapes, shape, conflict))
    return fail(error, op + " cannot broadcast dimension of size " + str(conflict.size) +
                           " against " + str(conflict.against));
  return true;
}

/// Strides that read `operand` at each coordinate of the broadcast `shape`: 0 along the
/// dimensions it is broadcast over (size 1 or missing), and everywhere for a splat.
std::vector<int64_t> broadcastStrides(const HostTensor &operand,
                                      const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  if (operand.splat)
    return strides;
  std::vector<int64_t> own = rowMajorStrides(operand.shape);
  size_t lead = shape.size() - operand.shape.size();
  for (size_t d = 0; d < operand.shape.size(); ++d)
    if (operand.shape[d] != 1)
      strides[lead + d] = own[d];
  return strides;
}

bool isUniform(const HostTensor &tensor) { return tensor.splat || tensor.numElements() == 1; }

/// Evaluates an elementwise op over the broadcast of `operands`. `element(offsets, result,
/// error)` appends one result element computed from operand k's element offsets[k]. If every
/// operand holds a single value and one is a splat, so is the result: it is computed once, which
/// keeps splats of any size cheap.
template <typename ElementFn>
bool evaluateBroadcast(const std::string &op, const Operands &operands, int32_t resultType,
                       HostTensor &result, std::string &error, ElementFn element) {
  std::vector<int64_t> shape;
  if (!broadcastShapes(op, operands, shape, error))
    return false;
  bool uniform = std::all_of(operands.begin(), operands.end(),
                             [](const HostTensor *t) { return isUniform(*t); }) &&
                 std::any_of(operands.begin(), operands.end(),
                             [](const HostTensor *t) { return t->splat; });
  if (!checkResultShape(op, shape, uniform, error))
    return false;
  result.dataType = resultType;
  result.splat = uniform;
  result.shape = shape;
  std::vector<int64_t> walked = uniform ? std::vector<int64_t>{} : shape;
  int64_t count = elementCount(walked).value_or(0);
  std::vector<StridedWalk> walks;
  for (const HostTensor *operand : operands)
    walks.emplace_back(walked, broadcastStrides(*operand, walked), 0);
  std::vector<int64_t> offsets(operands.size());
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < walks.size(); ++k)
      offsets[k] = walks[k].offset();
    if (!element(offsets, result, error))
      return false;
    for (StridedWalk &walk : walks)
      walk.advance();
  }
  return true;
}

enum class Arithmetic { Add, Sub, Mul, Div };

std::string arithmeticName(Arithmetic op) {
  switch (op) {
  case Arithmetic::Add: return "Add";
  case Arithmetic::Sub: return "Sub";
  case Arithmetic::Mul: return "Mul";
  case Arithmetic::Div: return "Div";
  }
  return "";
}

double floatArithmetic(Arithmetic op, double a, double b) {
  switch (op) {
  case Arithmetic::Add: return a + b;
  case Arithmetic::Sub: return a - b;
  case Arithmetic::Mul: return a * b;
  case Arithmetic::Div: return a / b;
  }
  return 0;
}

/// Integer arithmetic in `type`: division truncates toward zero as in C, narrower types wrap,
/// and int64 overflow or division by zero is an error.
bool integerArithmetic(Arithmetic op, int64_t a, int64_t b, int32_t type, int64_t &result,
                       std::string &error) {
  if (op == Arithmetic::Div) {
    if (b == 0)
      return fail(error, "Div of " + str(a) + " by zero");
    if (a == kInt64Min && b == -1)
      return fail(error, "Div of " + str(a) + " by -1 overflows int64");
    result = wrapInteger(a / b, type);
    return true;
  }
  if (type != kInt64) {
    // Unsigned arithmetic wraps modulo 2^64, which agrees with every narrower width.
    uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    uint64_t bits = op == Arithmetic::Add ? x + y : op == Arithmetic::Sub ? x - y : x * y;
    result = wrapBits(bits, type);
    return true;
  }
  bool overflows = op == Arithmetic::Add   ? addOverflows(a, b)
                   : op == Arithmetic::Sub ? subOverflows(a, b)
                                           : mulOverflows(a, b);
  if (overflows)
    return fail(error, arithmeticName(op) + " of " + str(a) + " and " + str(b) + " overflows int64");
  result = op == Arithmetic::Add ? a + b : op == Arithmetic::Sub ? a - b : a * b;
  return true;
}

bool evaluateArithmetic(Arithmetic op, const Operands &in, HostTensor &result,
                        std::string &error) {
  std::string name = arithmeticName(op);
  const HostTensor &a = *in[0], &b = *in[1];
  if (!checkSameType(name, a, b, error))
    return false;
  int32_t type = a.dataType;
  if (type == kBool)
    return fail(error, name + " does not take BOOL operands");
  if (a.isFloating())
    return evaluateBroadcast(
        name, in, type, result, error,
        [&](const std::vector<int64_t> &at, HostTensor &out, std::string &) {
          double value = floatArithmetic(op, a.floatAt(at[0]), b.floatAt(at[1]));
          out.floats.push_back(roundFloating(value, type));
          return true;
        });
  return evaluateBroadcast(
      name, in, type, result, error,
      [&](const std::vector<int64_t> &at, HostTensor &out, std::string &message) {
        int64_t value = 0;
        if (!integerArithmetic(op, a.intAt(at[0]), b.intAt(at[1]), type, value, message))
          return false;
        out.ints.push_back(value);
        return true;
      });
}

enum class Comparison { Equal, Less, Greater };

template <typename T> bool compare(Comparison op, T a, T b) {
  switch (op) {
  case Comparison::Equal: return a == b;
  case Comparison::Less: return a < b;
  case Comparison::Greater: return a > b;
  }
  return false;
}

bool evaluateComparison(Comparison op, const std::string &name, const Operands &in,
                        HostTensor &result, std::string &error) {
  const HostTensor &a = *in[0], &b = *in[1];
  if (!checkSameType(name, a, b, error))
    return false;
  bool floating = a.isFloating();
  return evaluateBroadcast(
      name, in, kBool, result, error,
      [&](const std::vector<int64_t> &at, HostTensor &out, std::string &) {
        out.ints.push_back(floating ? compare(op, a.floatAt(at[0]), b.floatAt(at[1]))
                                    : compare(op, a.intAt(at[0]), b.intAt(at[1])));
        return true;
      });
}

bool evaluateWhere(const Operands &in, const HostAttributes &, HostTensor &result,
                   std::string &error) {
  const HostTensor &condition = *in[0], &x = *in[1], &y = *in[2];
  if (condition.dataType != kBool)
    return fail(error, "Where condition must be BOOL, not " + typeName(condition.dataType));
  if (!checkSameType("Where", x, y, error))
    return false;
  return evaluateBroadcast(
      "Where", in, x.dataType, result, error,
      [&](const std::vector<int64_t> &at, HostTensor &out, std::string &) {
        bool pickX = condition.intAt(at[0]) != 0;
        appendElement(out, pickX ? x : y, pickX ? at[1] : at[2]);
        return true;
      });
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops: they map the stored elements, so a splat stays a splat
//===----------------------------------------------------------------------===//

bool evaluateIdentity(const Operands &in, const HostAttributes &, HostTensor &result,
                      std::string &) {
  result = *in[0];
  return true;
}

bool evaluateNot(const Operands &in, const HostAttributes &, HostTensor &result,
                 std::string &error) {
  const HostTensor &input = *in[0];
  if (input.dataType != kBool)
    return fail(error, "Not takes BOOL, not " + typeName(input.dataType));
  result = input;
  for (int64_t &value : result.ints)
    value = value == 0;
  return true;
}

bool evaluateNeg(const Operands &in, const HostAttributes &, HostTensor &result,
                 std::string &error) {
  const HostTensor &input = *in[0];
  if (isUnsignedType(input.dataType))
    return fail(error, "Neg does not take " + typeName(input.dataType));
  result = input;
  for (double &value : result.floats)
    value = -value;
  for (int64_t &value : result.ints) {
    if (value == kInt64Min)
      return fail(error, "Neg of " + str(value) + " overflows int64");
    value = wrapInteger(-value, input.dataType);
  }
  return true;
}

/// One element converted to `target` by Cast: floats truncate toward zero into integers, any
/// nonzero value (NaN included) is true, floating targets round to their precision.
bool castElement(const HostTensor &source, size_t index, int32_t target, HostTensor &result,
                 std::string &error) {
  if (isFloatingOnnxType(target)) {
    result.floats.push_back(roundFloating(source.floatAt(index), target));
    return true;
  }
  if (!source.isFloating()) {
    result.ints.push_back(wrapInteger(source.intAt(index), target));
    return true;
  }
  double value = source.floatAt(index);
  if (target == kBool) {
    result.ints.push_back(value != 0);
    return true;
  }
  std::optional<int64_t> truncated = truncateToInt64(value);
  if (!truncated)
    return fail(error, "Cast cannot convert " + std::to_string(value) + " to " +
                           typeName(target));
  result.ints.push_back(wrapInteger(*truncated, target));
  return true;
}

bool evaluateCast(const Operands &in, const HostAttributes &attributes, HostTensor &result,
                  std::string &error) {
  if (!attributes.to)
    return fail(error, "Cast needs a 'to' attribute");
  if (!isSupportedType(*attributes.to))
    return fail(error, "Cast to data type " + str(*attributes.to) +
                           " is not evaluated on the host");
  const HostTensor &input = *in[0];
  int32_t target = static_cast<int32_t>(*attributes.to);
  result.dataType = target;
  result.shape = input.shape;
  result.splat = input.splat;
  for (size_t i = 0; i < storedCount(input); ++i)
    if (!castElement(input, i, target, result, error))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Indexing and data movement
//===----------------------------------------------------------------------===//

bool evaluateGather(const Operands &in, const HostAttributes &attributes, HostTensor &result,
                    std::string &error) {
  const HostTensor &data = *in[0], &indices = *in[1];
  if (!isIndexType(indices.dataType))
    return fail(error, "Gather indices must be INT32 or INT64, not " +
                           typeName(indices.dataType));
  int64_t rank = static_cast<int64_t>(data.shape.size()), axis = 0;
  if (!normalizeAxis("Gather", attributes.axis.value_or(0), rank, axis, error))
    return false;
  int64_t axisSize = data.shape[axis];
  std::vector<int64_t> positions;
  if (indices.numElements() > 0)
    for (int64_t index : indices.ints) {
      if (index < -axisSize || index >= axisSize)
        return fail(error, "Gather index " + str(index) + " out of range for axis of size " +
                               str(axisSize));
      positions.push_back(index < 0 ? index + axisSize : index);
    }
  std::vector<int64_t> shape;
  std::string ruleError;
  if (!kernels::gatherShape(data.shape, indices.shape, axis, shape, ruleError))
    return fail(error, "Gather: " + ruleError);
  if (!checkResultShape("Gather", shape, data.splat, error))
    return false;
  if (data.splat) {
    result = reshaped(data, shape);
    return true;
  }
  result.dataType = data.dataType;
  result.shape = shape;
  if (elementCount(shape) == 0)
    return true;
  int64_t outer = productOf(data.shape, 0, axis);
  int64_t inner = productOf(data.shape, axis + 1, data.shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < indices.numElements(); ++k)
      for (int64_t i = 0; i < inner; ++i)
        appendElement(result, data,
                      (o * axisSize + positions[indices.splat ? 0 : k]) * inner + i);
  return true;
}

struct SliceRange {
  int64_t start, step, count;
};

/// One axis of Slice after the ONNX clamping rules (kernels::clampOnnxSlice).
SliceRange resolveSliceRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
  kernels::ClampedSlice bounds = kernels::clampOnnxSlice(start, end, step, dim);
  return {bounds.start, bounds.step, kernels::sliceLength(bounds.start, bounds.limit, bounds.step)};
}

/// Slice's optional `axes` (default 0..n-1) and `steps` (default 1) inputs.
bool readSliceAxesAndSteps(const Operands &in, size_t count, int64_t rank,
                           std::vector<int64_t> &axes, std::vector<int64_t> &steps,
                           std::string &error) {
  std::vector<int64_t> given(count);
  for (size_t i = 0; i < count; ++i)
    given[i] = static_cast<int64_t>(i);
  if (in.size() > 3 && in[3] && !readIndexVector("Slice axes", *in[3], given, error))
    return false;
  steps.assign(count, 1);
  if (in.size() > 4 && in[4] && !readIndexVector("Slice steps", *in[4], steps, error))
    return false;
  if (given.size() != count || steps.size() != count)
    return fail(error, "Slice has " + str(count) + " starts but " + str(given.size()) +
                           " axes and " + str(steps.size()) + " steps");
  if (std::find(steps.begin(), steps.end(), 0) != steps.end())
    return fail(error, "Slice step cannot be 0");
  return normalizeAxes("Slice", given, rank, axes, error);
}

bool evaluateSlice(const Operands &in, const HostAttributes &, HostTensor &result,
                   std::string &error) {
  const HostTensor &data = *in[0];
  std::vector<int64_t> starts, ends, axes, steps;
  if (!readIndexVector("Slice starts", *in[1], starts, error) ||
      !readIndexVector("Slice ends", *in[2], ends, error))
    return false;
  if (starts.size() != ends.size())
    return fail(error, "Slice has " + str(starts.size()) + " starts but " + str(ends.size()) +
                           " ends");
  int64_t rank = static_cast<int64_t>(data.shape.size());
  if (!readSliceAxesAndSteps(in, starts.size(), rank, axes, steps, error))
    return false;
  std::vector<int64_t> shape = data.shape, sourceStrides = rowMajorStrides(data.shape);
  std::vector<int64_t> strides = sourceStrides;
  int64_t base = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i];
    SliceRange range = resolveSliceRange(starts[i], ends[i], steps[i], data.shape[axis]);
    shape[axis] = range.count;
    base += range.start * sourceStrides[axis];
    strides[axis] = range.step * sourceStrides[axis];
  }
  result = viewOf(data, shape, base, strides);
  return true;
}

bool evaluateExpand(const Operands &in, const HostAttributes &, HostTensor &result,
                    std::string &error) {
  const HostTensor &data = *in[0];
  std::vector<int64_t> target, shape;
  if (!readIndexVector("Expand shape", *in[1], target, error))
    return false;
  kernels::BroadcastConflict conflict;
  if (!kernels::broadcastShapes({data.shape, target}, shape, conflict))
    return fail(error, "Expand cannot broadcast dimension of size " + str(conflict.size) +
                           " against " + str(conflict.against));
  if (!checkResultShape("Expand", shape, data.splat, error))
    return false;
  result = viewOf(data, shape, 0, broadcastStrides(data, shape));
  return true;
}

bool evaluateTranspose(const Operands &in, const HostAttributes &attributes,
                       HostTensor &result, std::string &error) {
  const HostTensor &data = *in[0];
  size_t rank = data.shape.size();
  std::vector<int64_t> perm(rank);
  for (size_t d = 0; d < rank; ++d)
    perm[d] = static_cast<int64_t>(rank - 1 - d);
  if (attributes.perm)
    perm = *attributes.perm;
  if (perm.size() != rank)
    return fail(error, "Transpose perm has " + str(perm.size()) + " entries for rank " +
                           str(rank));
  std::vector<int64_t> shape;
  std::string ruleError;
  if (!kernels::transposeShape(data.shape, perm, shape, ruleError))
    return fail(error, "Transpose perm is not a permutation of the " + str(rank) + " axes");
  std::vector<int64_t> sourceStrides = rowMajorStrides(data.shape), strides(rank);
  for (size_t d = 0; d < rank; ++d)
    strides[d] = sourceStrides[perm[d]];
  result = viewOf(data, shape, 0, strides);
  return true;
}

/// Checks that the Concat operands agree on everything but the axis, naming the operand that
/// does not, and returns the result shape (the memc ops' rule).
bool concatShape(const Operands &in, int64_t axis, std::vector<int64_t> &shape,
                 std::string &error) {
  const HostTensor &first = *in[0];
  std::vector<kernels::Shape> shapes;
  for (size_t k = 0; k < in.size(); ++k) {
    const HostTensor &operand = *in[k];
    if (!checkSameType("Concat", first, operand, error))
      return false;
    if (operand.shape.size() != first.shape.size())
      return fail(error, "Concat input " + str(k) + " has rank " + str(operand.shape.size()) +
                             ", expected " + str(first.shape.size()));
    for (size_t d = 0; d < first.shape.size(); ++d)
      if (static_cast<int64_t>(d) != axis && operand.shape[d] != first.shape[d])
        return fail(error, "Concat input " + str(k) + " has dimension " + str(d) +
                               " of size " + str(operand.shape[d]) + ", expected " +
                               str(first.shape[d]));
    shapes.push_back(operand.shape);
  }
  std::string ruleError;
  if (!kernels::concatShape(shapes, axis, shape, ruleError))
    return fail(error, "Concat: " + ruleError);
  return true;
}

bool evaluateConcat(const Operands &in, const HostAttributes &attributes, HostTensor &result,
                    std::string &error) {
  if (!attributes.axis)
    return fail(error, "Concat needs an axis attribute");
  int64_t axis = 0;
  std::vector<int64_t> shape;
  if (!normalizeAxis("Concat", *attributes.axis, static_cast<int64_t>(in[0]->shape.size()),
                     axis, error) ||
      !concatShape(in, axis, shape, error) || !checkResultShape("Concat", shape, false, error))
    return false;
  result.dataType = in[0]->dataType;
  result.shape = shape;
  if (elementCount(shape) == 0)
    return true;
  int64_t outer = productOf(shape, 0, axis);
  int64_t inner = productOf(shape, axis + 1, shape.size());
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor *operand : in) {
      int64_t chunk = operand->shape[axis] * inner;
      for (int64_t j = 0; j < chunk; ++j)
        appendElement(result, *operand, o * chunk + j);
    }
  return true;
}

//===----------------------------------------------------------------------===//
// Shape changes
//===----------------------------------------------------------------------===//

bool evaluateUnsqueeze(const Operands &in, const HostAttributes &attributes,
                       HostTensor &result, std::string &error) {
  const HostTensor &data = *in[0];
  std::optional<std::vector<int64_t>> axes;
  if (!readAxesOperand("Unsqueeze", in, attributes, axes, error))
    return false;
  if (!axes)
    return fail(error, "Unsqueeze needs axes");
  int64_t rank = static_cast<int64_t>(data.shape.size() + axes->size());
  std::vector<int64_t> normalized;
  if (!normalizeAxes("Unsqueeze", *axes, rank, normalized, error))
    return false;
  std::vector<bool> inserted = axisMask(normalized, rank);
  std::vector<int64_t> shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : data.shape[next++]);
  result = reshaped(data, shape);
  return true;
}

bool evaluateSqueeze(const Operands &in, const HostAttributes &attributes, HostTensor &result,
                     std::string &error) {
  const HostTensor &data = *in[0];
  std::optional<std::vector<int64_t>> axes;
  if (!readAxesOperand("Squeeze", in, attributes, axes, error))
    return false;
  size_t rank = data.shape.size();
  std::vector<bool> removed(rank);
  for (size_t d = 0; d < rank; ++d)
    removed[d] = data.shape[d] == 1;
  // Empty axes squeeze every unit dimension, as absent ones do (onnxruntime reads them so).
  if (axes && !axes->empty()) {
    std::vector<int64_t> normalized;
    if (!normalizeAxes("Squeeze", *axes, static_cast<int64_t>(rank), normalized, error))
      return false;
    for (int64_t axis : normalized)
      if (data.shape[axis] != 1)
        return fail(error, "Squeeze axis " + str(axis) + " has size " +
                               str(data.shape[axis]) + ", not 1");
    removed = axisMask(normalized, rank);
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d)
    if (!removed[d])
      shape.push_back(data.shape[d]);
  result = reshaped(data, shape);
  return true;
}

/// Reshape's target: 0 copies the input dimension at the same position (allowzero = 0), and a
/// single -1 takes whatever size keeps the element count.
bool resolveReshape(const HostTensor &data, std::vector<int64_t> &shape, std::string &error) {
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) {
      if (i >= data.shape.size())
        return fail(error, "Reshape copies dimension " + str(i) + " of a rank " +
                               str(data.shape.size()) + " input");
      shape[i] = data.shape[i];
    }
    if (shape[i] == -1) {
      if (inferred)
        return fail(error, "Reshape shape has more than one -1");
      inferred = i;
      continue;
    }
    if (shape[i] < 0)
      return fail(error, "Reshape shape has a negative dimension " + str(shape[i]));
    if (mulOverflows(known, shape[i]))
      return fail(error, "Reshape shape has more elements than int64 can count");
    known *= shape[i];
  }
  int64_t count = data.numElements();
  if (inferred) {
    if (known == 0 || count % known != 0)
      return fail(error, "Reshape cannot infer -1: " + str(count) +
                             " elements do not divide into groups of " + str(known));
    shape[*inferred] = count / known;
  } else if (known != count) {
    return fail(error, "Reshape of " + str(count) + " elements to a shape of " + str(known));
  }
  return true;
}

bool evaluateReshape(const Operands &in, const HostAttributes &, HostTensor &result,
                     std::string &error) {
  std::vector<int64_t> shape;
  if (!readIndexVector("Reshape shape", *in[1], shape, error) ||
      !resolveReshape(*in[0], shape, error))
    return false;
  result = reshaped(*in[0], shape);
  return true;
}

//===----------------------------------------------------------------------===//
// Reductions and generators
//===----------------------------------------------------------------------===//

/// Multiplies `factor` into one ReduceProd accumulator, in the precision of `type`.
bool multiplyInto(HostTensor &result, int64_t slot, const HostTensor &data, int64_t index,
                  std::string &error) {
  if (data.isFloating()) {
    double &product = result.floats[slot];
    product = roundFloating(product * data.floatAt(index), data.dataType);
    return true;
  }
  int64_t product = 0;
  if (!integerArithmetic(Arithmetic::Mul, result.ints[slot], data.intAt(index), data.dataType,
                         product, error))
    return false;
  result.ints[slot] = product;
  return true;
}

/// ReduceProd's reduced axes: empty or absent means all (noop_with_empty_axes = 0).
bool reducedAxes(const Operands &in, const HostAttributes &attributes, size_t rank,
                 std::vector<bool> &reduced, std::string &error) {
  std::optional<std::vector<int64_t>> axes;
  std::vector<int64_t> normalized;
  if (!readAxesOperand("ReduceProd", in, attributes, axes, error))
    return false;
  if (!axes || axes->empty()) {
    reduced.assign(rank, true);
    return true;
  }
  if (!normalizeAxes("ReduceProd", *axes, static_cast<int64_t>(rank), normalized, error))
    return false;
  reduced = axisMask(normalized, rank);
  return true;
}

bool evaluateReduceProd(const Operands &in, const HostAttributes &attributes,
                        HostTensor &result, std::string &error) {
  const HostTensor &data = *in[0];
  if (data.dataType == kBool)
    return fail(error, "ReduceProd does not take BOOL");
  size_t rank = data.shape.size();
  std::vector<bool> reduced;
  if (!reducedAxes(in, attributes, rank, reduced, error))
    return false;
  // Every input element is visited, so a splat must be small enough to walk.
  int64_t inputCount = data.numElements();
  if (inputCount > kMaxHostElements)
    return fail(error, "ReduceProd input has " + str(inputCount) + " elements, more than the " +
                           str(kMaxHostElements) + " evaluated on the host");
  std::vector<int64_t> kept = data.shape, shape;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d])
      kept[d] = 1;
    if (!reduced[d] || attributes.keepdims != 0)
      shape.push_back(kept[d]);
  }
  if (!checkResultShape("ReduceProd", shape, false, error))
    return false;
  int64_t count = elementCount(shape).value_or(0);
  result.dataType = data.dataType;
  result.shape = shape;
  if (data.isFloating())
    result.floats.assign(count, 1.0);
  else
    result.ints.assign(count, 1);
  // Walk the input in order; each element lands in the accumulator of its kept coordinates.
  std::vector<int64_t> strides = rowMajorStrides(kept);
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d])
      strides[d] = 0;
  StridedWalk walk(data.shape, strides, 0);
  for (int64_t i = 0; i < inputCount; ++i, walk.advance())
    if (!multiplyInto(result, walk.offset(), data, i, error))
      return false;
  return true;
}

bool integerRange(int64_t start, int64_t limit, int64_t delta, HostTensor &result,
                  std::string &error) {
  // The span is computed in uint64 because limit - start may not fit in int64.
  uint64_t span = 0, stride = 1;
  if (delta > 0 && limit > start) {
    span = static_cast<uint64_t>(limit) - static_cast<uint64_t>(start);
    stride = static_cast<uint64_t>(delta);
  } else if (delta < 0 && start > limit) {
    span = static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
    stride = uint64_t(0) - static_cast<uint64_t>(delta);
  }
  uint64_t count = span == 0 ? 0 : (span - 1) / stride + 1;
  if (count > static_cast<uint64_t>(kMaxHostElements))
    return fail(error, "Range has " + std::to_string(count) + " elements, more than the " +
                           str(kMaxHostElements) + " evaluated on the host");
  // Every value stays within [start, limit), so stepping between them cannot overflow.
  int64_t value = start;
  for (uint64_t i = 0; i < count; ++i) {
    result.ints.push_back(value);
    if (i + 1 < count)
      value += delta;
  }
  result.shape = {static_cast<int64_t>(count)};
  return true;
}

bool floatingRange(double start, double limit, double delta, HostTensor &result,
                   std::string &error) {
  double steps = std::ceil((limit - start) / delta);
  if (std::isnan(steps))
    return fail(error, "Range from " + std::to_string(start) + " to " + std::to_string(limit) +
                           " by " + std::to_string(delta) + " has no element count");
  if (steps > static_cast<double>(kMaxHostElements))
    return fail(error, "Range has " + std::to_string(steps) + " elements, more than the " +
                           str(kMaxHostElements) + " evaluated on the host");
  int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
  for (int64_t i = 0; i < count; ++i)
    result.floats.push_back(roundFloating(start + static_cast<double>(i) * delta,
                                          result.dataType));
  result.shape = {count};
  return true;
}

bool evaluateRange(const Operands &in, const HostAttributes &, HostTensor &result,
                   std::string &error) {
  const HostTensor &start = *in[0], &limit = *in[1], &delta = *in[2];
  if (!checkSameType("Range", start, limit, error) ||
      !checkSameType("Range", start, delta, error))
    return false;
  int32_t type = start.dataType;
  if (type != kFloat && type != kDouble && type != kInt16 && type != kInt32 && type != kInt64)
    return fail(error, "Range does not take " + typeName(type));
  for (const HostTensor *bound : in)
    if (bound->numElements() != 1 || bound->shape.size() > 1)
      return fail(error, "Range start, limit and delta must be scalars");
  if (delta.floatAt(0) == 0)
    return fail(error, "Range delta cannot be 0");
  result.dataType = type;
  if (start.isFloating())
    return floatingRange(start.floatAt(0), limit.floatAt(0), delta.floatAt(0), result, error);
  return integerRange(start.intAt(0), limit.intAt(0), delta.intAt(0), result, error);
}

bool evaluateConstantOfShape(const Operands &in, const HostAttributes &attributes,
                             HostTensor &result, std::string &error) {
  std::vector<int64_t> shape;
  if (!readIndexVector("ConstantOfShape shape", *in[0], shape, error))
    return false;
  for (int64_t dim : shape)
    if (dim < 0)
      return fail(error, "ConstantOfShape dimension " + str(dim) + " is negative");
  if (!checkResultShape("ConstantOfShape", shape, /*splat=*/true, error))
    return false;
  HostTensor value = attributes.value.value_or(HostTensor::ofFloats(kFloat, {1}, {0.0}));
  std::string detail;
  if (!checkWellFormed(value, detail))
    return fail(error, "ConstantOfShape value: " + detail);
  if (value.numElements() != 1)
    return fail(error, "ConstantOfShape value must hold one element, not " +
                           str(value.numElements()));
  result.dataType = value.dataType;
  result.shape = shape;
  result.splat = true;
  appendElement(result, value, 0);
  return true;
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

using Evaluator = bool (*)(const Operands &, const HostAttributes &, HostTensor &,
                           std::string &);

constexpr size_t kVariadic = std::numeric_limits<size_t>::max();

/// An op evaluated on the host. Inputs below `minInputs` are required; a variadic op requires
/// all of them.
struct HostOp {
  const char *name;
  size_t minInputs, maxInputs;
  Evaluator evaluate;
};

const HostOp kHostOps[] = {
    {"Add", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateArithmetic(Arithmetic::Add, in, out, error);
     }},
    {"Cast", 1, 1, evaluateCast},
    {"Concat", 1, kVariadic, evaluateConcat},
    {"ConstantOfShape", 1, 1, evaluateConstantOfShape},
    {"Expand", 2, 2, evaluateExpand},
    {"Div", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateArithmetic(Arithmetic::Div, in, out, error);
     }},
    {"Equal", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateComparison(Comparison::Equal, "Equal", in, out, error);
     }},
    {"Gather", 2, 2, evaluateGather},
    {"Greater", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateComparison(Comparison::Greater, "Greater", in, out, error);
     }},
    {"Identity", 1, 1, evaluateIdentity},
    {"Less", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateComparison(Comparison::Less, "Less", in, out, error);
     }},
    {"Mul", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateArithmetic(Arithmetic::Mul, in, out, error);
     }},
    {"Neg", 1, 1, evaluateNeg},
    {"Not", 1, 1, evaluateNot},
    {"Range", 3, 3, evaluateRange},
    {"ReduceProd", 1, 2, evaluateReduceProd},
    {"Reshape", 2, 2, evaluateReshape},
    {"Slice", 3, 5, evaluateSlice},
    {"Squeeze", 1, 2, evaluateSqueeze},
    {"Sub", 2, 2,
     [](const Operands &in, const HostAttributes &, HostTensor &out, std::string &error) {
       return evaluateArithmetic(Arithmetic::Sub, in, out, error);
     }},
    {"Transpose", 1, 1, evaluateTranspose},
    {"Unsqueeze", 1, 2, evaluateUnsqueeze},
    {"Where", 3, 3, evaluateWhere},
};

const HostOp *findHostOp(const std::string &opType) {
  for (const HostOp &op : kHostOps)
    if (opType == op.name)
      return &op;
  return nullptr;
}

std::string arityText(const HostOp &op) {
  if (op.maxInputs == kVariadic)
    return "at least " + str(op.minInputs);
  if (op.minInputs == op.maxInputs)
    return str(op.minInputs);
  return str(op.minInputs) + " to " + str(op.maxInputs);
}

/// Input count, presence of required inputs, and well-formedness of every present one.
bool checkOperands(const HostOp &op, const Operands &inputs, std::string &error) {
  if (inputs.size() < op.minInputs || inputs.size() > op.maxInputs)
    return fail(error, std::string(op.name) + " takes " + arityText(op) + " inputs, not " +
                           str(inputs.size()));
  size_t required = op.maxInputs == kVariadic ? inputs.size() : op.minInputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string detail;
    if (!inputs[i] && i < required)
      return fail(error, std::string(op.name) + " input " + str(i) + " is missing");
    if (inputs[i] && !checkWellFormed(*inputs[i], detail))
      return fail(error, std::string(op.name) + " input " + str(i) + ": " + detail);
  }
  return true;
}

} // namespace

/// A 1-D tensor of integers that parameterizes an op (starts, axes, a shape), read whole.
bool readIndexVector(const std::string &what, const HostTensor &tensor,
                     std::vector<int64_t> &values, std::string &error) {
  if (!isIndexType(tensor.dataType))
    return fail(error, what + " must be INT32 or INT64, not " + typeName(tensor.dataType));
  if (tensor.shape.size() != 1)
    return fail(error, what + " must be 1-D, not rank " + str(tensor.shape.size()));
  if (tensor.numElements() > kMaxHostElements)
    return fail(error, what + " has " + str(tensor.numElements()) + " entries, too many");
  values = tensor.toInts();
  return true;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

bool HostTensor::isFloating() const { return isFloatingOnnxType(dataType); }

int64_t HostTensor::numElements() const { return elementCount(shape).value_or(-1); }

// Reads outside the storage yield 0 instead of undefined behavior: a malformed tensor must not
// crash whoever inspects it.
int64_t HostTensor::intAt(int64_t index) const {
  if (isFloating())
    return saturatingTruncate(floatAt(index));
  size_t slot = splat ? 0 : static_cast<size_t>(index);
  return slot < ints.size() ? ints[slot] : 0;
}

double HostTensor::floatAt(int64_t index) const {
  if (!isFloating())
    return static_cast<double>(intAt(index));
  size_t slot = splat ? 0 : static_cast<size_t>(index);
  return slot < floats.size() ? floats[slot] : 0.0;
}

std::vector<int64_t> HostTensor::toInts() const {
  std::vector<int64_t> values;
  int64_t count = splat ? numElements() : static_cast<int64_t>(storedCount(*this));
  // A splat too large to expand yields nothing rather than exhausting memory.
  if (count < 0 || count > kMaxHostElements)
    return values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(intAt(i));
  return values;
}

HostTensor HostTensor::ofInts(int32_t dataType, std::vector<int64_t> shape,
                              std::vector<int64_t> values) {
  HostTensor tensor;
  tensor.dataType = dataType;
  tensor.shape = std::move(shape);
  tensor.ints = std::move(values);
  return tensor;
}

HostTensor HostTensor::ofFloats(int32_t dataType, std::vector<int64_t> shape,
                                std::vector<double> values) {
  HostTensor tensor;
  tensor.dataType = dataType;
  tensor.shape = std::move(shape);
  tensor.floats = std::move(values);
  return tensor;
}

HostTensor HostTensor::splatOf(int32_t dataType, std::vector<int64_t> shape, double value) {
  HostTensor tensor;
  tensor.dataType = dataType;
  tensor.shape = std::move(shape);
  tensor.splat = true;
  if (tensor.isFloating())
    tensor.floats = {roundFloating(value, dataType)};
  else if (dataType == kBool)
    tensor.ints = {value != 0};
  else
    tensor.ints = {wrapInteger(saturatingTruncate(value), dataType)};
  return tensor;
}

/// Split's outputs: slices along the axis, of the sizes its second input (or, before opset 13,
/// its `split` attribute) gives, or equal parts (the last smaller) for each of its outputs.
/// torch.onnx.export writes repeat_interleave as a Split of constants whose parts size Expands.
bool evaluateSplit(const std::vector<const HostTensor *> &in, const HostAttributes &attributes,
                   std::vector<HostTensor> &outputs, std::string &error) {
  if (in.empty() || !in[0] || in.size() > 2)
    return fail(error, "Split takes an input and optional split sizes");
  const HostTensor &data = *in[0];
  int64_t axis = 0;
  if (!normalizeAxis("Split", attributes.axis.value_or(0), static_cast<int64_t>(data.shape.size()),
                     axis, error))
    return false;
  int64_t length = data.shape[axis];
  std::vector<int64_t> sizes;
  if (in.size() > 1 && in[1]) {
    if (!readIndexVector("Split sizes", *in[1], sizes, error))
      return false;
  } else if (attributes.split) {
    sizes = *attributes.split;
  } else {
    int64_t parts = static_cast<int64_t>(attributes.outputCount);
    int64_t part = (length + parts - 1) / std::max<int64_t>(1, parts);
    for (int64_t k = 0; k < parts; ++k)
      sizes.push_back(std::max<int64_t>(0, std::min(part, length - k * part)));
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return fail(error, "Split sizes must not be negative");
    total += size;
  }
  if (total != length || sizes.size() != attributes.outputCount)
    return fail(error, "Split sizes sum to " + str(total) + " over " + str(sizes.size()) +
                           " parts; the axis has " + str(length) + " and the node " +
                           str(attributes.outputCount) + " outputs");
  std::vector<int64_t> strides = rowMajorStrides(data.shape);
  int64_t offset = 0;
  for (int64_t size : sizes) {
    std::vector<int64_t> shape = data.shape;
    shape[axis] = size;
    outputs.push_back(viewOf(data, shape, offset * strides[axis], strides));
    offset += size;
  }
  return true;
}

bool isHostEvaluable(const std::string &opType) {
  return opType == "Split" || findHostOp(opType) != nullptr;
}

bool evaluateOnHost(const std::string &opType, const std::vector<const HostTensor *> &inputs,
                    const HostAttributes &attributes, std::vector<HostTensor> &outputs,
                    std::string &error) {
  outputs.clear();
  if (opType == "Split")
    return evaluateSplit(inputs, attributes, outputs, error);
  const HostOp *op = findHostOp(opType);
  if (!op)
    return fail(error, opType + " is not evaluated on the host");
  HostTensor result;
  if (!checkOperands(*op, inputs, error) || !op->evaluate(inputs, attributes, result, error))
    return false;
  outputs.push_back(std::move(result));
  return true;
}

} // namespace memc
