//===- HostTensorTest.cpp - host evaluation of shape subgraphs ------------===//
//
// Expected values are worked out by hand from the ONNX operator specifications; the error cases
// are the malformed inputs a bit-flipped model file can produce.
//
//===----------------------------------------------------------------------===//

#include "compiler/importer/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>

using namespace memc;

namespace {

constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kInt32 = 6, kInt64 = 7, kBool = 9,
                  kFloat16 = 10, kDouble = 11, kUint64 = 13, kBfloat16 = 16;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

HostTensor ints(std::vector<int64_t> shape, std::vector<int64_t> values, int32_t type = kInt64) {
  return HostTensor::ofInts(type, std::move(shape), std::move(values));
}

HostTensor vec(std::vector<int64_t> values, int32_t type = kInt64) {
  int64_t size = static_cast<int64_t>(values.size());
  return ints({size}, std::move(values), type);
}

HostTensor scalar(int64_t value, int32_t type = kInt64) { return ints({}, {value}, type); }

HostTensor floats(std::vector<int64_t> shape, std::vector<double> values,
                  int32_t type = kFloat) {
  return HostTensor::ofFloats(type, std::move(shape), std::move(values));
}

HostTensor bools(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return ints(std::move(shape), std::move(values), kBool);
}

HostAttributes axisAttr(int64_t axis) {
  HostAttributes attributes;
  attributes.axis = axis;
  return attributes;
}

HostAttributes axesAttr(std::vector<int64_t> axes, int64_t keepdims = 1) {
  HostAttributes attributes;
  attributes.axes = std::move(axes);
  attributes.keepdims = keepdims;
  return attributes;
}

HostAttributes castTo(int64_t type) {
  HostAttributes attributes;
  attributes.to = type;
  return attributes;
}

/// Evaluates one node that must succeed and returns its single result.
HostTensor eval(const std::string &op, const std::vector<const HostTensor *> &inputs,
                const HostAttributes &attributes = {}) {
  std::vector<HostTensor> outputs;
  std::string error;
  bool ok = evaluateOnHost(op, inputs, attributes, outputs, error);
  EXPECT_TRUE(ok) << op << ": " << error;
  EXPECT_EQ(outputs.size(), ok ? 1u : 0u);
  return ok && outputs.size() == 1 ? outputs[0] : HostTensor{};
}

/// Evaluates one node that must fail and returns its error message.
std::string evalError(const std::string &op, const std::vector<const HostTensor *> &inputs,
                      const HostAttributes &attributes = {}) {
  std::vector<HostTensor> outputs;
  std::string error;
  EXPECT_FALSE(evaluateOnHost(op, inputs, attributes, outputs, error)) << op;
  EXPECT_TRUE(outputs.empty());
  return error;
}

#define EXPECT_ERROR_CONTAINS(message, part)                                                   \
  EXPECT_NE(std::string(message).find(part), std::string::npos) << "error: " << (message)

void expectInts(const HostTensor &tensor, int32_t type, std::vector<int64_t> shape,
                std::vector<int64_t> values) {
  EXPECT_EQ(tensor.dataType, type);
  EXPECT_EQ(tensor.shape, shape);
  EXPECT_FALSE(tensor.splat);
  EXPECT_EQ(tensor.ints, values);
  EXPECT_TRUE(tensor.floats.empty());
}

void expectFloats(const HostTensor &tensor, int32_t type, std::vector<int64_t> shape,
                  std::vector<double> values) {
  EXPECT_EQ(tensor.dataType, type);
  EXPECT_EQ(tensor.shape, shape);
  EXPECT_FALSE(tensor.splat);
  EXPECT_TRUE(tensor.ints.empty());
  ASSERT_EQ(tensor.floats.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i]))
      EXPECT_TRUE(std::isnan(tensor.floats[i])) << "element " << i;
    else
      EXPECT_EQ(tensor.floats[i], values[i]) << "element " << i;
  }
}

std::vector<int64_t> iota(int64_t count) {
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i)
    values[i] = i;
  return values;
}

//===----------------------------------------------------------------------===//
// HostTensor itself
//===----------------------------------------------------------------------===//

TEST(HostTensor, ElementCounts) {
  EXPECT_EQ(scalar(5).numElements(), 1);
  EXPECT_EQ(ints({2, 3}, iota(6)).numElements(), 6);
  EXPECT_EQ(ints({2, -1}, {}).numElements(), -1);
  EXPECT_EQ(ints({int64_t(1) << 62, 4}, {}).numElements(), -1);
  // A zero dimension empties the tensor even when the others overflow.
  EXPECT_EQ(ints({0, int64_t(1) << 62, int64_t(1) << 62}, {}).numElements(), 0);
}

TEST(HostTensor, Accessors) {
  HostTensor f = floats({3}, {-2.5, 2.9, 1e30});
  EXPECT_TRUE(f.isFloating());
  EXPECT_EQ(f.intAt(0), -2);
  EXPECT_EQ(f.intAt(1), 2);
  EXPECT_EQ(f.intAt(2), kI64Max);
  EXPECT_EQ(f.toInts(), (std::vector<int64_t>{-2, 2, kI64Max}));
  HostTensor i = vec({4, -7});
  EXPECT_FALSE(i.isFloating());
  EXPECT_EQ(i.floatAt(1), -7.0);
  // Reads outside the storage are defined, not a crash.
  EXPECT_EQ(i.intAt(2), 0);
  EXPECT_EQ(i.intAt(-1), 0);
  EXPECT_EQ(floats({1}, {1.0}).floatAt(5), 0.0);
}

TEST(HostTensor, SplatOf) {
  HostTensor f = HostTensor::splatOf(kFloat, {2, 2}, 0.1);
  EXPECT_TRUE(f.splat);
  EXPECT_EQ(f.numElements(), 4);
  // f32(0.1) = 13421773 * 2^-27.
  ASSERT_EQ(f.floats.size(), 1u);
  EXPECT_EQ(f.floats[0], 0.100000001490116119384765625);
  EXPECT_EQ(f.floatAt(3), 0.100000001490116119384765625);
  HostTensor i = HostTensor::splatOf(kInt64, {3}, -2.9);
  EXPECT_EQ(i.ints, std::vector<int64_t>{-2});
  EXPECT_EQ(i.toInts(), (std::vector<int64_t>{-2, -2, -2}));
  EXPECT_EQ(HostTensor::splatOf(kBool, {}, 0.5).ints, std::vector<int64_t>{1});
  EXPECT_EQ(HostTensor::splatOf(kInt8, {}, 200).ints, std::vector<int64_t>{-56});
  // Too large to expand: toInts yields nothing rather than allocating 2^40 elements.
  EXPECT_TRUE(HostTensor::splatOf(kInt64, {int64_t(1) << 40}, 1).toInts().empty());
}

TEST(HostTensor, Evaluable) {
  for (const char *op : {"Gather", "Slice", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Cast",
                         "Equal", "Less", "Greater", "Not", "Where", "Range", "ConstantOfShape",
                         "Add", "Sub", "Mul", "Div", "Neg", "Identity", "Transpose",
                         "ReduceProd"})
    EXPECT_TRUE(isHostEvaluable(op)) << op;
  EXPECT_FALSE(isHostEvaluable("MatMul"));
  EXPECT_FALSE(isHostEvaluable("gather"));
  EXPECT_FALSE(isHostEvaluable(""));
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

TEST(HostGather, ScalarIndex) {
  HostTensor data = vec({10, 20, 30, 40}), two = scalar(2), minusOne = scalar(-1);
  expectInts(eval("Gather", {&data, &two}), kInt64, {}, {30});
  expectInts(eval("Gather", {&data, &minusOne}), kInt64, {}, {40});
}

TEST(HostGather, MatrixIndicesOnAxisOne) {
  HostTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor indices = ints({2, 2}, {2, 0, -1, 1}, kInt32);
  // out[i][a][b] = data[i][indices[a][b]].
  expectInts(eval("Gather", {&data, &indices}, axisAttr(1)), kInt64, {2, 2, 2},
             {3, 1, 3, 2, 6, 4, 6, 5});
}

TEST(HostGather, NegativeAxis) {
  HostTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6}), indices = vec({1});
  expectInts(eval("Gather", {&data, &indices}, axisAttr(-2)), kInt64, {1, 3}, {4, 5, 6});
}

TEST(HostGather, FloatData) {
  HostTensor data = floats({3}, {0.5, 1.5, 2.5}), indices = vec({2, 0});
  expectFloats(eval("Gather", {&data, &indices}), kFloat, {2}, {2.5, 0.5});
}

TEST(HostGather, SplatDataStaysSplat) {
  HostTensor data = HostTensor::splatOf(kInt64, {1000, 1000}, 7), index = scalar(999);
  HostTensor result = eval("Gather", {&data, &index});
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.shape, std::vector<int64_t>{1000});
  EXPECT_EQ(result.ints, std::vector<int64_t>{7});
}

TEST(HostGather, Errors) {
  HostTensor data = vec({10, 20, 30, 40}), seven = scalar(7), minusFive = scalar(-5);
  EXPECT_EQ(evalError("Gather", {&data, &seven}),
            "Gather index 7 out of range for axis of size 4");
  EXPECT_EQ(evalError("Gather", {&data, &minusFive}),
            "Gather index -5 out of range for axis of size 4");
  HostTensor one = scalar(1);
  EXPECT_EQ(evalError("Gather", {&data, &one}, axisAttr(1)),
            "Gather axis 1 out of range for rank 1");
  HostTensor rank0 = scalar(3);
  EXPECT_ERROR_CONTAINS(evalError("Gather", {&rank0, &one}), "out of range for rank 0");
  HostTensor floatIndex = floats({}, {1.0});
  EXPECT_ERROR_CONTAINS(evalError("Gather", {&data, &floatIndex}), "INT32 or INT64");
  HostTensor empty = ints({0}, {});
  EXPECT_ERROR_CONTAINS(evalError("Gather", {&empty, &one}), "axis of size 0");
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

TEST(HostSlice, EndsBeyondTheAxisClamp) {
  HostTensor data = vec(iota(10)), start = vec({2}), end = vec({kI64Max});
  expectInts(eval("Slice", {&data, &start, &end}), kInt64, {8}, {2, 3, 4, 5, 6, 7, 8, 9});
  HostTensor fromEnd = vec({-3});
  expectInts(eval("Slice", {&data, &fromEnd, &end}), kInt64, {3}, {7, 8, 9});
  HostTensor veryNegative = vec({kI64Min}), three = vec({3});
  expectInts(eval("Slice", {&data, &veryNegative, &three}), kInt64, {3}, {0, 1, 2});
}

TEST(HostSlice, NegativeSteps) {
  HostTensor data = vec(iota(10));
  HostTensor start = vec({-1}), end = vec({kI64Min}), axes = vec({0}), step = vec({-1});
  expectInts(eval("Slice", {&data, &start, &end, &axes, &step}), kInt64, {10},
             {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  HostTensor eight = vec({8}), one = vec({1}), minusThree = vec({-3});
  expectInts(eval("Slice", {&data, &eight, &one, nullptr, &minusThree}), kInt64, {3},
             {8, 5, 2});
  // start clamps to dim - 1 = 9 for a negative step.
  HostTensor huge = vec({kI64Max}), zero = vec({0}), minusTwo = vec({-2});
  expectInts(eval("Slice", {&data, &huge, &zero, nullptr, &minusTwo}), kInt64, {5},
             {9, 7, 5, 3, 1});
}

TEST(HostSlice, StepsLongerThanTheAxis) {
  HostTensor data = vec(iota(10));
  HostTensor one = vec({1}), ten = vec({10}), bigStep = vec({kI64Max});
  expectInts(eval("Slice", {&data, &one, &ten, nullptr, &bigStep}), kInt64, {1}, {1});
  HostTensor last = vec({-1}), first = vec({kI64Min}), smallestStep = vec({kI64Min});
  expectInts(eval("Slice", {&data, &last, &first, nullptr, &smallestStep}), kInt64, {1}, {9});
}

TEST(HostSlice, AxesAndStepsOnAMatrix) {
  HostTensor data = ints({3, 4}, iota(12));
  HostTensor starts = vec({1, 0}), ends = vec({3, 4}), axes = vec({0, -1}), steps = vec({1, 2});
  expectInts(eval("Slice", {&data, &starts, &ends, &axes, &steps}), kInt64, {2, 2},
             {4, 6, 8, 10});
  HostTensor start = vec({1}, kInt32), end = vec({-1}, kInt32), axis = vec({1}, kInt32);
  expectInts(eval("Slice", {&data, &start, &end, &axis}), kInt64, {3, 2},
             {1, 2, 5, 6, 9, 10});
}

TEST(HostSlice, EmptyResult) {
  HostTensor data = vec(iota(10)), start = vec({5}), end = vec({2});
  expectInts(eval("Slice", {&data, &start, &end}), kInt64, {0}, {});
  HostTensor empty = ints({0}, {}), zero = vec({0}), minusOne = vec({-1});
  expectInts(eval("Slice", {&empty, &zero, &end, nullptr, &minusOne}), kInt64, {0}, {});
}

TEST(HostSlice, SplatStaysSplat) {
  HostTensor data = HostTensor::splatOf(kFloat, {1 << 20, 1 << 20}, 2.0);
  HostTensor start = vec({1}), end = vec({-1});
  HostTensor result = eval("Slice", {&data, &start, &end});
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.shape, (std::vector<int64_t>{(1 << 20) - 2, 1 << 20}));
  EXPECT_EQ(result.floats, std::vector<double>{2.0});
}

TEST(HostSlice, Errors) {
  HostTensor data = ints({3, 4}, iota(12)), zero = vec({0}), two = vec({2}), zeroStep = vec({0});
  EXPECT_EQ(evalError("Slice", {&data, &zero, &two, nullptr, &zeroStep}),
            "Slice step cannot be 0");
  HostTensor starts = vec({0, 0}), ends = vec({2, 2}), sameAxis = vec({0, -2});
  EXPECT_EQ(evalError("Slice", {&data, &starts, &ends, &sameAxis}),
            "Slice axis -2 is repeated");
  HostTensor axisTwo = vec({2});
  EXPECT_EQ(evalError("Slice", {&data, &zero, &two, &axisTwo}),
            "Slice axis 2 out of range for rank 2");
  EXPECT_EQ(evalError("Slice", {&data, &starts, &two}), "Slice has 2 starts but 1 ends");
  HostTensor oneStep = vec({1});
  EXPECT_ERROR_CONTAINS(evalError("Slice", {&data, &starts, &ends, nullptr, &oneStep}),
                        "2 axes and 1 steps");
  HostTensor floatStart = floats({1}, {0.0});
  EXPECT_ERROR_CONTAINS(evalError("Slice", {&data, &floatStart, &two}), "INT32 or INT64");
  HostTensor matrixStart = ints({1, 1}, {0});
  EXPECT_ERROR_CONTAINS(evalError("Slice", {&data, &matrixStart, &two}), "must be 1-D");
  EXPECT_EQ(evalError("Slice", {&data, &zero, nullptr}), "Slice input 2 is missing");
}

//===----------------------------------------------------------------------===//
// Concat, Unsqueeze, Squeeze, Reshape, Transpose
//===----------------------------------------------------------------------===//

TEST(HostConcat, ShapePieces) {
  HostTensor batch = vec({2}), seq = vec({16}), rest = vec({12, -1});
  expectInts(eval("Concat", {&batch, &seq, &rest}, axisAttr(0)), kInt64, {4},
             {2, 16, 12, -1});
}

TEST(HostConcat, InnerAxis) {
  HostTensor a = ints({2, 1}, {1, 2}), b = ints({2, 2}, {3, 4, 5, 6});
  expectInts(eval("Concat", {&a, &b}, axisAttr(1)), kInt64, {2, 3}, {1, 3, 4, 2, 5, 6});
  expectInts(eval("Concat", {&b, &a}, axisAttr(-1)), kInt64, {2, 3}, {3, 4, 1, 5, 6, 2});
}

TEST(HostConcat, SplatOperandsExpand) {
  HostTensor sevens = HostTensor::splatOf(kInt64, {2}, 7), one = vec({1});
  expectInts(eval("Concat", {&sevens, &one}, axisAttr(0)), kInt64, {3}, {7, 7, 1});
}

TEST(HostConcat, Errors) {
  HostTensor a = ints({2, 1}, {1, 2}), b = ints({3, 1}, {3, 4, 5});
  EXPECT_EQ(evalError("Concat", {&a, &b}), "Concat needs an axis attribute");
  EXPECT_EQ(evalError("Concat", {&a, &b}, axisAttr(1)),
            "Concat input 1 has dimension 0 of size 3, expected 2");
  HostTensor f = floats({2, 1}, {1, 2});
  EXPECT_EQ(evalError("Concat", {&a, &f}, axisAttr(0)),
            "Concat operands have different types, INT64 and FLOAT");
  HostTensor v = vec({1});
  EXPECT_ERROR_CONTAINS(evalError("Concat", {&a, &v}, axisAttr(0)), "has rank 1, expected 2");
  HostTensor s = scalar(1);
  EXPECT_EQ(evalError("Concat", {&s, &s}, axisAttr(0)), "Concat axis 0 out of range for rank 0");
  EXPECT_EQ(evalError("Concat", {&a, nullptr}, axisAttr(0)), "Concat input 1 is missing");
  EXPECT_ERROR_CONTAINS(evalError("Concat", {}, axisAttr(0)), "takes at least 1 inputs, not 0");
  HostTensor big = HostTensor::splatOf(kInt64, {kMaxHostElements}, 0);
  EXPECT_ERROR_CONTAINS(evalError("Concat", {&big, &big}, axisAttr(0)),
                        "elements, more than the");
}

TEST(HostUnsqueeze, AxesFromInputOrAttribute) {
  HostTensor value = scalar(96), zero = vec({0});
  expectInts(eval("Unsqueeze", {&value, &zero}), kInt64, {1}, {96});
  HostTensor matrix = ints({2, 3}, iota(6));
  expectInts(eval("Unsqueeze", {&matrix}, axesAttr({0, 3})), kInt64, {1, 2, 3, 1}, iota(6));
  HostTensor last = vec({-1});
  expectInts(eval("Unsqueeze", {&matrix, &last}), kInt64, {2, 3, 1}, iota(6));
  // The input wins over the attribute of older opsets.
  expectInts(eval("Unsqueeze", {&matrix, &zero}, axesAttr({2})), kInt64, {1, 2, 3}, iota(6));
}

TEST(HostUnsqueeze, Errors) {
  HostTensor data = vec({1, 2}), twice = vec({1, 1}), three = vec({3});
  EXPECT_EQ(evalError("Unsqueeze", {&data, &twice}), "Unsqueeze axis 1 is repeated");
  EXPECT_EQ(evalError("Unsqueeze", {&data, &three}), "Unsqueeze axis 3 out of range for rank 2");
  EXPECT_EQ(evalError("Unsqueeze", {&data}), "Unsqueeze needs axes");
}

TEST(HostSqueeze, WithAndWithoutAxes) {
  HostTensor data = ints({1, 3, 1}, {4, 5, 6}), first = vec({0}), last = vec({-1});
  expectInts(eval("Squeeze", {&data, &first}), kInt64, {3, 1}, {4, 5, 6});
  expectInts(eval("Squeeze", {&data, &last}), kInt64, {1, 3}, {4, 5, 6});
  expectInts(eval("Squeeze", {&data}), kInt64, {3}, {4, 5, 6});
  expectInts(eval("Squeeze", {&data}, axesAttr({0, 2})), kInt64, {3}, {4, 5, 6});
  HostTensor noAxes = ints({0}, {});
  expectInts(eval("Squeeze", {&data, &noAxes}), kInt64, {3}, {4, 5, 6});
}

TEST(HostSqueeze, Errors) {
  HostTensor data = ints({1, 3, 1}, {4, 5, 6}), middle = vec({1}), outside = vec({3});
  EXPECT_EQ(evalError("Squeeze", {&data, &middle}), "Squeeze axis 1 has size 3, not 1");
  EXPECT_EQ(evalError("Squeeze", {&data, &outside}), "Squeeze axis 3 out of range for rank 3");
}

TEST(HostReshape, ZeroCopiesAndMinusOneInfers) {
  HostTensor data = ints({2, 3, 4}, iota(24));
  HostTensor keepFirst = vec({0, -1}), flat = vec({-1}), middle = vec({4, 0, 2});
  expectInts(eval("Reshape", {&data, &keepFirst}), kInt64, {2, 12}, iota(24));
  expectInts(eval("Reshape", {&data, &flat}), kInt64, {24}, iota(24));
  expectInts(eval("Reshape", {&data, &middle}), kInt64, {4, 3, 2}, iota(24));
  HostTensor toScalar = ints({0}, {}), one = vec({1});
  expectInts(eval("Reshape", {&one, &toScalar}), kInt64, {}, {1});
}

TEST(HostReshape, SplatStaysSplat) {
  HostTensor data = HostTensor::splatOf(kInt32, {1024, 1024}, 3), flat = vec({-1});
  HostTensor result = eval("Reshape", {&data, &flat});
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.shape, std::vector<int64_t>{1 << 20});
  EXPECT_EQ(result.ints, std::vector<int64_t>{3});
}

TEST(HostReshape, Errors) {
  HostTensor data = ints({2, 3, 4}, iota(24));
  HostTensor twoInferred = vec({-1, -1}), five = vec({5, -1}), wrong = vec({5, 5});
  HostTensor tooManyZeros = vec({0, 0, 0, 0}), negative = vec({-2, 12});
  EXPECT_EQ(evalError("Reshape", {&data, &twoInferred}), "Reshape shape has more than one -1");
  EXPECT_EQ(evalError("Reshape", {&data, &five}),
            "Reshape cannot infer -1: 24 elements do not divide into groups of 5");
  EXPECT_EQ(evalError("Reshape", {&data, &wrong}),
            "Reshape of 24 elements to a shape of 25");
  EXPECT_EQ(evalError("Reshape", {&data, &tooManyZeros}),
            "Reshape copies dimension 3 of a rank 3 input");
  EXPECT_EQ(evalError("Reshape", {&data, &negative}),
            "Reshape shape has a negative dimension -2");
  HostTensor overflow = vec({int64_t(1) << 40, int64_t(1) << 40});
  EXPECT_ERROR_CONTAINS(evalError("Reshape", {&data, &overflow}), "more elements than int64");
}

TEST(HostTranspose, DefaultReversesAxes) {
  HostTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  expectInts(eval("Transpose", {&data}), kInt64, {3, 2}, {1, 4, 2, 5, 3, 6});
  HostTensor s = scalar(4);
  expectInts(eval("Transpose", {&s}), kInt64, {}, {4});
}

TEST(HostTranspose, Permutation) {
  HostTensor data = ints({2, 3, 4}, iota(24));
  HostAttributes attributes;
  attributes.perm = std::vector<int64_t>{1, 0, 2};
  // out[j][i][k] = data[i][j][k] = 12 i + 4 j + k.
  expectInts(eval("Transpose", {&data}, attributes), kInt64, {3, 2, 4},
             {0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22,
              23});
}

TEST(HostTranspose, Errors) {
  HostTensor data = ints({2, 3}, iota(6));
  for (std::vector<int64_t> perm : std::vector<std::vector<int64_t>>{{0, 0}, {0, 2}, {-1, 0}}) {
    HostAttributes attributes;
    attributes.perm = perm;
    EXPECT_EQ(evalError("Transpose", {&data}, attributes),
              "Transpose perm is not a permutation of the 2 axes");
  }
  HostAttributes shortPerm;
  shortPerm.perm = std::vector<int64_t>{0};
  EXPECT_EQ(evalError("Transpose", {&data}, shortPerm),
            "Transpose perm has 1 entries for rank 2");
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

TEST(HostCast, FloatToIntTruncatesTowardZero) {
  HostTensor data = floats({5}, {-2.7, -0.5, 0.5, 2.7, 3.0});
  expectInts(eval("Cast", {&data}, castTo(kInt64)), kInt64, {5}, {-2, 0, 0, 2, 3});
}

TEST(HostCast, ToBoolIsNonzero) {
  HostTensor i = vec({0, 5, -1});
  expectInts(eval("Cast", {&i}, castTo(kBool)), kBool, {3}, {0, 1, 1});
  HostTensor f = floats({4}, {0.0, kNan, -0.0, 0.25});
  expectInts(eval("Cast", {&f}, castTo(kBool)), kBool, {4}, {0, 1, 0, 1});
}

TEST(HostCast, IntegersWrapToNarrowTypes) {
  HostTensor data = vec({300, -129, -1});
  expectInts(eval("Cast", {&data}, castTo(kInt8)), kInt8, {3}, {44, 127, -1});
  expectInts(eval("Cast", {&data}, castTo(kUint8)), kUint8, {3}, {44, 127, 255});
  HostTensor flag = bools({2}, {1, 0});
  expectInts(eval("Cast", {&flag}, castTo(kInt64)), kInt64, {2}, {1, 0});
}

TEST(HostCast, FloatRoundsThroughF32) {
  // 2^24 + 1 ties to the even 2^24; 2^24 + 3 ties to the even 2^24 + 4.
  HostTensor big = vec({16777217, 16777219});
  expectFloats(eval("Cast", {&big}, castTo(kFloat)), kFloat, {2}, {16777216.0, 16777220.0});
  HostTensor d = floats({3}, {0.1, 1e39, -1e39}, kDouble);
  expectFloats(eval("Cast", {&d}, castTo(kFloat)), kFloat, {3},
               {0.100000001490116119384765625, kInf, -kInf});
  expectFloats(eval("Cast", {&d}, castTo(kDouble)), kDouble, {3}, {0.1, 1e39, -1e39});
}

TEST(HostCast, HalfPrecisionFormats) {
  HostTensor d = floats({6}, {1.0 / 3, 65519, 65520, std::ldexp(1.0, -24), std::ldexp(1.0, -25),
                              std::ldexp(3.0, -26)},
                        kDouble);
  // 1/3 keeps 10 fraction bits, 1.0101010101b * 2^-2; 65520 ties to 65536, past the largest
  // half (65504); 2^-25 ties to zero, 0.75 * 2^-24 rounds up to the smallest subnormal.
  expectFloats(eval("Cast", {&d}, castTo(kFloat16)), kFloat16, {6},
               {0.333251953125, 65504, kInf, std::ldexp(1.0, -24), 0, std::ldexp(1.0, -24)});
  // bfloat16 keeps 7 fraction bits: 1.0101011b * 2^-2 = 171/512.
  HostTensor third = floats({1}, {1.0 / 3}, kDouble);
  expectFloats(eval("Cast", {&third}, castTo(kBfloat16)), kBfloat16, {1}, {0.333984375});
}

TEST(HostCast, SplatStaysSplat) {
  HostTensor data = HostTensor::splatOf(kFloat, {1 << 20, 1 << 20}, -3.5);
  HostTensor result = eval("Cast", {&data}, castTo(kInt32));
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.dataType, kInt32);
  EXPECT_EQ(result.shape, data.shape);
  EXPECT_EQ(result.ints, std::vector<int64_t>{-3});
}

TEST(HostCast, Errors) {
  HostTensor nan = floats({1}, {kNan}), huge = floats({1}, {1e19}), data = vec({1});
  EXPECT_EQ(evalError("Cast", {&nan}, castTo(kInt64)), "Cast cannot convert nan to INT64");
  EXPECT_ERROR_CONTAINS(evalError("Cast", {&huge}, castTo(kInt32)), "to INT32");
  EXPECT_EQ(evalError("Cast", {&data}), "Cast needs a 'to' attribute");
  EXPECT_EQ(evalError("Cast", {&data}, castTo(8)),
            "Cast to data type 8 is not evaluated on the host");
  EXPECT_ERROR_CONTAINS(evalError("Cast", {&data}, castTo(kFloat + (int64_t(1) << 32))),
                        "is not evaluated on the host");
}

//===----------------------------------------------------------------------===//
// Broadcasting elementwise ops
//===----------------------------------------------------------------------===//

TEST(HostCompare, EqualBroadcasts) {
  HostTensor a = ints({2, 1}, {1, 2}), b = vec({1, 2, 3});
  expectInts(eval("Equal", {&a, &b}), kBool, {2, 3}, {1, 0, 0, 0, 1, 0});
}

TEST(HostCompare, LessAndGreater) {
  HostTensor f = floats({3}, {1.0, 2.0, kNan}), two = floats({}, {2.0});
  expectInts(eval("Less", {&f, &two}), kBool, {3}, {1, 0, 0});
  expectInts(eval("Greater", {&f, &two}), kBool, {3}, {0, 0, 0});
  HostTensor a = vec({5, -5}), zeros = vec({0, 0});
  expectInts(eval("Greater", {&a, &zeros}), kBool, {2}, {1, 0});
  expectInts(eval("Less", {&a, &zeros}), kBool, {2}, {0, 1});
}

TEST(HostCompare, Errors) {
  HostTensor a = vec({1, 2}), b = vec({1, 2}, kInt32), c = vec({1, 2, 3});
  EXPECT_EQ(evalError("Equal", {&a, &b}), "Equal operands have different types, INT64 and INT32");
  EXPECT_EQ(evalError("Equal", {&a, &c}), "Equal cannot broadcast dimension of size 3 against 2");
}

TEST(HostWhere, BroadcastsAllThree) {
  HostTensor condition = bools({2, 1}, {1, 0}), x = vec({1, 2, 3}), y = scalar(9);
  expectInts(eval("Where", {&condition, &x, &y}), kInt64, {2, 3}, {1, 2, 3, 9, 9, 9});
  HostTensor pick = bools({2}, {0, 1}), fx = floats({2}, {1.5, 2.5}), fy = floats({}, {-1});
  expectFloats(eval("Where", {&pick, &fx, &fy}), kFloat, {2}, {-1, 2.5});
}

TEST(HostWhere, Errors) {
  HostTensor notBool = vec({1}), x = vec({1}), y = floats({1}, {1});
  EXPECT_EQ(evalError("Where", {&notBool, &x, &x}), "Where condition must be BOOL, not INT64");
  HostTensor condition = bools({1}, {1});
  EXPECT_ERROR_CONTAINS(evalError("Where", {&condition, &x, &y}), "different types");
}

TEST(HostArithmetic, BroadcastAddSubMul) {
  HostTensor a = ints({2, 1}, {10, 20}), b = ints({1, 3}, {1, 2, 3});
  expectInts(eval("Add", {&a, &b}), kInt64, {2, 3}, {11, 12, 13, 21, 22, 23});
  HostTensor five = scalar(5), pair = vec({1, 2});
  expectInts(eval("Sub", {&five, &pair}), kInt64, {2}, {4, 3});
  HostTensor minusFour = scalar(-4);
  expectInts(eval("Mul", {&pair, &minusFour}), kInt64, {2}, {-4, -8});
}

TEST(HostArithmetic, IntegerDivTruncatesTowardZero) {
  HostTensor a = vec({7, -7, 7, -7}), b = vec({2, 2, -2, -2});
  expectInts(eval("Div", {&a, &b}), kInt64, {4}, {3, -3, -3, 3});
}

TEST(HostArithmetic, NarrowIntegersWrap) {
  HostTensor max32 = scalar(2147483647, kInt32), one32 = scalar(1, kInt32);
  expectInts(eval("Add", {&max32, &one32}), kInt32, {}, {-2147483648});
  HostTensor min32 = scalar(-2147483648, kInt32), minusOne32 = scalar(-1, kInt32);
  expectInts(eval("Div", {&min32, &minusOne32}), kInt32, {}, {-2147483648});
  HostTensor a = scalar(200, kUint8), b = scalar(100, kUint8);
  expectInts(eval("Add", {&a, &b}), kUint8, {}, {44});
  expectInts(eval("Sub", {&b, &a}), kUint8, {}, {156});
  expectInts(eval("Mul", {&a, &b}), kUint8, {}, {32}); // 20000 mod 256
}

TEST(HostArithmetic, FloatResultsRoundToTheirType) {
  HostTensor one = floats({}, {1.0}), three = floats({}, {3.0});
  expectFloats(eval("Div", {&one, &three}), kFloat, {}, {0.3333333432674407958984375});
  HostTensor tiny = floats({}, {std::ldexp(1.0, -30)});
  expectFloats(eval("Add", {&one, &tiny}), kFloat, {}, {1.0});
  HostTensor dOne = floats({}, {1.0}, kDouble), dTiny = floats({}, {std::ldexp(1.0, -30)}, kDouble);
  expectFloats(eval("Add", {&dOne, &dTiny}), kDouble, {}, {1.0 + std::ldexp(1.0, -30)});
  HostTensor numerators = floats({2}, {1.0, -1.0}), zero = floats({}, {0.0});
  expectFloats(eval("Div", {&numerators, &zero}), kFloat, {2}, {kInf, -kInf});
}

TEST(HostArithmetic, Errors) {
  HostTensor seven = scalar(7), zero = scalar(0), minusOne = scalar(-1), one = scalar(1);
  EXPECT_EQ(evalError("Div", {&seven, &zero}), "Div of 7 by zero");
  HostTensor min = scalar(kI64Min), max = scalar(kI64Max);
  EXPECT_EQ(evalError("Div", {&min, &minusOne}),
            "Div of -9223372036854775808 by -1 overflows int64");
  EXPECT_EQ(evalError("Add", {&max, &one}),
            "Add of 9223372036854775807 and 1 overflows int64");
  EXPECT_ERROR_CONTAINS(evalError("Sub", {&min, &one}), "overflows int64");
  HostTensor twoTo32 = scalar(int64_t(1) << 32);
  EXPECT_ERROR_CONTAINS(evalError("Mul", {&twoTo32, &twoTo32}), "overflows int64");
  HostTensor flag = bools({}, {1});
  EXPECT_EQ(evalError("Add", {&flag, &flag}), "Add does not take BOOL operands");
  HostTensor f = floats({}, {1.0});
  EXPECT_EQ(evalError("Mul", {&seven, &f}), "Mul operands have different types, INT64 and FLOAT");
}

TEST(HostArithmetic, SplatsStaySplats) {
  HostTensor big = HostTensor::splatOf(kFloat, {1 << 20, 1 << 20}, 3.0), two = floats({}, {2});
  HostTensor result = eval("Mul", {&big, &two});
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.shape, big.shape);
  EXPECT_EQ(result.floats, std::vector<double>{6.0});
  // A splat against a tensor of several values is materialized.
  HostTensor ones = HostTensor::splatOf(kInt64, {2, 3}, 1), row = vec({1, 2, 3});
  expectInts(eval("Add", {&ones, &row}), kInt64, {2, 3}, {2, 3, 4, 2, 3, 4});
}

TEST(HostArithmetic, OversizedResultsAreRefused) {
  HostTensor column = HostTensor::splatOf(kInt64, {int64_t(1) << 40, 1}, 1);
  HostTensor row = HostTensor::splatOf(kInt64, {1, int64_t(1) << 40}, 1);
  EXPECT_EQ(evalError("Add", {&column, &row}), "Add result has more elements than int64 can count");
  HostTensor tall = HostTensor::splatOf(kInt64, {int64_t(1) << 24, 1}, 1), pair = vec({1, 2});
  EXPECT_EQ(evalError("Add", {&tall, &pair}),
            "Add result has 33554432 elements, more than the 16777216 evaluated on the host");
}

TEST(HostUnary, NotNegIdentity) {
  HostTensor flags = bools({2}, {1, 0});
  expectInts(eval("Not", {&flags}), kBool, {2}, {0, 1});
  HostTensor values = vec({3, -4, 0});
  expectInts(eval("Neg", {&values}), kInt64, {3}, {-3, 4, 0});
  HostTensor narrow = scalar(-128, kInt8);
  expectInts(eval("Neg", {&narrow}), kInt8, {}, {-128});
  HostTensor f = floats({1}, {1.5});
  expectFloats(eval("Neg", {&f}), kFloat, {1}, {-1.5});
  expectFloats(eval("Identity", {&f}), kFloat, {1}, {1.5});
}

TEST(HostUnary, Errors) {
  HostTensor values = vec({1});
  EXPECT_EQ(evalError("Not", {&values}), "Not takes BOOL, not INT64");
  HostTensor min = scalar(kI64Min);
  EXPECT_EQ(evalError("Neg", {&min}), "Neg of -9223372036854775808 overflows int64");
  HostTensor unsignedValue = scalar(1, kUint8);
  EXPECT_EQ(evalError("Neg", {&unsignedValue}), "Neg does not take UINT8");
}

//===----------------------------------------------------------------------===//
// ReduceProd, Range, ConstantOfShape
//===----------------------------------------------------------------------===//

TEST(HostReduceProd, AllAxesByDefault) {
  HostTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  expectInts(eval("ReduceProd", {&data}), kInt64, {1, 1}, {720});
  expectInts(eval("ReduceProd", {&data}, axesAttr({}, 0)), kInt64, {}, {720});
}

TEST(HostReduceProd, ChosenAxes) {
  HostTensor data = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  expectInts(eval("ReduceProd", {&data}, axesAttr({1}, 0)), kInt64, {2}, {6, 120});
  expectInts(eval("ReduceProd", {&data}, axesAttr({-1})), kInt64, {2, 1}, {6, 120});
  HostTensor first = vec({0});
  expectInts(eval("ReduceProd", {&data, &first}), kInt64, {1, 3}, {4, 10, 18});
  HostTensor f = floats({2}, {1.5, 2.0});
  expectFloats(eval("ReduceProd", {&f}, axesAttr({0}, 0)), kFloat, {}, {3.0});
  // The product of no elements is 1.
  HostTensor empty = ints({2, 0}, {});
  expectInts(eval("ReduceProd", {&empty}, axesAttr({1}, 0)), kInt64, {2}, {1, 1});
}

TEST(HostReduceProd, Errors) {
  HostTensor data = vec({int64_t(1) << 32, int64_t(1) << 32});
  EXPECT_ERROR_CONTAINS(evalError("ReduceProd", {&data}), "overflows int64");
  EXPECT_EQ(evalError("ReduceProd", {&data}, axesAttr({0, -1})),
            "ReduceProd axis -1 is repeated");
  HostTensor huge = HostTensor::splatOf(kInt64, {int64_t(1) << 30}, 1);
  EXPECT_ERROR_CONTAINS(evalError("ReduceProd", {&huge}), "more than the 16777216");
}

TEST(HostRange, Integers) {
  HostTensor zero = scalar(0), five = scalar(5), one = scalar(1);
  expectInts(eval("Range", {&zero, &five, &one}), kInt64, {5}, {0, 1, 2, 3, 4});
  HostTensor ten = scalar(10), four = scalar(4), minusThree = scalar(-3);
  expectInts(eval("Range", {&ten, &four, &minusThree}), kInt64, {2}, {10, 7});
  HostTensor three = scalar(3);
  expectInts(eval("Range", {&zero, &ten, &three}), kInt64, {4}, {0, 3, 6, 9});
  expectInts(eval("Range", {&five, &five, &one}), kInt64, {0}, {});
  expectInts(eval("Range", {&one, &zero, &one}), kInt64, {0}, {});
  HostTensor a = scalar(0, kInt32), b = scalar(3, kInt32), c = scalar(1, kInt32);
  expectInts(eval("Range", {&a, &b, &c}), kInt32, {3}, {0, 1, 2});
}

TEST(HostRange, ExtremeIntegersDoNotOverflow) {
  HostTensor min = scalar(kI64Min), max = scalar(kI64Max), quarter = scalar(int64_t(1) << 62);
  expectInts(eval("Range", {&min, &max, &quarter}), kInt64, {4},
             {kI64Min, -(int64_t(1) << 62), 0, int64_t(1) << 62});
  expectInts(eval("Range", {&max, &min, &min}), kInt64, {2}, {kI64Max, -1});
}

TEST(HostRange, Floats) {
  HostTensor zero = floats({}, {0}), one = floats({}, {1}), quarter = floats({}, {0.25});
  expectFloats(eval("Range", {&zero, &one, &quarter}), kFloat, {4}, {0, 0.25, 0.5, 0.75});
  HostTensor three = floats({}, {3}, kDouble), dZero = floats({}, {0}, kDouble);
  HostTensor step = floats({}, {-0.75}, kDouble);
  expectFloats(eval("Range", {&three, &dZero, &step}), kDouble, {4}, {3, 2.25, 1.5, 0.75});
}

TEST(HostRange, Errors) {
  HostTensor zero = scalar(0), one = scalar(1), max = scalar(kI64Max);
  EXPECT_EQ(evalError("Range", {&zero, &one, &zero}), "Range delta cannot be 0");
  EXPECT_EQ(evalError("Range", {&zero, &max, &one}),
            "Range has 9223372036854775807 elements, more than the 16777216 evaluated on the "
            "host");
  HostTensor pair = vec({0, 1});
  EXPECT_EQ(evalError("Range", {&pair, &one, &one}),
            "Range start, limit and delta must be scalars");
  HostTensor f = floats({}, {1});
  EXPECT_ERROR_CONTAINS(evalError("Range", {&zero, &f, &one}), "different types");
  HostTensor nan = floats({}, {kNan}), fOne = floats({}, {1}), far = floats({}, {1e30});
  EXPECT_ERROR_CONTAINS(evalError("Range", {&nan, &fOne, &fOne}), "has no element count");
  EXPECT_ERROR_CONTAINS(evalError("Range", {&fOne, &far, &fOne}), "more than the 16777216");
  HostTensor flag = bools({}, {1});
  EXPECT_EQ(evalError("Range", {&flag, &flag, &flag}), "Range does not take BOOL");
}

TEST(HostConstantOfShape, DefaultIsFloatZeroSplat) {
  HostTensor shape = vec({2, 3});
  HostTensor result = eval("ConstantOfShape", {&shape});
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.dataType, kFloat);
  EXPECT_EQ(result.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(result.floats, std::vector<double>{0.0});
  EXPECT_TRUE(result.ints.empty());
  EXPECT_EQ(result.numElements(), 6);
}

TEST(HostConstantOfShape, ValueAttribute) {
  HostAttributes attributes;
  attributes.value = vec({1});
  HostTensor shape = vec({int64_t(1) << 30, int64_t(1) << 30});
  // Splats of any size are fine: nothing is allocated per element.
  HostTensor result = eval("ConstantOfShape", {&shape}, attributes);
  EXPECT_TRUE(result.splat);
  EXPECT_EQ(result.dataType, kInt64);
  EXPECT_EQ(result.shape, shape.ints);
  EXPECT_EQ(result.ints, std::vector<int64_t>{1});
  HostTensor noDims = ints({0}, {});
  HostTensor scalarResult = eval("ConstantOfShape", {&noDims}, attributes);
  EXPECT_TRUE(scalarResult.shape.empty());
  EXPECT_EQ(scalarResult.intAt(0), 1);
}

TEST(HostConstantOfShape, Errors) {
  HostTensor negative = vec({2, -1});
  EXPECT_EQ(evalError("ConstantOfShape", {&negative}),
            "ConstantOfShape dimension -1 is negative");
  HostTensor overflow = vec({int64_t(1) << 32, int64_t(1) << 32});
  EXPECT_EQ(evalError("ConstantOfShape", {&overflow}),
            "ConstantOfShape result has more elements than int64 can count");
  HostTensor shape = vec({2});
  HostAttributes twoValues;
  twoValues.value = vec({1, 2});
  EXPECT_EQ(evalError("ConstantOfShape", {&shape}, twoValues),
            "ConstantOfShape value must hold one element, not 2");
  HostAttributes malformed;
  malformed.value = ints({1}, {});
  EXPECT_ERROR_CONTAINS(evalError("ConstantOfShape", {&shape}, malformed),
                        "ConstantOfShape value: tensor holds 0 values");
  HostTensor floatShape = floats({1}, {2});
  EXPECT_ERROR_CONTAINS(evalError("ConstantOfShape", {&floatShape}), "INT32 or INT64");
}

//===----------------------------------------------------------------------===//
// Whole subgraphs as exporters write them
//===----------------------------------------------------------------------===//

// BERT's attention splits a fused projection: Shape -> Gather(2) -> Div(3) -> Mul(1), Mul(2)
// -> Unsqueeze -> Slice(starts, ends).
TEST(HostSubgraph, BertStyleSliceBounds) {
  HostTensor shape = vec({2, 16, 96}), two = scalar(2), three = scalar(3), one = scalar(1);
  HostTensor hidden = eval("Gather", {&shape, &two});
  expectInts(hidden, kInt64, {}, {96});
  HostTensor part = eval("Div", {&hidden, &three});
  expectInts(part, kInt64, {}, {32});
  HostTensor begin = eval("Mul", {&part, &one}), end = eval("Mul", {&part, &two});
  HostTensor axis0 = vec({0});
  HostTensor starts = eval("Unsqueeze", {&begin, &axis0});
  HostTensor ends = eval("Unsqueeze", {&end, &axis0});
  expectInts(starts, kInt64, {1}, {32});
  expectInts(ends, kInt64, {1}, {64});
  HostTensor zero = scalar(0), ninetySix = scalar(96);
  HostTensor columns = eval("Range", {&zero, &ninetySix, &one});
  std::vector<int64_t> middle(32);
  for (int64_t i = 0; i < 32; ++i)
    middle[i] = 32 + i;
  expectInts(eval("Slice", {&columns, &starts, &ends}), kInt64, {32}, middle);
  HostTensor toEnd = vec({kI64Max});
  std::vector<int64_t> last(32);
  for (int64_t i = 0; i < 32; ++i)
    last[i] = 64 + i;
  expectInts(eval("Slice", {&columns, &ends, &toEnd}), kInt64, {32}, last);
}

// view(B, T, H, -1): the target shape is assembled from Shape pieces, then Reshape consumes it.
TEST(HostSubgraph, ViewShapeFromPieces) {
  HostTensor shape = vec({2, 16, 96}), zeroIndex = scalar(0), oneIndex = scalar(1);
  HostTensor axis0 = vec({0});
  HostTensor batch = eval("Gather", {&shape, &zeroIndex});
  HostTensor seq = eval("Gather", {&shape, &oneIndex});
  HostTensor b = eval("Unsqueeze", {&batch, &axis0}), t = eval("Unsqueeze", {&seq, &axis0});
  HostTensor heads = vec({12}), rest = vec({-1});
  HostTensor target = eval("Concat", {&b, &t, &heads, &rest}, axisAttr(0));
  expectInts(target, kInt64, {4}, {2, 16, 12, -1});
  HostTensor activations = HostTensor::splatOf(kFloat, {2, 16, 96}, 0.5);
  HostTensor viewed = eval("Reshape", {&activations, &target});
  EXPECT_EQ(viewed.shape, (std::vector<int64_t>{2, 16, 12, 8}));
  EXPECT_TRUE(viewed.splat);
}

// A causal mask: Range -> Unsqueeze -> Less -> Not -> Where, as torch writes triu masks.
TEST(HostSubgraph, CausalMask) {
  HostTensor zero = scalar(0), three = scalar(3), one = scalar(1);
  HostTensor positions = eval("Range", {&zero, &three, &one});
  HostTensor column = vec({1}), row = vec({0});
  HostTensor queries = eval("Unsqueeze", {&positions, &column});
  HostTensor keys = eval("Unsqueeze", {&positions, &row});
  HostTensor future = eval("Less", {&queries, &keys});
  expectInts(future, kBool, {3, 3}, {0, 1, 1, 0, 0, 1, 0, 0, 0});
  HostTensor allowed = eval("Not", {&future});
  HostTensor open = floats({}, {0}), blocked = floats({}, {-kInf});
  expectFloats(eval("Where", {&allowed, &open, &blocked}), kFloat, {3, 3},
               {0, -kInf, -kInf, 0, 0, -kInf, 0, 0, 0});
}

//===----------------------------------------------------------------------===//
// Robustness against malformed nodes
//===----------------------------------------------------------------------===//

TEST(HostRobustness, UnknownOpsAndInputCounts) {
  HostTensor a = vec({1});
  EXPECT_EQ(evalError("MatMul", {&a, &a}), "MatMul is not evaluated on the host");
  EXPECT_EQ(evalError("Gather", {&a}), "Gather takes 2 inputs, not 1");
  EXPECT_EQ(evalError("Add", {&a, &a, &a}), "Add takes 2 inputs, not 3");
  EXPECT_EQ(evalError("Slice", {&a, &a, &a, &a, &a, &a}), "Slice takes 3 to 5 inputs, not 6");
  EXPECT_EQ(evalError("Add", {&a, nullptr}), "Add input 1 is missing");
  EXPECT_EQ(evalError("Range", {nullptr, &a, &a}), "Range input 0 is missing");
}

TEST(HostRobustness, MalformedTensors) {
  HostTensor shortStorage = ints({3}, {1, 2});
  EXPECT_EQ(evalError("Identity", {&shortStorage}),
            "Identity input 0: tensor holds 2 values, its shape needs 3");
  HostTensor wrongStorage = HostTensor::ofFloats(kInt64, {1}, {1.0});
  EXPECT_ERROR_CONTAINS(evalError("Identity", {&wrongStorage}), "its shape needs 1");
  HostTensor negativeDim = ints({-1}, {});
  EXPECT_ERROR_CONTAINS(evalError("Identity", {&negativeDim}), "negative dimension");
  HostTensor unsigned64 = ints({1}, {1}, kUint64);
  EXPECT_EQ(evalError("Identity", {&unsigned64}),
            "Identity input 0: tensors of data type 13 are not evaluated on the host");
  HostTensor badBool = bools({1}, {2}), badInt8 = ints({1}, {300}, kInt8);
  EXPECT_EQ(evalError("Not", {&badBool}),
            "Not input 0: BOOL tensor holds 2, outside the range of its type");
  EXPECT_ERROR_CONTAINS(evalError("Neg", {&badInt8}), "INT8 tensor holds 300");
  HostTensor splatWithoutValue = ints({4}, {});
  splatWithoutValue.splat = true;
  EXPECT_ERROR_CONTAINS(evalError("Identity", {&splatWithoutValue}), "its shape needs 1");
}

/// A well-formed node of each op, the starting point of the mutations below.
struct Node {
  std::string op;
  std::vector<std::optional<HostTensor>> inputs;
  HostAttributes attributes;
};

std::vector<Node> seedNodes() {
  HostTensor matrix = ints({2, 3}, iota(6)), column = ints({2, 1}, {6, 8}), row = vec({1, 2, 3});
  HostAttributes axis1 = axisAttr(1), axis0 = axisAttr(0), perm, to = castTo(kInt64);
  perm.perm = std::vector<int64_t>{1, 0};
  HostAttributes value;
  value.value = vec({1});
  std::vector<Node> nodes = {
      {"Gather", {matrix, vec({1, -1})}, axis1},
      {"Slice", {ints({3, 4}, iota(12)), vec({0, 1}), vec({2, kI64Max}), vec({0, 1}),
                 vec({1, -1})}, {}},
      {"Concat", {vec({1, 2}), vec({3})}, axis0},
      {"Unsqueeze", {matrix, vec({0})}, {}},
      {"Squeeze", {ints({1, 3}, {1, 2, 3}), vec({0})}, {}},
      {"Reshape", {matrix, vec({0, -1})}, {}},
      {"Cast", {floats({3}, {1.5, -2.5, 0})}, to},
      {"Not", {bools({2}, {0, 1})}, {}},
      {"Where", {bools({2, 1}, {0, 1}), row, scalar(4)}, {}},
      {"Range", {scalar(0), scalar(10), scalar(3)}, {}},
      {"ConstantOfShape", {vec({2, 3})}, value},
      {"Neg", {row}, {}},
      {"Identity", {floats({2}, {0.5, 1})}, {}},
      {"Transpose", {matrix}, perm},
      {"ReduceProd", {matrix}, axesAttr({1})},
  };
  for (const char *op : {"Equal", "Less", "Greater", "Add", "Sub", "Mul", "Div"}) {
    nodes.push_back({op, {column, row}, {}});
    nodes.push_back({op, {floats({2, 1}, {0.5, 4}), floats({3}, {1, 2, 3})}, {}});
  }
  return nodes;
}

const int64_t kOddDims[] = {0, 1, 2, 3, -1, int64_t(1) << 20, int64_t(1) << 40, kI64Max};
const int64_t kOddValues[] = {0, 1, -1, 2, 3, 7, -7, 300, kI64Max, kI64Min};
const int64_t kOddAxes[] = {-3, -2, -1, 0, 1, 2, 3, kI64Min, kI64Max};
const int32_t kOddTypes[] = {kFloat, kInt64, kInt32, kBool, kUint8, kInt8, kDouble, kFloat16, 13,
                             0};

template <typename T, size_t N> T pick(std::mt19937_64 &random, const T (&choices)[N]) {
  return choices[random() % N];
}

/// One corruption of the kind a flipped bit in a model file causes.
void mutateTensor(HostTensor &tensor, std::mt19937_64 &random) {
  switch (random() % 7) {
  case 0:
    tensor.dataType = pick(random, kOddTypes);
    break;
  case 1:
    if (tensor.shape.empty())
      tensor.shape.push_back(pick(random, kOddDims));
    else
      tensor.shape[random() % tensor.shape.size()] = pick(random, kOddDims);
    break;
  case 2:
    if (random() % 2 && !tensor.shape.empty())
      tensor.shape.pop_back();
    else
      tensor.shape.push_back(pick(random, kOddDims));
    break;
  case 3:
    if (!tensor.ints.empty())
      tensor.ints[random() % tensor.ints.size()] = pick(random, kOddValues);
    if (!tensor.floats.empty())
      tensor.floats[random() % tensor.floats.size()] =
          random() % 4 == 0 ? kNan : static_cast<double>(pick(random, kOddValues));
    break;
  case 4:
    // Usually a consistent splat, which may then describe a huge tensor.
    tensor.splat = !tensor.splat;
    if (tensor.splat && random() % 4 != 0) {
      tensor.ints.resize(std::min<size_t>(tensor.ints.size(), 1));
      tensor.floats.resize(std::min<size_t>(tensor.floats.size(), 1));
    }
    break;
  case 5:
    if (random() % 2)
      tensor.ints.push_back(1);
    else if (!tensor.ints.empty())
      tensor.ints.pop_back();
    break;
  default:
    // Values moved to the floating storage, with or without the type to match.
    for (int64_t value : tensor.ints)
      tensor.floats.push_back(static_cast<double>(value));
    tensor.ints.clear();
    if (random() % 2)
      tensor.dataType = kFloat;
    break;
  }
}

void mutateAxes(std::optional<std::vector<int64_t>> &axes, std::mt19937_64 &random) {
  if (!axes || random() % 3 == 0)
    axes = std::vector<int64_t>{};
  if (axes->empty() || random() % 2)
    axes->push_back(pick(random, kOddAxes));
  else
    (*axes)[random() % axes->size()] = pick(random, kOddAxes);
}

void mutateNode(Node &node, std::mt19937_64 &random) {
  HostAttributes &attributes = node.attributes;
  switch (random() % 8) {
  case 0:
    if (!node.inputs.empty())
      node.inputs[random() % node.inputs.size()].reset();
    break;
  case 1:
    if (random() % 2 && !node.inputs.empty())
      node.inputs.pop_back();
    else
      node.inputs.push_back(vec({1}));
    break;
  case 2:
    attributes.axis = pick(random, kOddAxes);
    break;
  case 3:
    mutateAxes(attributes.axes, random);
    break;
  case 4:
    mutateAxes(attributes.perm, random);
    break;
  case 5:
    attributes.to = pick(random, kOddTypes);
    attributes.keepdims = random() % 2;
    break;
  case 6:
    if (!attributes.value)
      attributes.value = vec({1});
    mutateTensor(*attributes.value, random);
    break;
  default:
    for (std::optional<HostTensor> &input : node.inputs)
      if (input && random() % 2)
        mutateTensor(*input, random);
    break;
  }
}

// Whatever the corruption, evaluation either fails with a message or returns a well-formed
// result.
TEST(HostRobustness, MutatedNodesNeverYieldMalformedResults) {
  std::vector<Node> seeds = seedNodes();
  std::mt19937_64 random(20240917);
  std::map<std::string, int> successes;
  for (int iteration = 0; iteration < 200000; ++iteration) {
    Node node = seeds[random() % seeds.size()];
    for (uint64_t m = random() % 5; m > 0; --m)
      mutateNode(node, random);
    std::vector<const HostTensor *> inputs;
    for (const std::optional<HostTensor> &input : node.inputs)
      inputs.push_back(input ? &*input : nullptr);
    std::vector<HostTensor> outputs;
    std::string error;
    if (!evaluateOnHost(node.op, inputs, node.attributes, outputs, error)) {
      ASSERT_FALSE(error.empty()) << node.op;
      continue;
    }
    ++successes[node.op];
    ASSERT_EQ(outputs.size(), 1u) << node.op;
    const HostTensor &result = outputs[0];
    int64_t elements = result.numElements();
    ASSERT_GE(elements, 0) << node.op;
    ASSERT_TRUE(result.splat || elements <= kMaxHostElements) << node.op;
    size_t stored = result.splat ? 1 : static_cast<size_t>(elements);
    ASSERT_EQ(result.isFloating() ? result.floats.size() : result.ints.size(), stored)
        << node.op;
    ASSERT_TRUE(result.isFloating() ? result.ints.empty() : result.floats.empty()) << node.op;
  }
  // Every op's success path must be exercised too, not only its checks.
  for (const Node &seed : seeds)
    EXPECT_GE(successes[seed.op], 100) << seed.op;
}

} // namespace
