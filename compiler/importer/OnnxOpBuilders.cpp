//===- OnnxOpBuilders.cpp - one builder per ONNX op type ------------------===//
//
// The importer's table (onnx-mlir style): ONNX op type -> a function that reads the node's
// inputs and attributes through NodeImporter and emits memc ops in canonical form. Operands
// that ONNX computes at run time but memc needs static (shapes, axes, bounds) must be host
// constants by now: the importer folds shape subgraphs before they reach these builders.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/NodeImporter.h"
#include "compiler/importer/OnnxTypes.h"
#include "dialects/memc/ShapeInference.h"
#include "kernels/ShapeRules.h"
#include "runtime/support/NumberRange.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

using namespace mlir;

namespace memc {
namespace {

FailureOr<int64_t> normalizeAxis(NodeImporter &n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return n.error("axis " + std::to_string(axis) + " out of range for rank " +
                   std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

/// Sorted, unique, non-negative axes.
FailureOr<SmallVector<int64_t>> normalizeAxes(NodeImporter &n, ArrayRef<int64_t> axes,
                                              int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(n, axis, rank);
    if (failed(normalized))
      return failure();
    result.push_back(*normalized);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end())
    return n.error("axes repeat a dimension");
  return result;
}

/// Axes given as the `axes` attribute (older opsets) or as input `index` (newer ones).
FailureOr<std::optional<std::vector<int64_t>>> axesOperand(NodeImporter &n, size_t index) {
  if (n.attribute("axes")) {
    FailureOr<std::vector<int64_t>> axes = n.intsAttr("axes", std::nullopt);
    if (failed(axes))
      return failure();
    return std::optional<std::vector<int64_t>>(*axes);
  }
  if (!n.hasInput(index))
    return std::optional<std::vector<int64_t>>();
  FailureOr<HostTensor> axes = n.requireConstant(index, "axes");
  if (failed(axes))
    return failure();
  return std::optional<std::vector<int64_t>>(axes->toInts());
}

LogicalResult defineResult(NodeImporter &n, FailureOr<Value> result) {
  if (failed(result))
    return failure();
  n.setOutput(0, *result);
  return success();
}

LogicalResult expectInputs(NodeImporter &n, size_t minimum, size_t maximum) {
  size_t count = n.numInputs();
  if (count < minimum || count > maximum || !n.hasInput(0))
    return n.error("expects " + std::to_string(minimum) +
                   (maximum == minimum ? "" : " to " + std::to_string(maximum)) +
                   " inputs, got " + std::to_string(count));
  return success();
}

Value scalarConstant(NodeImporter &n, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element = isa<FloatType>(elementType)
                          ? Attribute(FloatAttr::get(elementType, value))
                          : Attribute(IntegerAttr::get(elementType, int64_t(value)));
  return n.builder.create<ConstantOp>(n.location(), DenseElementsAttr::get(type, element));
}

RankedTensorType withShape(Value value, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, getElementTypeOrSelf(value));
}

FailureOr<Value> reshapeTo(NodeImporter &n, Value value, ArrayRef<int64_t> shape) {
  if (cast<RankedTensorType>(value.getType()).getShape() == shape)
    return value;
  return n.createTyped<ReshapeOp>(withShape(value, shape), value);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// ONNX requires the data operands of elementwise ops to share one type (Where's condition
/// aside); say which types differ rather than failing verification.
LogicalResult requireSameElementType(NodeImporter &n, ArrayRef<Value> operands) {
  size_t first = n.node.op_type() == "Where" ? 1 : 0;
  for (size_t i = first + 1; i < operands.size(); ++i) {
    Type expected = getElementTypeOrSelf(operands[first]), actual = getElementTypeOrSelf(operands[i]);
    if (expected != actual) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "operand types differ: " << expected << " and " << actual;
      return n.error(text);
    }
  }
  return success();
}

/// Before opset 7, binary ops broadcast only with `broadcast = 1`, aligning the second operand's
/// dimensions at `axis` of the first (trailing dimensions when absent): reshape it so that
/// numpy broadcasting does the same.
LogicalResult applyLegacyBroadcast(NodeImporter &n, SmallVectorImpl<Value> &operands) {
  if (n.opset >= 7 || operands.size() != 2 || !n.attribute("axis"))
    return success();
  FailureOr<int64_t> broadcast = n.intAttr("broadcast", 0), axis = n.intAttr("axis", 0);
  if (failed(broadcast) || failed(axis))
    return failure();
  ArrayRef<int64_t> lhs = cast<RankedTensorType>(operands[0].getType()).getShape();
  ArrayRef<int64_t> rhs = cast<RankedTensorType>(operands[1].getType()).getShape();
  int64_t rank = lhs.size();
  if (!*broadcast)
    return success();
  int64_t start = *axis < 0 ? *axis + rank : *axis;
  if (start < 0 || start + static_cast<int64_t>(rhs.size()) > rank)
    return n.error("legacy broadcast axis out of range");
  SmallVector<int64_t> aligned(rhs);
  aligned.append(rank - start - rhs.size(), 1);
  FailureOr<Value> reshaped = reshapeTo(n, operands[1], aligned);
  if (failed(reshaped))
    return failure();
  operands[1] = *reshaped;
  return success();
}

template <typename OpT, size_t Arity>
LogicalResult importElementwise(NodeImporter &n) {
  if (failed(expectInputs(n, Arity, Arity)))
    return failure();
  FailureOr<SmallVector<Value>> operands = n.elementwiseInputs();
  if (failed(operands) || failed(requireSameElementType(n, *operands)) ||
      failed(applyLegacyBroadcast(n, *operands)))
    return failure();
  return defineResult(n, n.create1<OpT>(*operands));
}

/// Max and Min take one or more operands: a chain of binary ops, left to right.
template <typename OpT>
LogicalResult importVariadic(NodeImporter &n) {
  if (failed(expectInputs(n, 1, std::numeric_limits<size_t>::max())))
    return failure();
  FailureOr<SmallVector<Value>> operands = n.elementwiseInputs();
  if (failed(operands) || failed(requireSameElementType(n, *operands)))
    return failure();
  FailureOr<Value> result = (*operands)[0];
  for (size_t i = 1; i < operands->size() && succeeded(result); ++i)
    result = n.create1<OpT>({*result, (*operands)[i]});
  return defineResult(n, result);
}

/// LeakyRelu, Elu and HardSigmoid: one operand and scalar coefficients with ONNX's defaults.
template <typename OpT>
LogicalResult importScaledActivation(NodeImporter &n,
                                     ArrayRef<std::pair<StringRef, double>> coefficients) {
  if (failed(expectInputs(n, 1, 1)))
    return failure();
  FailureOr<Value> input = n.input(0);
  if (failed(input))
    return failure();
  SmallVector<NamedAttribute> attributes;
  for (auto [name, fallback] : coefficients) {
    FailureOr<double> value = n.floatAttr(name, fallback);
    if (failed(value))
      return failure();
    if (!std::isfinite(*value))
      return n.error("attribute '" + name.str() + "' must be finite");
    attributes.push_back(n.named(name, n.builder.getF64FloatAttr(*value)));
  }
  return defineResult(n, n.create1<OpT>(*input, attributes));
}

/// Before opset 7, PRelu's 1-D slope holds one value per channel (axis 1), or one for all;
/// later it broadcasts as numpy does.
LogicalResult importPRelu(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<SmallVector<Value>> operands = n.elementwiseInputs();
  if (failed(operands) || failed(requireSameElementType(n, *operands)))
    return failure();
  ArrayRef<int64_t> input = cast<RankedTensorType>((*operands)[0].getType()).getShape();
  ArrayRef<int64_t> slope = cast<RankedTensorType>((*operands)[1].getType()).getShape();
  if (n.opset < 7 && slope.size() == 1 && slope[0] != 1 && input.size() >= 2) {
    SmallVector<int64_t> perChannel(input.size() - 1, 1);
    perChannel[0] = slope[0];
    FailureOr<Value> reshaped = reshapeTo(n, (*operands)[1], perChannel);
    if (failed(reshaped))
      return failure();
    (*operands)[1] = *reshaped;
  }
  return defineResult(n, n.create1<PReluOp>(*operands));
}

LogicalResult importPow(NodeImporter &n) {
  // The result has the base's type; the exponent may have another, so convert it.
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<Value> base = n.input(0);
  if (failed(base))
    return failure();
  Type baseType = getElementTypeOrSelf(*base);
  FailureOr<Value> exponent = n.input(1, n.constantInput(1) ? std::optional<Type>(baseType)
                                                            : std::nullopt);
  if (failed(exponent))
    return failure();
  if (getElementTypeOrSelf(*exponent) != baseType) {
    auto exponentType = cast<RankedTensorType>(exponent->getType());
    if (failed(exponent = n.createTyped<CastOp>(exponentType.clone(baseType), *exponent)))
      return failure();
  }
  SmallVector<Value> operands = {*base, *exponent};
  if (failed(applyLegacyBroadcast(n, operands)))
    return failure();
  return defineResult(n, n.create1<PowOp>(operands));
}

LogicalResult importGelu(NodeImporter &n) {
  FailureOr<std::string> approximate = n.stringAttr("approximate", "none");
  FailureOr<Value> input = n.input(0);
  if (failed(approximate) || failed(input))
    return failure();
  return defineResult(
      n, n.create1<GeluOp>(*input, n.named("approximate", n.builder.getStringAttr(*approximate))));
}

LogicalResult importClip(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  if (failed(input))
    return failure();
  SmallVector<NamedAttribute> bounds;
  for (auto [index, name] : {std::pair<size_t, StringRef>(1, "min"), {2, "max"}}) {
    std::optional<double> bound;
    if (n.hasInput(index)) {
      FailureOr<HostTensor> value = n.requireConstant(index, "Clip bound");
      if (failed(value))
        return failure();
      if (value->numElements() != 1)
        return n.error("Clip bounds must be scalars");
      bound = value->isFloating() ? value->floatAt(0) : double(value->intAt(0));
    } else if (n.attribute(name)) { // opset 6 form
      FailureOr<double> value = n.floatAttr(name, std::nullopt);
      if (failed(value))
        return failure();
      bound = *value;
    }
    if (bound)
      bounds.push_back(n.named(name, n.builder.getF64FloatAttr(*bound)));
  }
  return defineResult(n, n.create1<ClipOp>(*input, bounds));
}

/// Cast's target type: an int since opset 6, the type's name ("FLOAT") before.
FailureOr<int64_t> castTarget(NodeImporter &n) {
  if (n.opset >= 6)
    return n.intAttr("to", std::nullopt);
  FailureOr<std::string> name = n.stringAttr("to", std::nullopt);
  if (failed(name))
    return failure();
  onnx::TensorProto::DataType type;
  if (!onnx::TensorProto::DataType_Parse(*name, &type))
    return n.error("unknown type name '" + *name + "' in 'to'");
  return static_cast<int64_t>(type);
}

/// Defines the node's result as `input` converted to `elementType`.
LogicalResult defineCast(NodeImporter &n, Value input, Type elementType) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == elementType)
    return defineResult(n, input);
  return defineResult(n, n.createTyped<CastOp>(type.clone(elementType), input));
}

LogicalResult importCast(NodeImporter &n) {
  FailureOr<int64_t> to = castTarget(n);
  FailureOr<Value> input = n.input(0);
  if (failed(to) || failed(input))
    return failure();
  Type elementType = elementTypeFor(n.builder.getContext(), *to);
  if (!elementType)
    return n.error("casts to " + onnxDataTypeName(*to) + ", which memc does not support");
  return defineCast(n, *input, elementType);
}

/// CastLike (opset 15) casts to the element type of its second input, whose values it ignores.
LogicalResult importCastLike(NodeImporter &n) {
  FailureOr<Value> input = n.input(0), like = n.input(1);
  if (failed(input) || failed(like))
    return failure();
  return defineCast(n, *input, cast<RankedTensorType>(like->getType()).getElementType());
}

LogicalResult importTrilu(NodeImporter &n) {
  FailureOr<int64_t> upper = n.intAttr("upper", 1);
  FailureOr<Value> input = n.input(0);
  if (failed(upper) || failed(input))
    return failure();
  int64_t k = 0;
  if (n.hasInput(1)) {
    FailureOr<HostTensor> value = n.requireConstant(1, "Trilu's k");
    if (failed(value))
      return failure();
    if (value->numElements() != 1)
      return n.error("k must be a scalar");
    k = value->intAt(0);
  }
  return defineResult(n, n.create1<TriluOp>(*input, {n.named("k", n.builder.getI64IntegerAttr(k)),
                                                      n.named("upper", n.builder.getBoolAttr(*upper != 0))}));
}

/// The seed of a Dropout without a `seed` attribute (torch.onnx.export never writes one): the
/// xxh3 hash of the node's name as messages give it (an unrolled Loop body's names carry the
/// iteration) and of its first output (unique in the graph even where names repeat). One seed
/// for all would make every dropout on a same-shaped tensor draw the same mask in a step, where
/// PyTorch draws independent ones; a hash keeps the masks of a model the same from run to run.
int64_t seedFromNodeIdentity(const NodeImporter &n) {
  std::string identity = n.node.op_type();
  if (auto name = dyn_cast<NameLoc>(n.location()))
    identity = name.getName().str();
  if (n.numOutputs() > 0)
    identity += "\n" + n.node.output(0);
  return static_cast<int64_t>(llvm::xxh3_64bits(identity));
}

LogicalResult importDropout(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> seed = n.intAttr("seed", seedFromNodeIdentity(n));
  if (failed(input) || failed(seed))
    return failure();
  bool training = false;
  double ratio = 0.5;
  if (n.hasInput(1)) {
    FailureOr<HostTensor> value = n.requireConstant(1, "Dropout ratio");
    if (failed(value))
      return failure();
    ratio = value->numElements() == 1 ? value->floatAt(0) : -1;
  } else if (n.attribute("ratio")) {
    FailureOr<double> value = n.floatAttr("ratio", std::nullopt);
    if (failed(value))
      return failure();
    ratio = *value;
  }
  if (n.hasInput(2)) {
    FailureOr<HostTensor> value = n.requireConstant(2, "Dropout training_mode");
    if (failed(value))
      return failure();
    training = value->numElements() == 1 && value->intAt(0) != 0;
  }
  if (failed(n.requireOutputsUnused(1, "memc keeps dropout masks internal")))
    return failure();
  if (!training || ratio == 0.0)
    return defineResult(n, *input); // inference: the identity
  return defineResult(
      n, n.create1<DropoutOp>(*input, {n.named("ratio", n.builder.getF64FloatAttr(ratio)),
                                       n.named("seed", n.builder.getI64IntegerAttr(*seed))}));
}

LogicalResult importIdentity(NodeImporter &n) {
  if (failed(expectInputs(n, 1, 1)))
    return failure();
  return defineResult(n, n.input(0));
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalization
//===----------------------------------------------------------------------===//

LogicalResult importMatMul(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<Value> lhs = n.input(0), rhs = n.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  return defineResult(n, n.create1<MatMulOp>({*lhs, *rhs}));
}

FailureOr<Value> transpose2d(NodeImporter &n, Value value) {
  return n.create1<TransposeOp>(value,
                                n.named("perm", n.builder.getDenseI64ArrayAttr({1, 0})));
}

/// Gemm is `alpha * op(A) @ op(B) + beta * C`: a matmul, transposes where asked, scalings
/// only when they are not 1, and a broadcasting add.
LogicalResult importGemm(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 3)))
    return failure();
  FailureOr<int64_t> transA = n.intAttr("transA", 0), transB = n.intAttr("transB", 0);
  FailureOr<double> alpha = n.floatAttr("alpha", 1.0), beta = n.floatAttr("beta", 1.0);
  FailureOr<Value> a = n.input(0), b = n.input(1);
  if (failed(transA) || failed(transB) || failed(alpha) || failed(beta) || failed(a) ||
      failed(b))
    return failure();
  for (Value operand : {*a, *b})
    if (cast<RankedTensorType>(operand.getType()).getRank() != 2)
      return n.error("Gemm operands must be matrices");
  if (*transA && failed(a = transpose2d(n, *a)))
    return failure();
  if (*transB && failed(b = transpose2d(n, *b)))
    return failure();
  FailureOr<Value> product = n.create1<MatMulOp>({*a, *b});
  if (failed(product))
    return failure();
  Type elementType = getElementTypeOrSelf(*product);
  if (*alpha != 1.0 &&
      failed(product = n.create1<MulOp>({*product, scalarConstant(n, elementType, *alpha)})))
    return failure();
  if (!n.hasInput(2) || *beta == 0.0)
    return defineResult(n, product);
  FailureOr<Value> c = n.input(2, elementType);
  if (failed(c))
    return failure();
  if (*beta != 1.0 && failed(c = n.create1<MulOp>({*c, scalarConstant(n, elementType, *beta)})))
    return failure();
  return defineResult(n, n.create1<AddOp>({*product, *c}));
}

/// Einsum's subscripts: one term of letters per operand and the output's (explicit after
/// "->", else the letters appearing once, in alphabetical order).
struct EinsumSubscripts {
  SmallVector<std::string> inputs;
  std::string output;
};

FailureOr<EinsumSubscripts> parseEinsum(NodeImporter &n, StringRef equation, size_t operands) {
  std::string text;
  for (char c : equation)
    if (c != ' ')
      text.push_back(c);
  if (StringRef(text).contains("..."))
    return n.error("equation '" + equation.str() + "': ellipses are not supported");
  StringRef spec(text);
  auto [lhs, rhs] = spec.split("->");
  bool explicitOutput = spec.contains("->");
  EinsumSubscripts subscripts;
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  for (StringRef term : terms) {
    if (!llvm::all_of(term, [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
      return n.error("equation '" + equation.str() + "': subscripts must be letters");
    std::string letters = term.str();
    std::string sorted = letters;
    llvm::sort(sorted);
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return n.error("equation '" + equation.str() +
                     "': a letter repeated within one operand (a diagonal) is not supported");
    subscripts.inputs.push_back(letters);
  }
  if (subscripts.inputs.size() != operands)
    return n.error("equation '" + equation.str() + "' has " +
                   std::to_string(subscripts.inputs.size()) + " terms for " +
                   std::to_string(operands) + " inputs");
  if (explicitOutput) {
    subscripts.output = rhs.str();
    std::string sorted = subscripts.output;
    llvm::sort(sorted);
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return n.error("equation '" + equation.str() + "': the output repeats a letter");
  } else {
    std::map<char, int> counts;
    for (const std::string &term : subscripts.inputs)
      for (char c : term)
        ++counts[c];
    for (auto [letter, count] : counts)
      if (count == 1)
        subscripts.output.push_back(letter);
  }
  for (char c : subscripts.output)
    if (llvm::none_of(subscripts.inputs,
                      [&](const std::string &term) { return term.find(c) != std::string::npos; }))
      return n.error("equation '" + equation.str() + "': output letter '" + std::string(1, c) +
                     "' names no input dimension");
  return subscripts;
}

/// `value`, whose dimensions `letters` name, with the dimensions not in `keep` summed away.
FailureOr<Value> sumLettersAway(NodeImporter &n, Value value, std::string &letters,
                                StringRef keep) {
  SmallVector<int64_t> axes;
  std::string kept;
  for (size_t i = 0; i < letters.size(); ++i) {
    if (keep.contains(letters[i]))
      kept.push_back(letters[i]);
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return value;
  letters = kept;
  return n.create1<ReduceSumOp>(value, {n.named("axes", n.builder.getDenseI64ArrayAttr(axes)),
                                        n.named("keepdims", n.builder.getBoolAttr(false))});
}

/// `value`, whose dimensions `letters` name, transposed into the order of `order`.
FailureOr<Value> transposeLetters(NodeImporter &n, Value value, StringRef letters,
                                  StringRef order) {
  SmallVector<int64_t> perm;
  for (char c : order)
    perm.push_back(letters.find(c));
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  return n.create1<TransposeOp>(value, n.named("perm", n.builder.getDenseI64ArrayAttr(perm)));
}

/// Einsum of one or two operands (the contractions attention and bilinear layers write):
/// letters only one side has and the output lacks are summed first; the rest become a batched
/// matmul [batch, kept A, contracted] x [batch, contracted, kept B], reshaped and transposed
/// into the output's order.
LogicalResult importEinsum(NodeImporter &n) {
  if (failed(expectInputs(n, 1, 2)))
    return failure();
  FailureOr<std::string> equation = n.stringAttr("equation", std::nullopt);
  if (failed(equation))
    return failure();
  FailureOr<EinsumSubscripts> subscripts = parseEinsum(n, *equation, n.numInputs());
  if (failed(subscripts))
    return failure();
  SmallVector<Value> operands;
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    FailureOr<Value> operand = n.input(i);
    if (failed(operand))
      return failure();
    ArrayRef<int64_t> shape = cast<RankedTensorType>(operand->getType()).getShape();
    const std::string &letters = subscripts->inputs[i];
    if (shape.size() != letters.size())
      return n.error("term '" + letters + "' names " + std::to_string(letters.size()) +
                     " dimensions of an input of rank " + std::to_string(shape.size()));
    for (size_t d = 0; d < shape.size(); ++d) {
      auto [it, inserted] = sizes.insert({letters[d], shape[d]});
      if (!inserted && it->second != shape[d])
        return n.error("letter '" + std::string(1, letters[d]) + "' has sizes " +
                       std::to_string(it->second) + " and " + std::to_string(shape[d]) +
                       " (memc does not broadcast einsum dimensions)");
    }
    operands.push_back(*operand);
  }
  std::string output = subscripts->output;
  if (operands.size() == 1) {
    std::string letters = subscripts->inputs[0];
    FailureOr<Value> summed = sumLettersAway(n, operands[0], letters, output);
    if (failed(summed))
      return failure();
    return defineResult(n, transposeLetters(n, *summed, letters, output));
  }
  std::string a = subscripts->inputs[0], b = subscripts->inputs[1];
  // Each side keeps what the output or the other side needs.
  FailureOr<Value> lhs = sumLettersAway(n, operands[0], a, output + b);
  FailureOr<Value> rhs = sumLettersAway(n, operands[1], b, output + a);
  if (failed(lhs) || failed(rhs))
    return failure();
  std::string batch, keptA, keptB, contracted;
  for (char c : a) {
    bool inB = b.find(c) != std::string::npos, inOutput = output.find(c) != std::string::npos;
    (inB ? (inOutput ? batch : contracted) : keptA).push_back(c);
  }
  for (char c : b)
    if (a.find(c) == std::string::npos)
      keptB.push_back(c);
  auto product = [&](StringRef letters) {
    int64_t total = 1;
    for (char c : letters)
      total *= sizes[c];
    return total;
  };
  int64_t batchSize = product(batch), m = product(keptA), k = product(contracted),
          width = product(keptB);
  FailureOr<Value> lhsOrdered = transposeLetters(n, *lhs, a, batch + keptA + contracted);
  FailureOr<Value> rhsOrdered = transposeLetters(n, *rhs, b, batch + contracted + keptB);
  FailureOr<Value> lhsMatrix, rhsMatrix, matrix;
  if (failed(lhsOrdered) || failed(rhsOrdered) ||
      failed(lhsMatrix = reshapeTo(n, *lhsOrdered, {batchSize, m, k})) ||
      failed(rhsMatrix = reshapeTo(n, *rhsOrdered, {batchSize, k, width})) ||
      failed(matrix = n.create1<MatMulOp>({*lhsMatrix, *rhsMatrix})))
    return failure();
  std::string letters = batch + keptA + keptB;
  SmallVector<int64_t> shape;
  for (char c : letters)
    shape.push_back(sizes[c]);
  FailureOr<Value> unflattened = reshapeTo(n, *matrix, shape);
  if (failed(unflattened))
    return failure();
  return defineResult(n, transposeLetters(n, *unflattened, letters, output));
}

template <typename OpT>
LogicalResult importSoftmax(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  if (failed(input))
    return failure();
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  // Before opset 13 softmax flattened the input at `axis` (default 1); the same as one-axis
  // softmax only when `axis` is the last dimension.
  FailureOr<int64_t> axis = n.intAttr("axis", n.opset >= 13 ? -1 : 1);
  if (failed(axis) || failed(axis = normalizeAxis(n, *axis, rank)))
    return failure();
  if (n.opset < 13 && *axis != rank - 1)
    return n.error("before opset 13, softmax over several trailing axes is not supported");
  return defineResult(n, n.create1<OpT>(*input, n.named("axis", n.builder.getI64IntegerAttr(*axis))));
}

/// The mean of `x` over `axes` (dimensions kept), and, when asked, `x - mean` and the inverse
/// standard deviation 1 / sqrt(mean((x - mean)^2) + epsilon): the statistics every
/// normalization memc composes from canonical ops shares, so their gradients follow the ops'.
struct NormalizationMoments {
  Value mean, centered, inverseStdDev;
};

FailureOr<NormalizationMoments> normalizationMoments(NodeImporter &n, Value x,
                                                     ArrayRef<int64_t> axes, double epsilon,
                                                     bool needDeviation) {
  auto meanOver = [&](Value value) {
    return n.create1<ReduceMeanOp>(value, {n.named("axes", n.builder.getDenseI64ArrayAttr(axes)),
                                           n.named("keepdims", n.builder.getBoolAttr(true))});
  };
  FailureOr<Value> mean = meanOver(x);
  if (failed(mean))
    return failure();
  if (!needDeviation)
    return NormalizationMoments{*mean, Value(), Value()};
  Type elementType = getElementTypeOrSelf(x);
  FailureOr<Value> centered = n.create1<SubOp>({x, *mean});
  FailureOr<Value> squared, variance, shifted, deviation, inverse;
  if (failed(centered) || failed(squared = n.create1<MulOp>({*centered, *centered})) ||
      failed(variance = meanOver(*squared)) ||
      failed(shifted = n.create1<AddOp>({*variance, scalarConstant(n, elementType, epsilon)})) ||
      failed(deviation = n.create1<SqrtOp>(*shifted)) ||
      failed(inverse = n.create1<ReciprocalOp>(*deviation)))
    return failure();
  return NormalizationMoments{*mean, *centered, *inverse};
}

/// LayerNormalization's optional Mean and InvStdDev outputs, over axes `axis..rank-1` with
/// kept dimensions, in the stash type (f32 unless stash_type says the input's): computed apart
/// from layer_norm, only when the graph reads them.
LogicalResult defineLayerNormStatistics(NodeImporter &n, Value input, int64_t axis,
                                        double epsilon) {
  if (!n.isOutputUsed(1) && !n.isOutputUsed(2))
    return success();
  FailureOr<int64_t> stashType = n.intAttr("stash_type", 1);
  if (failed(stashType))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  Type stash = *stashType == 1 ? Type(n.builder.getF32Type()) : type.getElementType();
  FailureOr<Value> x = input;
  if (stash != type.getElementType() && failed(x = n.createTyped<CastOp>(type.clone(stash), input)))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t dim = axis; dim < type.getRank(); ++dim)
    axes.push_back(dim);
  FailureOr<NormalizationMoments> moments =
      normalizationMoments(n, *x, axes, epsilon, n.isOutputUsed(2));
  if (failed(moments))
    return failure();
  n.setOutput(1, moments->mean);
  if (n.isOutputUsed(2))
    n.setOutput(2, moments->inverseStdDev);
  return success();
}

LogicalResult importLayerNormalization(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 3)))
    return failure();
  FailureOr<Value> input = n.input(0);
  if (failed(input))
    return failure();
  Type elementType = getElementTypeOrSelf(*input);
  FailureOr<Value> scale = n.input(1, elementType);
  FailureOr<int64_t> axis = n.intAttr("axis", -1);
  FailureOr<double> epsilon = n.floatAttr("epsilon", 1e-5);
  if (failed(scale) || failed(axis) || failed(epsilon))
    return failure();
  if (failed(axis = normalizeAxis(n, *axis, cast<RankedTensorType>(input->getType()).getRank())))
    return failure();
  SmallVector<Value> operands = {*input, *scale};
  if (n.hasInput(2)) {
    FailureOr<Value> bias = n.input(2, elementType);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
  }
  if (failed(defineLayerNormStatistics(n, *input, *axis, *epsilon)))
    return failure();
  return defineResult(
      n, n.create1<LayerNormOp>(operands, {n.named("axis", n.builder.getI64IntegerAttr(*axis)),
                                           n.named("epsilon", n.builder.getF64FloatAttr(*epsilon))}));
}

LogicalResult importBatchNormalization(NodeImporter &n) {
  if (failed(expectInputs(n, 5, 5)) ||
      failed(n.requireOutputsUnused(
          1, "memc builds running-statistics updates itself; export the model in eval mode")))
    return failure();
  FailureOr<double> epsilon = n.floatAttr("epsilon", 1e-5), momentum = n.floatAttr("momentum", 0.9);
  FailureOr<int64_t> training = n.intAttr("training_mode", 0);
  if (failed(epsilon) || failed(momentum) || failed(training))
    return failure();
  SmallVector<Value> operands;
  for (size_t i = 0; i < 5; ++i) {
    FailureOr<Value> operand = n.input(i);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  return defineResult(
      n, n.create1<BatchNormOp>(operands,
                                {n.named("epsilon", n.builder.getF64FloatAttr(*epsilon)),
                                 n.named("momentum", n.builder.getF64FloatAttr(*momentum)),
                                 n.named("training", n.builder.getBoolAttr(*training != 0))}));
}

/// `(x - mean) / sqrt(var + epsilon)` over axes `first..rank-1`.
FailureOr<Value> normalizeOver(NodeImporter &n, Value x, int64_t first, double epsilon) {
  SmallVector<int64_t> axes;
  for (int64_t dim = first; dim < cast<RankedTensorType>(x.getType()).getRank(); ++dim)
    axes.push_back(dim);
  FailureOr<NormalizationMoments> moments = normalizationMoments(n, x, axes, epsilon, true);
  if (failed(moments))
    return failure();
  return n.create1<MulOp>({moments->centered, moments->inverseStdDev});
}

/// Per-channel values [C] as [C, 1, ...], which numpy broadcasting lines up with dimension 1
/// of a tensor of `rank`.
FailureOr<Value> channelColumn(NodeImporter &n, Value perChannel, int64_t rank) {
  SmallVector<int64_t> alongChannels(rank - 1, 1);
  alongChannels[0] = cast<RankedTensorType>(perChannel.getType()).getNumElements();
  return reshapeTo(n, perChannel, alongChannels);
}

/// `x * scale + bias`, `scale` and `bias` holding one value per index of dimension 1 of `x`.
FailureOr<Value> scaleAndShiftChannels(NodeImporter &n, Value x, Value scale, Value bias) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  FailureOr<Value> scaleColumn = channelColumn(n, scale, rank);
  FailureOr<Value> biasColumn = channelColumn(n, bias, rank);
  FailureOr<Value> scaled;
  if (failed(scaleColumn) || failed(biasColumn) ||
      failed(scaled = n.create1<MulOp>({x, *scaleColumn})))
    return failure();
  return n.create1<AddOp>({*scaled, *biasColumn});
}

/// Scale or bias input `index` of a normalization: `count` values of `x`'s element type.
FailureOr<Value> affineInput(NodeImporter &n, size_t index, Type elementType, int64_t count,
                             StringRef what, StringRef per) {
  FailureOr<Value> value = n.input(index, elementType);
  if (failed(value))
    return failure();
  if (cast<RankedTensorType>(value->getType()).getNumElements() != count)
    return n.error(what + " has " +
                   std::to_string(cast<RankedTensorType>(value->getType()).getNumElements()) +
                   " values, expected one per " + per + " (" + std::to_string(count) + ")");
  return value;
}

/// InstanceNormalization: each (sample, channel) normalized over its spatial dimensions.
/// nn.InstanceNorm and nn.GroupNorm (between two reshapes) export it.
LogicalResult importInstanceNormalization(NodeImporter &n) {
  if (failed(expectInputs(n, 3, 3)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<double> epsilon = n.floatAttr("epsilon", 1e-5);
  if (failed(input) || failed(epsilon))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (type.getRank() < 3)
    return n.error("expects an NC[D]HW input of rank 3 or more");
  Type elementType = type.getElementType();
  FailureOr<Value> scale = affineInput(n, 1, elementType, type.getDimSize(1), "scale", "channel");
  FailureOr<Value> bias = affineInput(n, 2, elementType, type.getDimSize(1), "B", "channel");
  if (failed(scale) || failed(bias))
    return failure();
  FailureOr<Value> normalized = normalizeOver(n, *input, 2, *epsilon);
  if (failed(normalized))
    return failure();
  return defineResult(n, scaleAndShiftChannels(n, *normalized, *scale, *bias));
}

/// GroupNormalization (opset 18): channels in `num_groups` groups, each (sample, group)
/// normalized over its channels and spatial dimensions, [N, C, ...] -> [N, G, C/G * ...] and
/// back. At opset 18 scale and bias hold one value per group (opset 21, which memc does not
/// import yet, makes them per channel).
LogicalResult importGroupNormalization(NodeImporter &n) {
  if (failed(expectInputs(n, 3, 3)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<double> epsilon = n.floatAttr("epsilon", 1e-5);
  FailureOr<int64_t> groups = n.intAttr("num_groups", std::nullopt);
  if (failed(input) || failed(epsilon) || failed(groups))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (type.getRank() < 3)
    return n.error("expects an NC[D]HW input of rank 3 or more");
  int64_t channels = type.getDimSize(1);
  if (*groups <= 0 || channels % *groups != 0)
    return n.error("num_groups " + std::to_string(*groups) + " does not divide the " +
                   std::to_string(channels) + " channels");
  Type elementType = type.getElementType();
  FailureOr<Value> scale = affineInput(n, 1, elementType, *groups, "scale", "group");
  FailureOr<Value> bias = affineInput(n, 2, elementType, *groups, "bias", "group");
  if (failed(scale) || failed(bias))
    return failure();
  int64_t perGroup = channels / *groups;
  for (int64_t dim = 2; dim < type.getRank(); ++dim)
    perGroup *= type.getDimSize(dim);
  FailureOr<Value> grouped = reshapeTo(n, *input, {type.getDimSize(0), *groups, perGroup});
  FailureOr<Value> normalized, shifted;
  if (failed(grouped) || failed(normalized = normalizeOver(n, *grouped, 2, *epsilon)) ||
      failed(shifted = scaleAndShiftChannels(n, *normalized, *scale, *bias)))
    return failure();
  return defineResult(n, reshapeTo(n, *shifted, type.getShape()));
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename OpT>
LogicalResult importReduce(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> keepdims = n.intAttr("keepdims", 1);
  FailureOr<int64_t> noopWithEmptyAxes = n.intAttr("noop_with_empty_axes", 0);
  FailureOr<std::optional<std::vector<int64_t>>> axes = axesOperand(n, 1);
  if (failed(input) || failed(keepdims) || failed(noopWithEmptyAxes) || failed(axes))
    return failure();
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  std::vector<int64_t> given = axes->value_or(std::vector<int64_t>{});
  if (given.empty()) {
    if (*noopWithEmptyAxes)
      return defineResult(n, *input);
    given.resize(rank);
    std::iota(given.begin(), given.end(), 0);
  }
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(n, given, rank);
  if (failed(normalized))
    return failure();
  return defineResult(
      n, n.create1<OpT>(*input, {n.named("axes", n.builder.getDenseI64ArrayAttr(*normalized)),
                                 n.named("keepdims", n.builder.getBoolAttr(*keepdims != 0))}));
}

LogicalResult importCumSum(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<HostTensor> axisTensor = n.requireConstant(1, "axis");
  FailureOr<int64_t> exclusive = n.intAttr("exclusive", 0), reverse = n.intAttr("reverse", 0);
  if (failed(input) || failed(axisTensor) || failed(exclusive) || failed(reverse))
    return failure();
  if (axisTensor->numElements() != 1)
    return n.error("axis must be a scalar");
  FailureOr<int64_t> axis = normalizeAxis(n, axisTensor->intAt(0),
                                          cast<RankedTensorType>(input->getType()).getRank());
  if (failed(axis))
    return failure();
  return defineResult(
      n, n.create1<CumSumOp>(*input, {n.named("axis", n.builder.getI64IntegerAttr(*axis)),
                                      n.named("exclusive", n.builder.getBoolAttr(*exclusive != 0)),
                                      n.named("reverse", n.builder.getBoolAttr(*reverse != 0))}));
}

/// TopK: k from input 1 (opset 10 on) or the attribute; always sorted, which sorted = 0 allows.
LogicalResult importTopK(NodeImporter &n) {
  if (failed(expectInputs(n, 1, 2)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> axis = n.intAttr("axis", -1), largest = n.intAttr("largest", 1);
  if (failed(input) || failed(axis) || failed(largest))
    return failure();
  auto type = cast<RankedTensorType>(input->getType());
  if (failed(axis = normalizeAxis(n, *axis, type.getRank())))
    return failure();
  int64_t k;
  if (n.opset < 10) {
    FailureOr<int64_t> given = n.intAttr("k", std::nullopt);
    if (failed(given))
      return failure();
    k = *given;
  } else {
    FailureOr<HostTensor> given = n.requireConstant(1, "K");
    if (failed(given))
      return failure();
    if (given->numElements() != 1)
      return n.error("K must hold one value");
    k = given->intAt(0);
  }
  if (k < 0 || k > type.getDimSize(*axis))
    return n.error("K " + std::to_string(k) + " is not within dimension " + std::to_string(*axis) +
                   " of size " + std::to_string(type.getDimSize(*axis)));
  FailureOr<Operation *> topK =
      n.create<TopKOp>(*input, {n.named("axis", n.builder.getI64IntegerAttr(*axis)),
                                n.named("k", n.builder.getI64IntegerAttr(k)),
                                n.named("largest", n.builder.getBoolAttr(*largest != 0))});
  if (failed(topK))
    return failure();
  n.setOutput(0, (*topK)->getResult(0));
  n.setOutput(1, (*topK)->getResult(1));
  return success();
}

LogicalResult importGlobalAveragePool(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  if (failed(input))
    return failure();
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  if (rank < 3)
    return n.error("expects an NC[D]HW input");
  SmallVector<int64_t> spatial;
  for (int64_t dim = 2; dim < rank; ++dim)
    spatial.push_back(dim);
  return defineResult(
      n, n.create1<ReduceMeanOp>(*input, {n.named("axes", n.builder.getDenseI64ArrayAttr(spatial)),
                                          n.named("keepdims", n.builder.getBoolAttr(true))}));
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

LogicalResult importTranspose(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  if (failed(input))
    return failure();
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  FailureOr<std::vector<int64_t>> perm = n.intsAttr("perm", reversed);
  if (failed(perm))
    return failure();
  return defineResult(n, n.create1<TransposeOp>(*input, n.named("perm", n.builder.getDenseI64ArrayAttr(*perm))));
}

/// Reshape's target: input 1 since opset 5, the `shape` attribute before.
FailureOr<std::vector<int64_t>> reshapeTarget(NodeImporter &n) {
  if (n.opset < 5) {
    if (failed(expectInputs(n, 1, 1)))
      return failure();
    return n.intsAttr("shape", std::nullopt);
  }
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<HostTensor> shapeTensor = n.requireConstant(1, "the target shape");
  if (failed(shapeTensor))
    return failure();
  std::vector<int64_t> target;
  if (std::string error; !readIndexVector("the target shape", *shapeTensor, target, error))
    return n.error(error);
  return target;
}

LogicalResult importReshape(NodeImporter &n) {
  FailureOr<std::vector<int64_t>> given = reshapeTarget(n);
  if (failed(given))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> allowZero = n.intAttr("allowzero", 0);
  if (failed(input) || failed(allowZero))
    return failure();
  ArrayRef<int64_t> inputShape = cast<RankedTensorType>(input->getType()).getShape();
  std::vector<int64_t> target = *given;
  std::optional<size_t> inferred;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !*allowZero) {
      if (i >= inputShape.size())
        return n.error("shape entry 0 copies a dimension the input does not have");
      target[i] = inputShape[i];
    }
    if (target[i] == -1 && !inferred) {
      inferred = i;
      continue;
    }
    if (target[i] < 0)
      return n.error("invalid target shape " + formatShape(*given));
    if (target[i] > 0 && known > std::numeric_limits<int64_t>::max() / target[i])
      return n.error("target shape overflows");
    known *= target[i];
  }
  int64_t total = numElements(inputShape);
  if (inferred) {
    if (known == 0 || total % known != 0)
      return n.error("cannot reshape " + formatShape(inputShape) + " to " +
                     formatShape(*given));
    target[*inferred] = total / known;
  }
  if (numElements(target) != total)
    return n.error("cannot reshape " + formatShape(inputShape) + " (" + std::to_string(total) +
                   " elements) to " + formatShape(target));
  return defineResult(n, reshapeTo(n, *input, target));
}

LogicalResult importFlatten(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> axis = n.intAttr("axis", 1);
  if (failed(input) || failed(axis))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  int64_t rank = shape.size();
  if (*axis < -rank || *axis > rank)
    return n.error("axis out of range");
  int64_t split = *axis < 0 ? *axis + rank : *axis;
  return defineResult(n, reshapeTo(n, *input, {numElements(shape.take_front(split)),
                                               numElements(shape.drop_front(split))}));
}

LogicalResult importSqueeze(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<std::optional<std::vector<int64_t>>> axes = axesOperand(n, 1);
  if (failed(input) || failed(axes))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  SmallVector<int64_t> squeezed;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(n, **axes, shape.size());
    if (failed(normalized))
      return failure();
    squeezed = *normalized;
  } else {
    for (size_t dim = 0; dim < shape.size(); ++dim)
      if (shape[dim] == 1)
        squeezed.push_back(dim);
  }
  SmallVector<int64_t> result;
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    bool drop = llvm::is_contained(squeezed, static_cast<int64_t>(dim));
    if (drop && shape[dim] != 1)
      return n.error("cannot squeeze dimension " + std::to_string(dim) + " of size " +
                     std::to_string(shape[dim]));
    if (!drop)
      result.push_back(shape[dim]);
  }
  return defineResult(n, reshapeTo(n, *input, result));
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<std::optional<std::vector<int64_t>>> axes = axesOperand(n, 1);
  if (failed(input) || failed(axes))
    return failure();
  if (!*axes)
    return n.error("missing axes");
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  int64_t rank = shape.size() + (*axes)->size();
  FailureOr<SmallVector<int64_t>> inserted = normalizeAxes(n, **axes, rank);
  if (failed(inserted))
    return failure();
  SmallVector<int64_t> result;
  const int64_t *next = shape.begin();
  for (int64_t dim = 0; dim < rank; ++dim)
    result.push_back(llvm::is_contained(*inserted, dim) ? 1 : *next++);
  return defineResult(n, reshapeTo(n, *input, result));
}

LogicalResult importConcat(NodeImporter &n) {
  FailureOr<SmallVector<Value>> inputs = n.elementwiseInputs();
  // Before opset 4 the axis could be left out, meaning 1.
  FailureOr<int64_t> axis = n.intAttr("axis", n.opset < 4 ? std::optional<int64_t>(1) : std::nullopt);
  if (failed(inputs) || failed(axis))
    return failure();
  if (inputs->empty())
    return n.error("needs at least one input");
  int64_t rank = cast<RankedTensorType>(inputs->front().getType()).getRank();
  if (failed(axis = normalizeAxis(n, *axis, rank)))
    return failure();
  return defineResult(n, n.create1<ConcatOp>(*inputs, n.named("axis", n.builder.getI64IntegerAttr(*axis))));
}

LogicalResult importSplit(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> axis = n.intAttr("axis", 0);
  if (failed(input) || failed(axis))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  if (failed(axis = normalizeAxis(n, *axis, shape.size())))
    return failure();
  int64_t dim = shape[*axis], pieces = n.numOutputs();
  std::vector<int64_t> sizes;
  if (n.hasInput(1)) {
    FailureOr<HostTensor> split = n.requireConstant(1, "split sizes");
    if (failed(split))
      return failure();
    sizes = split->toInts();
  } else if (n.attribute("split")) {
    FailureOr<std::vector<int64_t>> split = n.intsAttr("split", std::nullopt);
    if (failed(split))
      return failure();
    sizes = *split;
  } else {
    // Equal pieces; since opset 18 (num_outputs) the last one may be smaller.
    FailureOr<int64_t> count = n.intAttr("num_outputs", pieces);
    if (failed(count))
      return failure();
    if (*count <= 0 || *count != pieces || (n.opset < 18 && dim % *count != 0))
      return n.error("cannot split a dimension of " + std::to_string(dim) + " into " +
                     std::to_string(*count) + " equal pieces");
    int64_t chunk = (dim + *count - 1) / *count;
    for (int64_t i = 0; i < *count; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  if (static_cast<int64_t>(sizes.size()) != pieces)
    return n.error(std::to_string(sizes.size()) + " split sizes for " +
                   std::to_string(pieces) + " outputs");
  FailureOr<Operation *> op =
      n.create<SplitOp>(*input, {n.named("axis", n.builder.getI64IntegerAttr(*axis)),
                                 n.named("sizes", n.builder.getDenseI64ArrayAttr(sizes))});
  if (failed(op))
    return failure();
  for (auto [index, result] : llvm::enumerate((*op)->getResults()))
    n.setOutput(index, result);
  return success();
}

/// Slice's bounds: inputs since opset 10, attributes before.
struct SliceBounds {
  std::vector<int64_t> starts, ends, axes, steps;
};

FailureOr<SliceBounds> sliceBounds(NodeImporter &n) {
  SliceBounds bounds;
  if (n.opset < 10) {
    FailureOr<std::vector<int64_t>> starts = n.intsAttr("starts", std::nullopt);
    FailureOr<std::vector<int64_t>> ends = n.intsAttr("ends", std::nullopt);
    if (failed(starts) || failed(ends))
      return failure();
    std::vector<int64_t> defaultAxes(starts->size());
    std::iota(defaultAxes.begin(), defaultAxes.end(), 0);
    FailureOr<std::vector<int64_t>> axes = n.intsAttr("axes", defaultAxes);
    if (failed(axes))
      return failure();
    return SliceBounds{*starts, *ends, *axes, std::vector<int64_t>(starts->size(), 1)};
  }
  if (failed(expectInputs(n, 3, 5)))
    return failure();
  FailureOr<HostTensor> starts = n.requireConstant(1, "starts");
  FailureOr<HostTensor> ends = n.requireConstant(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  std::string error;
  if (!readIndexVector("starts", *starts, bounds.starts, error) ||
      !readIndexVector("ends", *ends, bounds.ends, error))
    return n.error(error);
  bounds.axes.resize(bounds.starts.size());
  std::iota(bounds.axes.begin(), bounds.axes.end(), 0);
  bounds.steps.assign(bounds.starts.size(), 1);
  if (n.hasInput(3)) {
    FailureOr<HostTensor> axes = n.requireConstant(3, "axes");
    if (failed(axes))
      return failure();
    if (!readIndexVector("axes", *axes, bounds.axes, error))
      return n.error(error);
  }
  if (n.hasInput(4)) {
    FailureOr<HostTensor> steps = n.requireConstant(4, "steps");
    if (failed(steps))
      return failure();
    if (!readIndexVector("steps", *steps, bounds.steps, error))
      return n.error(error);
  }
  return bounds;
}

LogicalResult importSlice(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<SliceBounds> bounds = sliceBounds(n);
  if (failed(input) || failed(bounds))
    return failure();
  std::vector<int64_t> &starts = bounds->starts, &ends = bounds->ends, &axes = bounds->axes,
                       &steps = bounds->steps;
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  int64_t rank = shape.size();
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return n.error("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> outStarts(rank, 0), outLimits(shape), outSteps(rank, 1);
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(n, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis] || steps[i] == 0)
      return n.error("repeated axis or zero step");
    seen[*axis] = true;
    kernels::ClampedSlice clamped =
        kernels::clampOnnxSlice(starts[i], ends[i], steps[i], shape[*axis]);
    outStarts[*axis] = clamped.start;
    outLimits[*axis] = clamped.limit;
    outSteps[*axis] = clamped.step;
  }
  return defineResult(
      n, n.create1<SliceOp>(*input, {n.named("starts", n.builder.getDenseI64ArrayAttr(outStarts)),
                                     n.named("limits", n.builder.getDenseI64ArrayAttr(outLimits)),
                                     n.named("steps", n.builder.getDenseI64ArrayAttr(outSteps))}));
}

LogicalResult importGather(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<Value> data = n.input(0), indices = n.input(1);
  FailureOr<int64_t> axis = n.intAttr("axis", 0);
  if (failed(data) || failed(indices) || failed(axis))
    return failure();
  auto table = cast<RankedTensorType>(data->getType());
  if (failed(axis = normalizeAxis(n, *axis, table.getRank())))
    return failure();
  SmallVector<NamedAttribute> attributes = {n.named("axis", n.builder.getI64IntegerAttr(*axis))};
  // An embedding lookup of a weight with a padding row (the export helper's memc.padding_idx).
  if (std::optional<int64_t> row = n.paddingRow(0); row && *axis == 0) {
    if (*row >= table.getDimSize(0))
      return n.error("metadata_props 'memc.padding_idx' gives '" + n.node.input(0) + "' row " +
                     std::to_string(*row) + ", past its " + std::to_string(table.getDimSize(0)) +
                     " rows");
    attributes.push_back(n.named("padding_idx", n.builder.getI64IntegerAttr(*row)));
  }
  return defineResult(n, n.create1<GatherOp>({*data, *indices}, attributes));
}

LogicalResult importExpand(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<HostTensor> shape = n.requireConstant(1, "the target shape");
  if (failed(input) || failed(shape))
    return failure();
  std::vector<int64_t> target = shape->toInts();
  Shape result;
  std::string error;
  if (failed(broadcastShapes({cast<RankedTensorType>(input->getType()).getShape(), target},
                             result, error)))
    return n.error(error);
  auto type = withShape(*input, result);
  if (type == input->getType())
    return defineResult(n, *input);
  return defineResult(n, n.createTyped<BroadcastToOp>(type, *input));
}

//===----------------------------------------------------------------------===//
// Pad, Tile, DepthToSpace, SpaceToDepth: canonical forms in slices, concats, broadcasts,
// reshapes and transposes, whose kernels and gradient rules exist already
//===----------------------------------------------------------------------===//

/// `value[start:limit:step]` along `axis` (limit -1 with a negative step: down to index 0).
FailureOr<Value> sliceAlong(NodeImporter &n, Value value, int64_t axis, int64_t start,
                            int64_t limit, int64_t step) {
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  SmallVector<int64_t> starts(shape.size(), 0), limits(shape), steps(shape.size(), 1);
  starts[axis] = start;
  limits[axis] = limit;
  steps[axis] = step;
  return n.create1<SliceOp>(value, {n.named("starts", n.builder.getDenseI64ArrayAttr(starts)),
                                    n.named("limits", n.builder.getDenseI64ArrayAttr(limits)),
                                    n.named("steps", n.builder.getDenseI64ArrayAttr(steps))});
}

/// Pad's begins and ends (pads input from opset 11, attribute before; `axes` from opset 18),
/// one pair per dimension.
FailureOr<std::vector<int64_t>> padAmounts(NodeImporter &n, int64_t rank) {
  std::vector<int64_t> given;
  if (n.opset < 11) {
    // Named `paddings` before opset 2.
    FailureOr<std::vector<int64_t>> pads = n.intsAttr(n.opset < 2 ? "paddings" : "pads", std::nullopt);
    if (failed(pads))
      return failure();
    given = *pads;
  } else {
    FailureOr<HostTensor> pads = n.requireConstant(1, "pads");
    if (failed(pads))
      return failure();
    given = pads->toInts();
  }
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (n.hasInput(3)) {
    FailureOr<HostTensor> axesTensor = n.requireConstant(3, "axes");
    if (failed(axesTensor))
      return failure();
    axes.clear();
    for (int64_t axis : axesTensor->toInts()) {
      FailureOr<int64_t> normalized = normalizeAxis(n, axis, rank);
      if (failed(normalized))
        return failure();
      axes.push_back(*normalized);
    }
  }
  if (given.size() != 2 * axes.size())
    return n.error("pads has " + std::to_string(given.size()) + " values for " +
                   std::to_string(axes.size()) + " axes");
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    pads[axes[i]] = given[i];
    pads[rank + axes[i]] = given[axes.size() + i];
  }
  return pads;
}

/// A constant of `like`'s element type and `shape`, every element `value`.
Value splatConstant(NodeImporter &n, Value like, ArrayRef<int64_t> shape, double value) {
  auto type = withShape(like, shape);
  Type element = type.getElementType();
  Attribute attr = isa<FloatType>(element) ? Attribute(FloatAttr::get(element, value))
                                           : Attribute(IntegerAttr::get(element, int64_t(value)));
  return n.builder.create<ConstantOp>(n.location(), DenseElementsAttr::get(type, attr));
}

/// The `count` elements Pad adds before (`before`) or after `value` along `axis`.
FailureOr<Value> padPiece(NodeImporter &n, Value value, int64_t axis, int64_t count, bool before,
                          StringRef mode, double constant) {
  SmallVector<int64_t> shape(cast<RankedTensorType>(value.getType()).getShape());
  int64_t dim = shape[axis];
  if (mode == "constant") {
    shape[axis] = count;
    return splatConstant(n, value, shape, constant);
  }
  if (dim == 0)
    return n.error("cannot pad an empty dimension in " + mode.str() + " mode");
  if (mode == "edge") {
    FailureOr<Value> edge = before ? sliceAlong(n, value, axis, 0, 1, 1)
                                   : sliceAlong(n, value, axis, dim - 1, dim, 1);
    if (failed(edge))
      return failure();
    shape[axis] = count;
    return n.createTyped<BroadcastToOp>(withShape(value, shape), *edge);
  }
  // reflect: the mirror image without the edge element itself.
  if (count > dim - 1)
    return n.error("reflect padding of " + std::to_string(count) + " exceeds dimension " +
                   std::to_string(axis) + " of size " + std::to_string(dim) + " minus 1");
  return before ? sliceAlong(n, value, axis, count, 0, -1)
                : sliceAlong(n, value, axis, dim - 2, dim - 2 - count, -1);
}

/// Pad, one axis at a time: negative amounts crop (a slice), positive ones concatenate the
/// constant, edge or reflected pieces.
LogicalResult importPad(NodeImporter &n) {
  FailureOr<Value> input = n.input(0);
  FailureOr<std::string> mode = n.stringAttr("mode", "constant");
  if (failed(input) || failed(mode))
    return failure();
  if (*mode != "constant" && *mode != "reflect" && *mode != "edge")
    return n.error("unsupported mode '" + *mode + "' (memc pads constant, reflect or edge)");
  int64_t rank = cast<RankedTensorType>(input->getType()).getRank();
  FailureOr<std::vector<int64_t>> pads = padAmounts(n, rank);
  if (failed(pads))
    return failure();
  double constant = 0.0;
  if (n.opset < 11) {
    FailureOr<double> value = n.floatAttr("value", 0.0);
    if (failed(value))
      return failure();
    constant = *value;
  } else if (n.hasInput(2)) {
    FailureOr<HostTensor> value = n.requireConstant(2, "constant_value");
    if (failed(value))
      return failure();
    if (value->numElements() != 1)
      return n.error("constant_value must be a scalar");
    constant = value->isFloating() ? value->floatAt(0) : double(value->intAt(0));
  }
  Value result = *input;
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t begin = (*pads)[axis], end = (*pads)[rank + axis];
    int64_t dim = cast<RankedTensorType>(result.getType()).getDimSize(axis);
    if (begin < 0 || end < 0) {
      int64_t start = std::max<int64_t>(0, -begin), limit = dim - std::max<int64_t>(0, -end);
      if (start > limit)
        return n.error("negative pads remove more than dimension " + std::to_string(axis) +
                       " holds");
      FailureOr<Value> cropped = sliceAlong(n, result, axis, start, limit, 1);
      if (failed(cropped))
        return failure();
      result = *cropped;
    }
    SmallVector<Value> pieces;
    if (begin > 0) {
      FailureOr<Value> piece = padPiece(n, result, axis, begin, true, *mode, constant);
      if (failed(piece))
        return failure();
      pieces.push_back(*piece);
    }
    pieces.push_back(result);
    if (end > 0) {
      FailureOr<Value> piece = padPiece(n, result, axis, end, false, *mode, constant);
      if (failed(piece))
        return failure();
      pieces.push_back(*piece);
    }
    if (pieces.size() == 1)
      continue;
    FailureOr<Value> joined =
        n.create1<ConcatOp>(pieces, n.named("axis", n.builder.getI64IntegerAttr(axis)));
    if (failed(joined))
      return failure();
    result = *joined;
  }
  return defineResult(n, result);
}

/// Tile: [d0, d1, ...] -> [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], merged.
LogicalResult importTile(NodeImporter &n) {
  if (n.opset < 6)
    return n.error("Tile before opset 6 (a scalar count and an axis input) is not supported; "
                   "export at opset 6 or later");
  if (failed(expectInputs(n, 2, 2)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<HostTensor> repeatsTensor = n.requireConstant(1, "repeats");
  if (failed(input) || failed(repeatsTensor))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  std::vector<int64_t> repeats = repeatsTensor->toInts();
  if (repeats.size() != shape.size())
    return n.error("repeats has " + std::to_string(repeats.size()) + " values for rank " +
                   std::to_string(shape.size()));
  SmallVector<int64_t> spread, broadcast, tiled;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (repeats[i] < 0)
      return n.error("repeats must not be negative");
    if (repeats[i] > 0 && shape[i] > std::numeric_limits<int64_t>::max() / repeats[i])
      return n.error("the tiled shape overflows");
    spread.append({1, shape[i]});
    broadcast.append({repeats[i], shape[i]});
    tiled.push_back(repeats[i] * shape[i]);
  }
  FailureOr<Value> spreadOut = reshapeTo(n, *input, spread);
  if (failed(spreadOut))
    return failure();
  FailureOr<Value> repeated = *spreadOut;
  if (spread != broadcast &&
      failed(repeated = n.createTyped<BroadcastToOp>(withShape(*input, broadcast), *spreadOut)))
    return failure();
  return defineResult(n, reshapeTo(n, *repeated, tiled));
}

/// DepthToSpace and SpaceToDepth: a reshape, a transpose and a reshape, as ONNX defines them.
LogicalResult importDepthSpace(NodeImporter &n, bool toSpace) {
  if (failed(expectInputs(n, 1, 1)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> blockSize = n.intAttr("blocksize", std::nullopt);
  FailureOr<std::string> mode = n.stringAttr("mode", "DCR");
  if (failed(input) || failed(blockSize) || failed(mode))
    return failure();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(input->getType()).getShape();
  int64_t b = *blockSize;
  if (shape.size() != 4)
    return n.error("expects an NCHW input");
  if (b <= 0)
    return n.error("blocksize must be positive");
  if (*mode != "DCR" && *mode != "CRD")
    return n.error("unknown mode '" + *mode + "'");
  int64_t batch = shape[0], c = shape[1], h = shape[2], w = shape[3];
  SmallVector<int64_t> split, perm, merged;
  if (toSpace) {
    if (c % (b * b) != 0)
      return n.error("channels " + std::to_string(c) + " are not a multiple of blocksize^2");
    int64_t depth = c / (b * b);
    if (*mode == "DCR") {
      split = {batch, b, b, depth, h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      split = {batch, depth, b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    }
    merged = {batch, depth, h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      return n.error("height and width must be multiples of blocksize");
    split = {batch, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {batch, c * b * b, h / b, w / b};
  }
  FailureOr<Value> blocks = reshapeTo(n, *input, split);
  if (failed(blocks))
    return failure();
  FailureOr<Value> moved =
      n.create1<TransposeOp>(*blocks, n.named("perm", n.builder.getDenseI64ArrayAttr(perm)));
  if (failed(moved))
    return failure();
  return defineResult(n, reshapeTo(n, *moved, merged));
}

//===----------------------------------------------------------------------===//
// Resize: per resized axis, gathers of the input rows each output row reads (nearest: one,
// linear: two, weighted), so the gradient is the gather rule's scatter-add
//===----------------------------------------------------------------------===//

/// One axis of a Resize: its output size, and the scale and unrounded resized length
/// (dim * scale from `scales`, the size from `sizes`) that the coordinate transformations use.
struct ResizedAxis {
  int64_t size;
  double scale, length;
};

/// The input coordinate output index `i` of a resized axis maps to (ONNX's
/// coordinate_transformation_mode).
double resizeSourceCoordinate(StringRef mode, int64_t i, const ResizedAxis &axis, int64_t in) {
  if (mode == "half_pixel")
    return (i + 0.5) / axis.scale - 0.5;
  if (mode == "pytorch_half_pixel")
    return axis.length > 1 ? (i + 0.5) / axis.scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return axis.length > 1 ? double(i) * double(in - 1) / (axis.length - 1) : 0.0;
  if (mode == "tf_half_pixel_for_nn")
    return (i + 0.5) / axis.scale;
  return i / axis.scale; // asymmetric
}

/// ONNX's nearest_mode: which input index a coordinate between two rounds to.
int64_t roundNearest(StringRef mode, double x) {
  double below = std::floor(x);
  if (mode == "floor")
    return int64_t(below);
  if (mode == "ceil")
    return int64_t(std::ceil(x));
  if (x - below == 0.5)
    return int64_t(mode == "round_prefer_ceil" ? below + 1 : below);
  return int64_t(std::round(x));
}

/// A 1-D i64 constant.
Value indexConstant(NodeImporter &n, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({int64_t(values.size())}, n.builder.getI64Type());
  return n.builder.create<ConstantOp>(n.location(), DenseElementsAttr::get(type, values));
}

/// `weights` as a constant of `like`'s element type shaped [count, 1, ...] to broadcast along
/// `axis` of `like`.
Value axisWeights(NodeImporter &n, Value like, int64_t axis, ArrayRef<double> weights) {
  auto likeType = cast<RankedTensorType>(like.getType());
  SmallVector<int64_t> shape(likeType.getRank() - axis, 1);
  shape[0] = weights.size();
  auto type = RankedTensorType::get(shape, likeType.getElementType());
  SmallVector<Attribute> elements;
  for (double weight : weights)
    elements.push_back(FloatAttr::get(likeType.getElementType(), weight));
  return n.builder.create<ConstantOp>(n.location(), DenseElementsAttr::get(type, elements));
}

struct ResizeModes {
  std::string mode, coordinates, nearest;
};

/// `value` resized along `axis`.
FailureOr<Value> resizeAxis(NodeImporter &n, Value value, int64_t axis, const ResizedAxis &target,
                            const ResizeModes &modes) {
  int64_t in = cast<RankedTensorType>(value.getType()).getDimSize(axis);
  SmallVector<int64_t> lower, upper;
  SmallVector<double> lowerWeight, upperWeight;
  for (int64_t i = 0; i < target.size; ++i) {
    double x = resizeSourceCoordinate(modes.coordinates, i, target, in);
    if (modes.mode == "nearest") {
      lower.push_back(std::clamp<int64_t>(roundNearest(modes.nearest, x), 0, in - 1));
      continue;
    }
    // Linear: clamping the coordinate is ONNX's edge padding for two taps.
    x = std::clamp(x, 0.0, double(in - 1));
    int64_t below = int64_t(std::floor(x));
    lower.push_back(below);
    upper.push_back(std::min(below + 1, in - 1));
    upperWeight.push_back(x - below);
    lowerWeight.push_back(1.0 - (x - below));
  }
  auto gatherRows = [&](ArrayRef<int64_t> rows) {
    return n.create1<GatherOp>({value, indexConstant(n, rows)},
                               n.named("axis", n.builder.getI64IntegerAttr(axis)));
  };
  SmallVector<int64_t> identity(in);
  std::iota(identity.begin(), identity.end(), 0);
  if (modes.mode == "nearest")
    return ArrayRef<int64_t>(lower) == ArrayRef<int64_t>(identity) ? value : gatherRows(lower);
  FailureOr<Value> below = gatherRows(lower), above = gatherRows(upper);
  FailureOr<Value> belowPart, abovePart;
  if (failed(below) || failed(above) ||
      failed(belowPart = n.create1<MulOp>({*below, axisWeights(n, *below, axis, lowerWeight)})) ||
      failed(abovePart = n.create1<MulOp>({*above, axisWeights(n, *above, axis, upperWeight)})))
    return failure();
  return n.create1<AddOp>({*belowPart, *abovePart});
}

/// Resize's target per axis: from `sizes`, or floor(dim * scale) from `scales` (whose values
/// the coordinate transformation then uses as they are). Every axis stays within
/// kMaxHostElements (its gather indices are built on the host) and the output within memc's
/// tensor limit.
FailureOr<SmallVector<ResizedAxis>> resizeTargets(NodeImporter &n, ArrayRef<int64_t> shape) {
  int64_t rank = shape.size();
  std::vector<int64_t> resized(rank);
  std::iota(resized.begin(), resized.end(), 0);
  if (n.attribute("axes")) { // opset 18
    FailureOr<std::vector<int64_t>> axes = n.intsAttr("axes", std::nullopt);
    FailureOr<SmallVector<int64_t>> normalized;
    if (failed(axes) || failed(normalized = normalizeAxes(n, *axes, rank)))
      return failure();
    resized.assign(normalized->begin(), normalized->end());
  }
  SmallVector<ResizedAxis> targets;
  for (int64_t dim : shape)
    targets.push_back({dim, 1.0, double(dim)});
  bool haveScales = false;
  if (n.hasInput(2)) {
    FailureOr<HostTensor> given = n.requireConstant(2, "scales");
    if (failed(given))
      return failure();
    if (given->numElements() != 0) {
      if (given->numElements() != int64_t(resized.size()))
        return n.error("scales has " + std::to_string(given->numElements()) + " values for " +
                       std::to_string(resized.size()) + " axes");
      for (size_t i = 0; i < resized.size(); ++i) {
        double scale = given->floatAt(i);
        if (!(scale > 0) || !std::isfinite(scale))
          return n.error("scales must be positive and finite, got " +
                         runtime::formatNumber(scale));
        double length = shape[resized[i]] * scale;
        // Checked before the conversion: floor(4 * 3e18) does not fit an int64 (it came out as 0).
        if (length >= double(kMaxHostElements) + 1)
          return n.error("scale " + runtime::formatNumber(scale) + " resizes dimension " +
                         std::to_string(resized[i]) + " (" + std::to_string(shape[resized[i]]) +
                         ") to " + runtime::formatNumber(std::floor(length)) + ", more than the " +
                         std::to_string(kMaxHostElements) + " a resized axis may have");
        targets[resized[i]] = {int64_t(std::floor(length)), scale, length};
        if (targets[resized[i]].size == 0 && shape[resized[i]] != 0)
          return n.error("scale " + std::to_string(scale) + " resizes dimension " +
                         std::to_string(resized[i]) + " to 0");
      }
      haveScales = true;
    }
  }
  if (n.hasInput(3)) {
    if (haveScales)
      return n.error("gives both scales and sizes");
    FailureOr<HostTensor> given = n.requireConstant(3, "sizes");
    if (failed(given))
      return failure();
    if (given->numElements() != int64_t(resized.size()))
      return n.error("sizes has " + std::to_string(given->numElements()) + " values for " +
                     std::to_string(resized.size()) + " axes");
    for (size_t i = 0; i < resized.size(); ++i) {
      int64_t size = given->intAt(i), dim = shape[resized[i]];
      if (size <= 0)
        return n.error("sizes must be positive");
      if (size > kMaxHostElements)
        return n.error("sizes resizes dimension " + std::to_string(resized[i]) + " to " +
                       std::to_string(size) + ", more than the " +
                       std::to_string(kMaxHostElements) + " a resized axis may have");
      targets[resized[i]] = {size, dim > 0 ? double(size) / double(dim) : 1.0, double(size)};
    }
  } else if (!haveScales) {
    return n.error("needs scales or sizes");
  }
  std::vector<int64_t> sizes;
  for (const ResizedAxis &target : targets)
    sizes.push_back(target.size);
  int64_t elements;
  if (!kernels::checkedNumElements(sizes, elements))
    return n.error("resizes to " + formatShape(sizes) +
                   ", more than 2^48 elements (memc's limit for one tensor)");
  return targets;
}

/// Resize (opset 11 on) in nearest or linear mode, with the coordinate transformations torch
/// exports (asymmetric, half_pixel, pytorch_half_pixel, align_corners) and
/// tf_half_pixel_for_nn; separable, so one axis at a time.
LogicalResult importResize(NodeImporter &n) {
  if (n.opset < 11)
    return n.error("Resize before opset 11 is not supported; export at opset 11 or later");
  if (failed(expectInputs(n, 1, 4)))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<std::string> mode = n.stringAttr("mode", "nearest");
  FailureOr<std::string> coordinates = n.stringAttr("coordinate_transformation_mode", "half_pixel");
  FailureOr<std::string> nearest = n.stringAttr("nearest_mode", "round_prefer_floor");
  FailureOr<std::string> aspect = n.stringAttr("keep_aspect_ratio_policy", "stretch");
  FailureOr<int64_t> antialias = n.intAttr("antialias", 0);
  if (failed(input) || failed(mode) || failed(coordinates) || failed(nearest) || failed(aspect) ||
      failed(antialias))
    return failure();
  if (*mode != "nearest" && *mode != "linear")
    return n.error("unsupported mode '" + *mode + "' (memc resizes nearest or linear)");
  static const char *const coordinateModes[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
                                                "asymmetric", "tf_half_pixel_for_nn"};
  if (llvm::find(coordinateModes, *coordinates) == std::end(coordinateModes))
    return n.error("unsupported coordinate_transformation_mode '" + *coordinates + "'");
  static const char *const nearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                             "ceil"};
  if (llvm::find(nearestModes, *nearest) == std::end(nearestModes))
    return n.error("unknown nearest_mode '" + *nearest + "'");
  if (*aspect != "stretch")
    return n.error("keep_aspect_ratio_policy '" + *aspect + "' is not supported (only stretch)");
  if (*antialias)
    return n.error("antialias is not supported");
  auto type = cast<RankedTensorType>(input->getType());
  if (*mode == "linear" && !isa<FloatType>(type.getElementType()))
    return n.error("linear mode needs a floating-point input");
  FailureOr<SmallVector<ResizedAxis>> targets = resizeTargets(n, type.getShape());
  if (failed(targets))
    return failure();
  ResizeModes modes{*mode, *coordinates, *nearest};
  Value result = *input;
  for (int64_t axis = 0; axis < type.getRank(); ++axis) {
    // Nearest checks for the identity itself (tf_half_pixel_for_nn shifts even at scale 1).
    const ResizedAxis &target = (*targets)[axis];
    if (target.size == type.getDimSize(axis) && target.scale == 1.0 && *mode == "linear" &&
        *coordinates != "tf_half_pixel_for_nn")
      continue; // the identity
    FailureOr<Value> resized = resizeAxis(n, result, axis, target, modes);
    if (failed(resized))
      return failure();
    result = *resized;
  }
  return defineResult(n, result);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Resolves auto_pad and the defaults of a windowed op's attributes.
struct WindowAttributes {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

FailureOr<WindowAttributes> windowAttributes(NodeImporter &n, ArrayRef<int64_t> inputShape,
                                             std::optional<std::vector<int64_t>> kernel) {
  size_t spatial = inputShape.size() < 2 ? 0 : inputShape.size() - 2;
  if (spatial == 0)
    return n.error("expects an NC[D]HW input");
  FailureOr<std::vector<int64_t>> kernelShape = n.intsAttr("kernel_shape", kernel);
  FailureOr<std::vector<int64_t>> strides = n.intsAttr("strides", std::vector<int64_t>(spatial, 1));
  FailureOr<std::vector<int64_t>> dilations =
      n.intsAttr("dilations", std::vector<int64_t>(spatial, 1));
  FailureOr<std::vector<int64_t>> pads = n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0));
  FailureOr<std::string> autoPad = n.stringAttr("auto_pad", "NOTSET");
  if (failed(kernelShape) || failed(strides) || failed(dilations) || failed(pads) ||
      failed(autoPad))
    return failure();
  if (kernelShape->size() != spatial || strides->size() != spatial ||
      dilations->size() != spatial || pads->size() != 2 * spatial)
    return n.error("kernel_shape, strides, dilations and pads do not match " +
                   std::to_string(spatial) + " spatial dimensions");
  if (*autoPad == "VALID") {
    pads->assign(2 * spatial, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      int64_t in = inputShape[i + 2], stride = (*strides)[i];
      if (stride <= 0)
        return n.error("strides must be positive");
      int64_t out = (in + stride - 1) / stride;
      int64_t total = std::max<int64_t>(
          0, (out - 1) * stride + ((*kernelShape)[i] - 1) * (*dilations)[i] + 1 - in);
      int64_t small = total / 2, large = total - small;
      (*pads)[i] = *autoPad == "SAME_UPPER" ? small : large;
      (*pads)[i + spatial] = *autoPad == "SAME_UPPER" ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    return n.error("unknown auto_pad '" + *autoPad + "'");
  }
  return WindowAttributes{*kernelShape, *strides, *pads, *dilations};
}

/// Conv's and ConvTranspose's data and weight inputs and `group`.
struct ConvolutionOperands {
  Value input, weight;
  int64_t group;
};

FailureOr<ConvolutionOperands> convolutionOperands(NodeImporter &n) {
  if (failed(expectInputs(n, 2, 3)))
    return failure();
  FailureOr<Value> input = n.input(0), weight = n.input(1);
  FailureOr<int64_t> group = n.intAttr("group", 1);
  if (failed(input) || failed(weight) || failed(group))
    return failure();
  return ConvolutionOperands{*input, *weight, *group};
}

LogicalResult importConv(NodeImporter &n) {
  FailureOr<ConvolutionOperands> conv = convolutionOperands(n);
  if (failed(conv))
    return failure();
  ArrayRef<int64_t> weightShape = cast<RankedTensorType>(conv->weight.getType()).getShape();
  std::vector<int64_t> kernel(weightShape.begin() + std::min<size_t>(2, weightShape.size()),
                              weightShape.end());
  FailureOr<WindowAttributes> window =
      windowAttributes(n, cast<RankedTensorType>(conv->input.getType()).getShape(), kernel);
  if (failed(window))
    return failure();
  if (window->kernel != kernel)
    return n.error("kernel_shape differs from the weight's spatial shape");
  SmallVector<Value> operands = {conv->input, conv->weight};
  if (n.hasInput(2)) {
    FailureOr<Value> bias = n.input(2);
    if (failed(bias))
      return failure();
    operands.push_back(*bias);
  }
  return defineResult(
      n, n.create1<ConvOp>(operands,
                           {n.named("strides", n.builder.getDenseI64ArrayAttr(window->strides)),
                            n.named("pads", n.builder.getDenseI64ArrayAttr(window->pads)),
                            n.named("dilations", n.builder.getDenseI64ArrayAttr(window->dilations)),
                            n.named("group", n.builder.getI64IntegerAttr(conv->group))}));
}

/// ConvTranspose's pads: given, or, with output_shape or SAME auto_pad, what makes the output
/// that shape (ONNX: SAME_UPPER puts the smaller half first, otherwise the larger). An
/// output_shape past the full transposed size adds to `outputPadding`: the rows no input reaches.
FailureOr<std::vector<int64_t>> transposedPads(NodeImporter &n, ArrayRef<int64_t> inputShape,
                                               ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                                               ArrayRef<int64_t> dilations,
                                               MutableArrayRef<int64_t> outputPadding) {
  size_t spatial = kernel.size();
  FailureOr<std::string> autoPad = n.stringAttr("auto_pad", "NOTSET");
  FailureOr<std::vector<int64_t>> pads = n.intsAttr("pads", std::vector<int64_t>(2 * spatial, 0));
  if (failed(autoPad) || failed(pads))
    return failure();
  if (pads->size() != 2 * spatial)
    return n.error("pads has " + std::to_string(pads->size()) + " values for " +
                   std::to_string(spatial) + " spatial dimensions");
  if (llvm::any_of(*pads, [](int64_t pad) { return pad < 0; }))
    return n.error("pads must not be negative");
  if (*autoPad != "NOTSET" && *autoPad != "VALID" && *autoPad != "SAME_UPPER" &&
      *autoPad != "SAME_LOWER")
    return n.error("unknown auto_pad '" + *autoPad + "'");
  std::optional<std::vector<int64_t>> outputShape;
  if (n.attribute("output_shape")) {
    FailureOr<std::vector<int64_t>> given = n.intsAttr("output_shape", std::nullopt);
    if (failed(given))
      return failure();
    // The full shape or the spatial dimensions alone.
    if (given->size() == spatial + 2)
      given->erase(given->begin(), given->begin() + 2);
    if (given->size() != spatial)
      return n.error("output_shape does not match " + std::to_string(spatial) +
                     " spatial dimensions");
    outputShape = *given;
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    outputShape.emplace();
    for (size_t i = 0; i < spatial; ++i)
      outputShape->push_back(inputShape[i + 2] * strides[i]);
  }
  if (*autoPad == "VALID")
    pads->assign(2 * spatial, 0);
  if (!outputShape)
    return pads;
  for (size_t i = 0; i < spatial; ++i) {
    int64_t total = strides[i] * (inputShape[i + 2] - 1) + outputPadding[i] +
                    (kernel[i] - 1) * dilations[i] + 1 - (*outputShape)[i];
    if (total < 0) {
      outputPadding[i] -= total;
      total = 0;
    }
    int64_t small = total / 2, large = total - small;
    (*pads)[i] = *autoPad == "SAME_UPPER" ? small : large;
    (*pads)[i + spatial] = *autoPad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

/// ConvTranspose: the input gradient of the convolution it transposes (conv_grad_input, whose
/// gradient rule gives ConvTranspose's), output
/// stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads, plus the bias.
LogicalResult importConvTranspose(NodeImporter &n) {
  FailureOr<ConvolutionOperands> conv = convolutionOperands(n);
  if (failed(conv))
    return failure();
  Value input = conv->input, weight = conv->weight;
  int64_t group = conv->group;
  ArrayRef<int64_t> inputShape = cast<RankedTensorType>(input.getType()).getShape();
  ArrayRef<int64_t> weightShape = cast<RankedTensorType>(weight.getType()).getShape();
  if (inputShape.size() < 3 || weightShape.size() != inputShape.size())
    return n.error("expects an NC[D]HW input and a weight of the same rank");
  size_t spatial = inputShape.size() - 2;
  std::vector<int64_t> weightKernel(weightShape.begin() + 2, weightShape.end());
  FailureOr<std::vector<int64_t>> kernel = n.intsAttr("kernel_shape", weightKernel);
  FailureOr<std::vector<int64_t>> strides = n.intsAttr("strides", std::vector<int64_t>(spatial, 1));
  FailureOr<std::vector<int64_t>> dilations =
      n.intsAttr("dilations", std::vector<int64_t>(spatial, 1));
  FailureOr<std::vector<int64_t>> outputPadding =
      n.intsAttr("output_padding", std::vector<int64_t>(spatial, 0));
  if (failed(kernel) || failed(strides) || failed(dilations) || failed(outputPadding))
    return failure();
  if (*kernel != weightKernel)
    return n.error("kernel_shape differs from the weight's spatial shape");
  if (strides->size() != spatial || dilations->size() != spatial ||
      outputPadding->size() != spatial)
    return n.error("strides, dilations and output_padding do not match " + std::to_string(spatial) +
                   " spatial dimensions");
  if (group <= 0 || inputShape[1] != weightShape[0] || weightShape[0] % group != 0)
    return n.error("input channels " + std::to_string(inputShape[1]) + " do not match the " +
                   "weight's " + std::to_string(weightShape[0]) + " in " + std::to_string(group) +
                   " groups");
  for (size_t i = 0; i < spatial; ++i)
    if ((*strides)[i] <= 0 || (*dilations)[i] <= 0)
      return n.error("strides and dilations must be positive");
  FailureOr<std::vector<int64_t>> pads =
      transposedPads(n, inputShape, *kernel, *strides, *dilations, *outputPadding);
  if (failed(pads))
    return failure();
  for (size_t i = 0; i < spatial; ++i) {
    // Past the stride, output rows would have no input position in the convolution transposed.
    if ((*outputPadding)[i] < 0 || (*outputPadding)[i] >= (*strides)[i])
      return n.error("output_padding " + std::to_string((*outputPadding)[i]) +
                     " must be at least 0 and below the stride " + std::to_string((*strides)[i]));
  }
  SmallVector<int64_t> outputShape = {inputShape[0], weightShape[1] * group};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = (*strides)[i] * (inputShape[i + 2] - 1) + (*outputPadding)[i] +
                   ((*kernel)[i] - 1) * (*dilations)[i] + 1 - (*pads)[i] - (*pads)[i + spatial];
    if (size <= 0)
      return n.error("pads leave spatial dimension " + std::to_string(i + 2) + " empty");
    outputShape.push_back(size);
  }
  FailureOr<Value> result = n.createTyped<ConvGradInputOp>(
      withShape(input, outputShape), {input, weight},
      {n.named("strides", n.builder.getDenseI64ArrayAttr(*strides)),
       n.named("pads", n.builder.getDenseI64ArrayAttr(*pads)),
       n.named("dilations", n.builder.getDenseI64ArrayAttr(*dilations)),
       n.named("group", n.builder.getI64IntegerAttr(group))});
  if (failed(result) || !n.hasInput(2))
    return defineResult(n, result);
  FailureOr<Value> bias =
      affineInput(n, 2, getElementTypeOrSelf(input), outputShape[1], "B", "output channel");
  FailureOr<Value> biasColumn;
  if (failed(bias) || failed(biasColumn = channelColumn(n, *bias, outputShape.size())))
    return failure();
  return defineResult(n, n.create1<AddOp>({*result, *biasColumn}));
}

template <typename OpT>
LogicalResult importPool(NodeImporter &n) {
  if (failed(n.requireOutputsUnused(1, "memc's max_pool does not return indices")))
    return failure();
  FailureOr<Value> input = n.input(0);
  FailureOr<int64_t> ceilMode = n.intAttr("ceil_mode", 0);
  if (failed(input) || failed(ceilMode))
    return failure();
  FailureOr<WindowAttributes> window =
      windowAttributes(n, cast<RankedTensorType>(input->getType()).getShape(), std::nullopt);
  if (failed(window))
    return failure();
  SmallVector<NamedAttribute> attributes = {
      n.named("kernel_shape", n.builder.getDenseI64ArrayAttr(window->kernel)),
      n.named("strides", n.builder.getDenseI64ArrayAttr(window->strides)),
      n.named("pads", n.builder.getDenseI64ArrayAttr(window->pads)),
      n.named("dilations", n.builder.getDenseI64ArrayAttr(window->dilations)),
      n.named("ceil_mode", n.builder.getBoolAttr(*ceilMode != 0))};
  if constexpr (std::is_same_v<OpT, AvgPoolOp>) {
    FailureOr<int64_t> countIncludePad = n.intAttr("count_include_pad", 0);
    if (failed(countIncludePad))
      return failure();
    attributes.push_back(
        n.named("count_include_pad", n.builder.getBoolAttr(*countIncludePad != 0)));
  }
  return defineResult(n, n.create1<OpT>(*input, attributes));
}

//===----------------------------------------------------------------------===//
// LSTM and GRU: unrolled over the static sequence length into matmuls, slices and the
// activations, so the planner and remat see every step's state and the gradients are the ops'
//===----------------------------------------------------------------------===//

/// The recurrence of one LSTM or GRU direction: `gates` of the step's input projection
/// [batch, G * hidden] (bias included), the previous state, and what the step computes.
struct RecurrentCell {
  bool linearBeforeReset;
  int64_t hidden;
  Value recurrence;     // R^T, [hidden, G * hidden]
  Value recurrenceBias; // Rb, [G * hidden] (GRU's reset gate applies to part of it)
};

/// Gate `index` of `gates` [batch, G * hidden].
FailureOr<Value> gate(NodeImporter &n, Value gates, int64_t index, int64_t hidden) {
  return sliceAlong(n, gates, 1, index * hidden, (index + 1) * hidden, 1);
}

/// One LSTM step (gates i, o, f, c): c' = f * c + i * tanh(g), h' = o * tanh(c').
LogicalResult lstmStep(NodeImporter &n, const RecurrentCell &cell, Value projected, Value &h,
                       Value &c) {
  FailureOr<Value> recurrent = n.create1<MatMulOp>({h, cell.recurrence});
  FailureOr<Value> gates, withBias;
  if (failed(recurrent) || failed(gates = n.create1<AddOp>({projected, *recurrent})) ||
      failed(withBias = n.create1<AddOp>({*gates, cell.recurrenceBias})))
    return failure();
  SmallVector<Value> parts;
  for (int64_t index = 0; index < 4; ++index) {
    FailureOr<Value> part = gate(n, *withBias, index, cell.hidden);
    FailureOr<Value> activated;
    if (failed(part) ||
        failed(activated = index == 3 ? n.create1<TanhOp>(*part) : n.create1<SigmoidOp>(*part)))
      return failure();
    parts.push_back(*activated);
  }
  FailureOr<Value> kept = n.create1<MulOp>({parts[2], c});
  FailureOr<Value> written = n.create1<MulOp>({parts[0], parts[3]});
  FailureOr<Value> state, squashed, output;
  if (failed(kept) || failed(written) || failed(state = n.create1<AddOp>({*kept, *written})) ||
      failed(squashed = n.create1<TanhOp>(*state)) ||
      failed(output = n.create1<MulOp>({parts[1], *squashed})))
    return failure();
  c = *state;
  h = *output;
  return success();
}

/// One GRU step (gates z, r, h): h' = (1 - z) * candidate + z * h, the reset gate applied to
/// the recurrent projection (linear_before_reset, torch's form) or to h before it.
LogicalResult gruStep(NodeImporter &n, const RecurrentCell &cell, Value projected, Value &h) {
  int64_t size = cell.hidden;
  FailureOr<Value> xz = gate(n, projected, 0, size), xr = gate(n, projected, 1, size),
                   xh = gate(n, projected, 2, size);
  FailureOr<Value> recurrent = n.create1<MatMulOp>({h, cell.recurrence});
  FailureOr<Value> withBias;
  if (failed(xz) || failed(xr) || failed(xh) || failed(recurrent) ||
      failed(withBias = n.create1<AddOp>({*recurrent, cell.recurrenceBias})))
    return failure();
  FailureOr<Value> hz = gate(n, *withBias, 0, size), hr = gate(n, *withBias, 1, size);
  FailureOr<Value> zSum, rSum, z, r;
  if (failed(hz) || failed(hr) || failed(zSum = n.create1<AddOp>({*xz, *hz})) ||
      failed(rSum = n.create1<AddOp>({*xr, *hr})) || failed(z = n.create1<SigmoidOp>(*zSum)) ||
      failed(r = n.create1<SigmoidOp>(*rSum)))
    return failure();
  FailureOr<Value> reset;
  if (cell.linearBeforeReset) {
    FailureOr<Value> hh = gate(n, *withBias, 2, size);
    if (failed(hh) || failed(reset = n.create1<MulOp>({*r, *hh})))
      return failure();
  } else {
    // (r * h) R_h^T + Rb_h: the candidate's own recurrent product.
    FailureOr<Value> resetState = n.create1<MulOp>({*r, h});
    FailureOr<Value> weight = sliceAlong(n, cell.recurrence, 1, 2 * size, 3 * size, 1);
    FailureOr<Value> bias = sliceAlong(n, cell.recurrenceBias, 0, 2 * size, 3 * size, 1);
    FailureOr<Value> product;
    if (failed(resetState) || failed(weight) || failed(bias) ||
        failed(product = n.create1<MatMulOp>({*resetState, *weight})) ||
        failed(reset = n.create1<AddOp>({*product, *bias})))
      return failure();
  }
  FailureOr<Value> candidateSum, candidate, difference, moved, next;
  // h' = candidate + z * (h - candidate).
  if (failed(candidateSum = n.create1<AddOp>({*xh, *reset})) ||
      failed(candidate = n.create1<TanhOp>(*candidateSum)) ||
      failed(difference = n.create1<SubOp>({h, *candidate})) ||
      failed(moved = n.create1<MulOp>({*z, *difference})) ||
      failed(next = n.create1<AddOp>({*candidate, *moved})))
    return failure();
  h = *next;
  return success();
}

/// Direction `d` of input `index` ([dirs, rows...]) without its leading axis.
FailureOr<Value> directionOf(NodeImporter &n, Value value, int64_t d) {
  SmallVector<int64_t> shape(cast<RankedTensorType>(value.getType()).getShape().drop_front());
  FailureOr<Value> slice = sliceAlong(n, value, 0, d, d + 1, 1);
  if (failed(slice))
    return failure();
  return reshapeTo(n, *slice, shape);
}

/// ONNX LSTM (gates i, o, f, c) and GRU (z, r, h), layout 0, forward, reverse or bidirectional,
/// with optional bias and initial states; sequence_lens must be absent (every sequence full),
/// and activations, clip, peepholes and input_forget keep their defaults.
LogicalResult importRecurrent(NodeImporter &n, bool lstm) {
  int64_t gates = lstm ? 4 : 3;
  if (failed(expectInputs(n, 3, lstm ? 8 : 6)))
    return failure();
  FailureOr<std::string> direction = n.stringAttr("direction", "forward");
  FailureOr<int64_t> hiddenSize = n.intAttr("hidden_size", std::nullopt);
  FailureOr<int64_t> layout = n.intAttr("layout", 0);
  FailureOr<int64_t> linearBeforeReset = n.intAttr("linear_before_reset", 0);
  FailureOr<int64_t> inputForget = n.intAttr("input_forget", 0);
  if (failed(direction) || failed(hiddenSize) || failed(layout) || failed(linearBeforeReset) ||
      failed(inputForget))
    return failure();
  if (*direction != "forward" && *direction != "reverse" && *direction != "bidirectional")
    return n.error("unknown direction '" + *direction + "'");
  if (*layout != 0)
    return n.error("layout 1 (batch first) is not supported");
  if (n.attribute("activations") || n.attribute("clip") || *inputForget)
    return n.error("custom activations, clip and input_forget are not supported");
  if (n.hasInput(4))
    return n.error("sequence_lens is not supported (every sequence must have the full length)");
  if (lstm && n.hasInput(7))
    return n.error("peepholes are not supported");
  FailureOr<Value> x = n.input(0);
  if (failed(x))
    return failure();
  Type elementType = getElementTypeOrSelf(*x);
  FailureOr<Value> w = n.input(1, elementType), r = n.input(2, elementType);
  if (failed(w) || failed(r))
    return failure();
  ArrayRef<int64_t> xShape = cast<RankedTensorType>(x->getType()).getShape();
  int64_t dirs = *direction == "bidirectional" ? 2 : 1, hidden = *hiddenSize;
  if (xShape.size() != 3)
    return n.error("expects X of shape [seq_length, batch, input_size]");
  int64_t steps = xShape[0], batch = xShape[1];
  SmallVector<int64_t> wShape = {dirs, gates * hidden, xShape[2]},
                       rShape = {dirs, gates * hidden, hidden};
  if (cast<RankedTensorType>(w->getType()).getShape() != ArrayRef<int64_t>(wShape) ||
      cast<RankedTensorType>(r->getType()).getShape() != ArrayRef<int64_t>(rShape))
    return n.error("W and R do not have the shapes hidden_size " + std::to_string(hidden) +
                   " and the direction ask for");
  auto optionalInput = [&](size_t index, ArrayRef<int64_t> shape) -> FailureOr<Value> {
    if (!n.hasInput(index))
      return splatConstant(n, *x, shape, 0.0);
    FailureOr<Value> value = n.input(index, elementType);
    if (failed(value))
      return failure();
    if (cast<RankedTensorType>(value->getType()).getShape() != shape)
      return n.error("input " + std::to_string(index) + " has the wrong shape");
    return value;
  };
  FailureOr<Value> bias = optionalInput(3, {dirs, 2 * gates * hidden});
  FailureOr<Value> initialH = optionalInput(5, {dirs, batch, hidden});
  FailureOr<Value> initialC = lstm ? optionalInput(6, {dirs, batch, hidden}) : initialH;
  if (failed(bias) || failed(initialH) || failed(initialC))
    return failure();
  SmallVector<Value> outputs, finalH, finalC;
  for (int64_t d = 0; d < dirs; ++d) {
    bool backwards = *direction == "reverse" || d == 1;
    FailureOr<Value> wd = directionOf(n, *w, d), rd = directionOf(n, *r, d),
                     bd = directionOf(n, *bias, d);
    FailureOr<Value> h = directionOf(n, *initialH, d), c = directionOf(n, *initialC, d);
    if (failed(wd) || failed(rd) || failed(bd) || failed(h) || failed(c))
      return failure();
    auto transposed = [&](Value matrix) {
      return n.create1<TransposeOp>(matrix,
                                    n.named("perm", n.builder.getDenseI64ArrayAttr({1, 0})));
    };
    FailureOr<Value> wt = transposed(*wd), rt = transposed(*rd);
    FailureOr<Value> inputBias = sliceAlong(n, *bd, 0, 0, gates * hidden, 1);
    FailureOr<Value> recurrenceBias = sliceAlong(n, *bd, 0, gates * hidden, 2 * gates * hidden, 1);
    FailureOr<Value> projection, projected;
    // Every step's input projection at once: [seq, batch, input] x [input, G * hidden].
    if (failed(wt) || failed(rt) || failed(inputBias) || failed(recurrenceBias) ||
        failed(projection = n.create1<MatMulOp>({*x, *wt})) ||
        failed(projected = n.create1<AddOp>({*projection, *inputBias})))
      return failure();
    RecurrentCell cell{*linearBeforeReset != 0, hidden, *rt, *recurrenceBias};
    SmallVector<Value> stepOutputs(steps);
    for (int64_t i = 0; i < steps; ++i) {
      int64_t t = backwards ? steps - 1 - i : i;
      FailureOr<Value> stepSlice = sliceAlong(n, *projected, 0, t, t + 1, 1);
      FailureOr<Value> step;
      if (failed(stepSlice) || failed(step = reshapeTo(n, *stepSlice, {batch, gates * hidden})))
        return failure();
      if (failed(lstm ? lstmStep(n, cell, *step, *h, *c) : gruStep(n, cell, *step, *h)))
        return failure();
      FailureOr<Value> placed = reshapeTo(n, *h, {1, 1, batch, hidden});
      if (failed(placed))
        return failure();
      stepOutputs[t] = *placed;
    }
    FailureOr<Value> sequence =
        steps == 1
            ? FailureOr<Value>(stepOutputs[0])
            : n.create1<ConcatOp>(stepOutputs, n.named("axis", n.builder.getI64IntegerAttr(0)));
    FailureOr<Value> lastH = reshapeTo(n, *h, {1, batch, hidden});
    FailureOr<Value> lastC = lstm ? reshapeTo(n, *c, {1, batch, hidden}) : *c;
    if (failed(sequence) || failed(lastH) || failed(lastC))
      return failure();
    outputs.push_back(*sequence);
    finalH.push_back(*lastH);
    finalC.push_back(*lastC);
  }
  auto joined = [&](ArrayRef<Value> pieces, int64_t axis) -> FailureOr<Value> {
    if (pieces.size() == 1)
      return pieces[0];
    return n.create1<ConcatOp>(pieces, n.named("axis", n.builder.getI64IntegerAttr(axis)));
  };
  FailureOr<Value> y = joined(outputs, 1), yh = joined(finalH, 0);
  if (failed(y) || failed(yh))
    return failure();
  n.setOutput(0, *y);
  n.setOutput(1, *yh);
  if (!lstm)
    return success();
  FailureOr<Value> yc = joined(finalC, 0);
  if (failed(yc))
    return failure();
  n.setOutput(2, *yc);
  return success();
}

//===----------------------------------------------------------------------===//
// Constants and shape ops, which only exist on the host
//===----------------------------------------------------------------------===//

LogicalResult importConstant(NodeImporter &n) {
  if (n.node.attribute_size() != 1)
    return n.error("expects exactly one value attribute");
  const onnx::AttributeProto &attr = n.node.attribute(0);
  std::string error;
  if (attr.name() == "value" && attr.type() == onnx::AttributeProto::TENSOR) {
    FailureOr<HostTensor> value = decodeTensorProto(attr.t(), error);
    if (failed(value))
      return n.error(error);
    n.setOutputConstant(0, std::move(*value));
  } else if (attr.name() == "value_float" && attr.type() == onnx::AttributeProto::FLOAT) {
    n.setOutputConstant(0, HostTensor::ofFloats(onnx::TensorProto::FLOAT, {}, {attr.f()}));
  } else if (attr.name() == "value_floats" && attr.type() == onnx::AttributeProto::FLOATS) {
    n.setOutputConstant(0, HostTensor::ofFloats(onnx::TensorProto::FLOAT, {attr.floats_size()},
                                                {attr.floats().begin(), attr.floats().end()}));
  } else if (attr.name() == "value_int" && attr.type() == onnx::AttributeProto::INT) {
    n.setOutputConstant(0, HostTensor::ofInts(onnx::TensorProto::INT64, {}, {attr.i()}));
  } else if (attr.name() == "value_ints" && attr.type() == onnx::AttributeProto::INTS) {
    n.setOutputConstant(0, HostTensor::ofInts(onnx::TensorProto::INT64, {attr.ints_size()},
                                              {attr.ints().begin(), attr.ints().end()}));
  } else {
    return n.error("unsupported value attribute '" + attr.name() + "'");
  }
  return success();
}

/// Shape has no memc op: with static shapes its result is always known.
LogicalResult importShape(NodeImporter &n) {
  FailureOr<RankedTensorType> type = n.inputType(0);
  FailureOr<int64_t> start = n.intAttr("start", 0);
  if (failed(type) || failed(start))
    return failure();
  int64_t rank = type->getRank();
  FailureOr<int64_t> end = n.intAttr("end", rank);
  if (failed(end))
    return failure();
  auto clampIndex = [&](int64_t index) {
    return std::clamp<int64_t>(index < 0 ? index + rank : index, 0, rank);
  };
  int64_t first = clampIndex(*start), last = std::max(first, clampIndex(*end));
  std::vector<int64_t> dims(type->getShape().begin() + first, type->getShape().begin() + last);
  n.setOutputConstant(0, HostTensor::ofInts(onnx::TensorProto::INT64,
                                            {static_cast<int64_t>(dims.size())}, dims));
  return success();
}

/// Range and ConstantOfShape reach a builder only when an input is not a host constant.
LogicalResult importHostOnly(NodeImporter &n) {
  return n.error("its inputs must be constants (memc shapes are static), but some are computed "
                 "at run time");
}

} // namespace

const llvm::StringMap<OnnxOpBuilder> &onnxOpBuilders() {
  static const llvm::StringMap<OnnxOpBuilder> table = [] {
    llvm::StringMap<OnnxOpBuilder> t;
    // Elementwise.
    t["Neg"] = importElementwise<NegOp, 1>;
    t["Exp"] = importElementwise<ExpOp, 1>;
    t["Log"] = importElementwise<LogOp, 1>;
    t["Sqrt"] = importElementwise<SqrtOp, 1>;
    t["Reciprocal"] = importElementwise<ReciprocalOp, 1>;
    t["Erf"] = importElementwise<ErfOp, 1>;
    t["Tanh"] = importElementwise<TanhOp, 1>;
    t["Sigmoid"] = importElementwise<SigmoidOp, 1>;
    t["Relu"] = importElementwise<ReluOp, 1>;
    t["Not"] = importElementwise<NotOp, 1>;
    t["Abs"] = importElementwise<AbsOp, 1>;
    t["Sin"] = importElementwise<SinOp, 1>;
    t["Cos"] = importElementwise<CosOp, 1>;
    t["Softplus"] = importElementwise<SoftplusOp, 1>;
    t["HardSwish"] = importElementwise<HardSwishOp, 1>;
    t["LeakyRelu"] = [](NodeImporter &n) {
      return importScaledActivation<LeakyReluOp>(n, {{"alpha", 0.01}});
    };
    t["Elu"] = [](NodeImporter &n) { return importScaledActivation<EluOp>(n, {{"alpha", 1.0}}); };
    t["HardSigmoid"] = [](NodeImporter &n) {
      return importScaledActivation<HardSigmoidOp>(n, {{"alpha", 0.2}, {"beta", 0.5}});
    };
    t["Add"] = importElementwise<AddOp, 2>;
    t["Sub"] = importElementwise<SubOp, 2>;
    t["Mul"] = importElementwise<MulOp, 2>;
    t["Div"] = importElementwise<DivOp, 2>;
    t["Equal"] = importElementwise<EqualOp, 2>;
    t["Less"] = importElementwise<LessOp, 2>;
    t["Greater"] = importElementwise<GreaterOp, 2>;
    t["GreaterOrEqual"] = importElementwise<GreaterEqualOp, 2>;
    t["LessOrEqual"] = importElementwise<LessEqualOp, 2>;
    t["Max"] = importVariadic<MaxOp>;
    t["Min"] = importVariadic<MinOp>;
    t["PRelu"] = importPRelu;
    t["Where"] = importElementwise<WhereOp, 3>;
    t["Pow"] = importPow;
    t["Gelu"] = importGelu;
    t["Clip"] = importClip;
    t["Cast"] = importCast;
    t["CastLike"] = importCastLike;
    t["Trilu"] = importTrilu;
    t["Dropout"] = importDropout;
    t["Identity"] = importIdentity;
    // Linear algebra and normalization.
    t["MatMul"] = importMatMul;
    t["Gemm"] = importGemm;
    t["Einsum"] = importEinsum;
    t["Softmax"] = importSoftmax<SoftmaxOp>;
    t["LogSoftmax"] = importSoftmax<LogSoftmaxOp>;
    t["LayerNormalization"] = importLayerNormalization;
    t["BatchNormalization"] = importBatchNormalization;
    t["InstanceNormalization"] = importInstanceNormalization;
    t["GroupNormalization"] = importGroupNormalization;
    // Reductions.
    t["ReduceSum"] = importReduce<ReduceSumOp>;
    t["ReduceMean"] = importReduce<ReduceMeanOp>;
    t["ReduceMax"] = importReduce<ReduceMaxOp>;
    t["ReduceProd"] = importReduce<ReduceProdOp>;
    t["ReduceL2"] = importReduce<ReduceL2Op>;
    t["ReduceLogSumExp"] = importReduce<ReduceLogSumExpOp>;
    t["GlobalAveragePool"] = importGlobalAveragePool;
    t["CumSum"] = importCumSum;
    t["TopK"] = importTopK;
    // Layout and indexing.
    t["Transpose"] = importTranspose;
    t["Reshape"] = importReshape;
    t["Flatten"] = importFlatten;
    t["Squeeze"] = importSqueeze;
    t["Unsqueeze"] = importUnsqueeze;
    t["Concat"] = importConcat;
    t["Split"] = importSplit;
    t["Slice"] = importSlice;
    t["Gather"] = importGather;
    t["Expand"] = importExpand;
    t["Pad"] = importPad;
    t["Tile"] = importTile;
    t["Resize"] = importResize;
    t["DepthToSpace"] = [](NodeImporter &n) { return importDepthSpace(n, /*toSpace=*/true); };
    t["SpaceToDepth"] = [](NodeImporter &n) { return importDepthSpace(n, /*toSpace=*/false); };
    // Convolution and pooling.
    t["Conv"] = importConv;
    t["ConvTranspose"] = importConvTranspose;
    // Recurrent.
    t["LSTM"] = [](NodeImporter &n) { return importRecurrent(n, /*lstm=*/true); };
    t["GRU"] = [](NodeImporter &n) { return importRecurrent(n, /*lstm=*/false); };
    t["MaxPool"] = importPool<MaxPoolOp>;
    t["AveragePool"] = importPool<AvgPoolOp>;
    // Host-only.
    t["Constant"] = importConstant;
    t["Shape"] = importShape;
    t["Range"] = importHostOnly;
    t["ConstantOfShape"] = importHostOnly;
    return t;
  }();
  return table;
}

} // namespace memc
