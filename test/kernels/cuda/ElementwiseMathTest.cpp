//===- ElementwiseMathTest.cpp - the CUDA elementwise kernels' arithmetic ------------===//
//
// Runs the bodies of the CUDA elementwise kernels (kernels/cuda/ElementwiseMath.h) on the CPU,
// one call per element as the kernels' grid-stride loops do, over random inputs with zeros,
// infinities, NaN and integer extremes mixed in, and compares them with the CPU kernels of the
// same ops. Where both sides compute the same IEEE operations (integers, selections, casts,
// + - * /, sqrt, libm's log, sin, cos, pow) they must agree exactly. Where the CPU kernels use
// VectorMath's exp, erf and tanh (within 2.4 ulp of libm's) or may fuse a multiply-add, they
// must agree to a few f32 ulp, which f16/bf16 rounding turns into at most one of their ulps.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/ElementwiseMath.h"
#include "KernelTestSupport.h"
#include "kernels/ElementVisitors.h"
#include "kernels/KernelTargets.h"
#include "kernels/cuda/CudaTarget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace memc::kernels::cuda {
namespace {

using testing::attrs;
using testing::OwnedTensor;
using testing::runKernel;

/// body(i) for every element: what forEachElement does on the GPU.
template <typename Body> void runOnHost(int64_t count, const Body &body) {
  for (int64_t i = 0; i < count; ++i)
    body(i);
}

/// Random values: mostly normal floats (scale `scale`) or integers in [-100, 100], with one in
/// eight a value that breaks careless arithmetic.
OwnedTensor randomTensor(DType dtype, Shape shape, uint32_t seed, double scale = 3.0) {
  OwnedTensor t(dtype, std::move(shape));
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  std::uniform_int_distribution<int> integer(-100, 100), pick(0, 15);
  const float floatSpecials[] = {0.0f,  -0.0f, INFINITY, -INFINITY, NAN,  1e-30f, -1e30f, 1.0f,
                                 -1.0f, 2.0f,  0.5f,     -2.5f,     3e9f, -3e9f,  1e-42f, 65504.0f};
  for (int64_t i = 0; i < t.numElements(); ++i) {
    bool special = pick(random) < 2;
    int which = pick(random);
    visitAny(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T *data = t.as<T>();
      if constexpr (std::is_same_v<T, BoolByte>) {
        data[i] = static_cast<BoolByte>(special ? 2 : integer(random) & 1);
      } else if constexpr (std::is_integral_v<T>) {
        const T extremes[] = {
            0, 1, -1, 2, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()};
        data[i] = special ? extremes[which % 6] : static_cast<T>(integer(random));
      } else {
        data[i] = Element<T>::store(special ? floatSpecials[which] : normal(random));
      }
    });
  }
  return t;
}

/// How far a CUDA body may be from the CPU kernel: |actual - expected| <= rtol |expected| +
/// atol scale[i], scale[i] the size of the terms that cancel in element i (1 when not given).
struct Tolerance {
  double rtol = 0, atol = 0;
  std::vector<double> scale;
};
const Tolerance kExact{};

/// The absolute error of an f32 formula per unit of its cancelling terms: a few ulps of 1, from
/// libm against VectorMath (each within 2.4 ulp) and fused against separate multiply-adds.
constexpr double kF32Error = 4 * 0x1p-24;

/// A few f32 ulps, or one ulp of f16/bf16 where that difference moves a rounding (f16 down to
/// its subnormals); with `scale`, kF32Error times it besides.
Tolerance ulps(DType dtype, std::vector<double> scale = {}) {
  double atol = scale.empty() ? 0 : kF32Error;
  switch (dtype) {
  case DType::F16:
    return {0x1p-10, std::max(atol, 0x1p-24), std::move(scale)};
  case DType::BF16:
    return {0x1p-7, atol, std::move(scale)};
  default:
    return {8 * 0x1p-24, atol, std::move(scale)};
  }
}

/// fn(the tensors' values at element i) for every element i of the first, a scale for
/// Tolerance; a smaller tensor repeats (a bias along the last dimension).
template <typename Fn>
std::vector<double> scaleOf(const std::vector<const OwnedTensor *> &tensors, Fn fn) {
  std::vector<std::vector<double>> values;
  for (const OwnedTensor *tensor : tensors)
    values.push_back(tensor->values());
  std::vector<double> scale(values[0].size());
  for (size_t i = 0; i < scale.size(); ++i) {
    std::vector<double> element;
    for (const std::vector<double> &tensorValues : values)
      element.push_back(tensorValues[i % tensorValues.size()]);
    scale[i] = fn(element);
  }
  return scale;
}

void expectSame(const OwnedTensor &actual, const OwnedTensor &expected, const Tolerance &tolerance,
                const std::string &what) {
  std::vector<double> a = actual.values(), e = expected.values();
  ASSERT_EQ(a.size(), e.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double scale = tolerance.scale.empty() ? 1.0 : tolerance.scale[i];
    bool ok = std::isnan(e[i])   ? std::isnan(a[i])
              : std::isinf(e[i]) ? a[i] == e[i]
                                 : std::abs(a[i] - e[i]) <=
                                       tolerance.rtol * std::abs(e[i]) + tolerance.atol * scale;
    if (!ok && failures++ < 8)
      ADD_FAILURE() << what << ": [" << i << "] got " << a[i] << ", expected " << e[i];
  }
  EXPECT_EQ(failures, 0) << what;
}

std::string describe(const std::string &op, DType dtype) { return op + " on " + dtypeName(dtype); }

//===----------------------------------------------------------------------===//
// Unary ops
//===----------------------------------------------------------------------===//

const Shape kUnaryShape = {4, 1031};

/// The CPU kernel `op` against MapBody<T, Fn> over a random tensor of each dtype of the class.
/// `exact`, or within ulps(dtype) with the scale `cancelling`(input value) if given.
template <TypeClass Class, typename Fn>
void expectMapMatches(const std::string &op, Fn fn, bool exact, const Attributes &attributes = {},
                      double (*cancelling)(double) = nullptr) {
  for (DType dtype : typesOf(Class)) {
    OwnedTensor input = randomTensor(dtype, kUnaryShape, 7);
    OwnedTensor expected = runKernel(op, {input}, {{dtype, kUnaryShape}}, attributes)[0];
    OwnedTensor actual(dtype, kUnaryShape);
    visitClass<Class>(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      runOnHost(input.numElements(), MapBody<T, Fn>{input.as<T>(), actual.as<T>(), fn});
    });
    Tolerance tolerance = exact ? kExact : ulps(dtype);
    if (cancelling)
      tolerance = ulps(dtype, scaleOf({&input}, [&](const auto &x) { return cancelling(x[0]); }));
    expectSame(actual, expected, tolerance, describe(op, dtype));
  }
}

template <typename Op> void expectUnaryMatches(bool exact) {
  expectMapMatches<Op::types>(Op::name, Op(), exact);
}

TEST(CudaElementwiseMath, ExactUnaryFunctionsMatchTheCpuKernels) {
  expectUnaryMatches<Neg>(true);
  expectUnaryMatches<Relu>(true);
  expectUnaryMatches<Not>(true);
  expectUnaryMatches<Abs>(true);
  expectUnaryMatches<Sqrt>(true);
  expectUnaryMatches<Reciprocal>(true);
  expectUnaryMatches<Log>(true);
  expectUnaryMatches<Sin>(true);
  expectUnaryMatches<Cos>(true);
  expectUnaryMatches<HardSwish>(true);
}

TEST(CudaElementwiseMath, TranscendentalUnaryFunctionsMatchTheCpuKernels) {
  expectUnaryMatches<Exp>(false);
  expectUnaryMatches<Erf>(false);
  expectUnaryMatches<Tanh>(false);
  expectUnaryMatches<Sigmoid>(false);
  expectUnaryMatches<Softplus>(false);
}

TEST(CudaElementwiseMath, ScaledActivationsMatchTheCpuKernels) {
  expectMapMatches<TypeClass::Float>("leaky_relu", LeakyRelu{0.07f}, true,
                                     attrs({{"alpha", 0.07}}));
  expectMapMatches<TypeClass::Float>("elu", Elu{1.3f}, true, attrs({{"alpha", 1.3}}));
  // alpha x + beta may be one fused multiply-add on either side, and cancel.
  expectMapMatches<TypeClass::Float>("hard_sigmoid", HardSigmoid{0.3f, 0.4f}, false,
                                     attrs({{"alpha", 0.3}, {"beta", 0.4}}),
                                     [](double x) { return 1 + std::abs(x); });
}

/// x Phi(x) cancels in 1 + erf for x < 0, so its error grows with |x|.
double geluScale(double x) { return std::abs(x); }

/// The derivatives cancel near x = -0.75 and, for tanh, in 1 - t^2 (times 0.05 x + 0.1 x^3).
double geluGradScale(double grad, double x) {
  return std::abs(grad) * (1 + std::abs(x) + 0.1 * std::abs(x * x * x));
}

TEST(CudaElementwiseMath, GeluMatchesTheCpuKernel) {
  expectMapMatches<TypeClass::Float>("gelu", GeluErf(), false, {}, geluScale);
  expectMapMatches<TypeClass::Float>("gelu", GeluErf(), false,
                                     attrs({{"approximate", std::string("none")}}), geluScale);
  expectMapMatches<TypeClass::Float>("gelu", GeluTanh(), false,
                                     attrs({{"approximate", std::string("tanh")}}), geluScale);
}

TEST(CudaElementwiseMath, ClipMatchesTheCpuKernel) {
  struct Bounds {
    std::optional<double> min, max;
  };
  // Fractional bounds round inward on integers; lo > hi lets hi win; absent bounds are +-inf.
  for (Bounds bounds : {Bounds{-1.5, 2.5}, Bounds{0.5, std::nullopt}, Bounds{std::nullopt, -7.0},
                        Bounds{3.0, -3.0}, Bounds{-1e30, 1e30}, Bounds{}}) {
    Attributes attributes;
    if (bounds.min)
      attributes.set("min", *bounds.min);
    if (bounds.max)
      attributes.set("max", *bounds.max);
    double lo = bounds.min.value_or(-std::numeric_limits<double>::infinity());
    double hi = bounds.max.value_or(std::numeric_limits<double>::infinity());
    for (DType dtype : kNumericTypes) {
      OwnedTensor input = randomTensor(dtype, kUnaryShape, 11);
      OwnedTensor expected = runKernel("clip", {input}, {{dtype, kUnaryShape}}, attributes)[0];
      OwnedTensor actual(dtype, kUnaryShape);
      visitNumeric(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using Fn = Clip<ComputeOf<T>>;
        runOnHost(input.numElements(),
                  MapBody<T, Fn>{input.as<T>(), actual.as<T>(), clipFor<ComputeOf<T>>(lo, hi)});
      });
      expectSame(actual, expected, kExact, describe("clip", dtype));
    }
  }
}

TEST(CudaElementwiseMath, DropoutMatchesTheCpuKernel) {
  for (double ratio : {0.0, 0.3, 0.9})
    for (bool salted : {false, true})
      for (DType dtype : kFloatTypes) {
        OwnedTensor input = randomTensor(dtype, kUnaryShape, 13);
        OwnedTensor salt = testing::i64({}, {12345});
        Attributes attributes = attrs({{"ratio", ratio}, {"seed", int64_t{99}}});
        std::vector<OwnedTensor> inputs = {input};
        if (salted)
          inputs.push_back(salt);
        OwnedTensor expected = runKernel("dropout", inputs, {{dtype, kUnaryShape}}, attributes)[0];
        OwnedTensor actual(dtype, kUnaryShape);
        DropoutMask mask(ratio, 99, salted ? std::optional<int64_t>(12345) : std::nullopt);
        visitFloat(dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          runOnHost(input.numElements(), DropoutBody<T>{input.as<T>(), actual.as<T>(), mask});
        });
        expectSame(actual, expected, kExact, describe("dropout", dtype));
      }
}

//===----------------------------------------------------------------------===//
// gelu with a bias, gelu gradients
//===----------------------------------------------------------------------===//

const char *const kApproximations[] = {"none", "tanh"};

/// The gelu or its derivative that the `approximate` attribute names.
template <bool Derivative, typename Fn> void withGelu(const std::string &approximate, Fn &&fn) {
  if constexpr (Derivative)
    approximate == "tanh" ? fn(GeluTanhDerivative()) : fn(GeluDerivative());
  else
    approximate == "tanh" ? fn(GeluTanh()) : fn(GeluErf());
}

TEST(CudaElementwiseMath, BiasGeluMatchesTheCpuKernel) {
  const Shape shape = {3, 5, 37}, biasShape = {37};
  for (std::string approximate : kApproximations)
    for (DType dtype : kFloatTypes)
      for (DType biasType : kFloatTypes) {
        OwnedTensor input = randomTensor(dtype, shape, 17);
        OwnedTensor bias = randomTensor(biasType, biasShape, 19, 1.0);
        OwnedTensor expected = runKernel("bias_gelu", {input, bias}, {{dtype, shape}},
                                         attrs({{"approximate", approximate}}))[0];
        OwnedTensor actual(dtype, shape);
        withGelu<false>(approximate, [&](auto gelu) {
          visitFloat(dtype, [&](auto dataTag) {
            visitFloat(biasType, [&](auto biasTag) {
              using T = typename decltype(dataTag)::type;
              using B = typename decltype(biasTag)::type;
              BiasGeluBody<T, B, decltype(gelu), uint32_t> body{input.as<T>(), bias.as<B>(),
                                                                actual.as<T>(), 37, gelu};
              runOnHost(input.numElements(), body);
            });
          });
        });
        auto scale = scaleOf({&input, &bias}, [](const auto &v) { return geluScale(v[0] + v[1]); });
        expectSame(actual, expected, ulps(dtype, scale),
                   describe("bias_gelu " + approximate, dtype) + " with a " + dtypeName(biasType) +
                       " bias");
      }
}

TEST(CudaElementwiseMath, GeluGradMatchesTheCpuKernel) {
  for (std::string approximate : kApproximations)
    for (DType dtype : kFloatTypes) {
      OwnedTensor grad = randomTensor(dtype, kUnaryShape, 23);
      OwnedTensor input = randomTensor(dtype, kUnaryShape, 29);
      OwnedTensor expected = runKernel("gelu_grad", {grad, input}, {{dtype, kUnaryShape}},
                                       attrs({{"approximate", approximate}}))[0];
      OwnedTensor actual(dtype, kUnaryShape);
      withGelu<true>(approximate, [&](auto derivative) {
        visitFloat(dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          GradBody<T, decltype(derivative)> body{grad.as<T>(), input.as<T>(), actual.as<T>(),
                                                 derivative};
          runOnHost(input.numElements(), body);
        });
      });
      auto scale =
          scaleOf({&grad, &input}, [](const auto &v) { return geluGradScale(v[0], v[1]); });
      expectSame(actual, expected, ulps(dtype, scale), describe("gelu_grad " + approximate, dtype));
    }
}

TEST(CudaElementwiseMath, BiasGeluGradMatchesTheCpuKernel) {
  const Shape shape = {7, 41}, biasShape = {41};
  for (std::string approximate : kApproximations)
    for (DType dtype : kFloatTypes)
      for (DType biasType : kFloatTypes) {
        OwnedTensor grad = randomTensor(dtype, shape, 31);
        OwnedTensor input = randomTensor(dtype, shape, 37);
        OwnedTensor bias = randomTensor(biasType, biasShape, 41, 1.0);
        OwnedTensor expected = runKernel("bias_gelu_grad", {grad, input, bias}, {{dtype, shape}},
                                         attrs({{"approximate", approximate}}))[0];
        OwnedTensor actual(dtype, shape);
        withGelu<true>(approximate, [&](auto derivative) {
          visitFloat(dtype, [&](auto dataTag) {
            visitFloat(biasType, [&](auto biasTag) {
              using T = typename decltype(dataTag)::type;
              using B = typename decltype(biasTag)::type;
              BiasGeluGradBody<T, B, decltype(derivative), uint64_t> body{
                  grad.as<T>(), input.as<T>(), bias.as<B>(), actual.as<T>(), 41, derivative};
              runOnHost(input.numElements(), body);
            });
          });
        });
        auto scale = scaleOf({&grad, &input, &bias},
                             [](const auto &v) { return geluGradScale(v[0], v[1] + v[2]); });
        expectSame(actual, expected, ulps(dtype, scale),
                   describe("bias_gelu_grad " + approximate, dtype) + " with a " +
                       dtypeName(biasType) + " bias");
      }
}

//===----------------------------------------------------------------------===//
// trilu, cast, refresh_copy
//===----------------------------------------------------------------------===//

TEST(CudaElementwiseMath, TriluMatchesTheCpuKernel) {
  const Shape shape = {2, 3, 5, 7};
  for (int64_t k :
       {int64_t{-2}, int64_t{0}, int64_t{3}, int64_t{100}, std::numeric_limits<int64_t>::lowest()})
    for (bool upper : {false, true})
      for (DType dtype : kAnyType) {
        OwnedTensor input = randomTensor(dtype, shape, 43);
        OwnedTensor expected = runKernel("trilu", {input}, {{dtype, shape}},
                                         attrs({{"k", k}, {"upper", int64_t{upper}}}))[0];
        OwnedTensor actual(dtype, shape);
        visitBits(dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          TriluBody<T, uint32_t> body{input.as<T>(), actual.as<T>(), 5, 7, k, upper};
          runOnHost(input.numElements(), body);
        });
        EXPECT_EQ(actual.bytes, expected.bytes)
            << describe("trilu", dtype) << " k " << k << " upper " << upper;
      }
}

TEST(CudaElementwiseMath, CastMatchesTheCpuKernel) {
  for (DType from : kAnyType)
    for (DType to : kAnyType) {
      if (from == to) // a copy, not a body
        continue;
      OwnedTensor input = randomTensor(from, kUnaryShape, 47, 1e3);
      OwnedTensor expected = runKernel("cast", {input}, {{to, kUnaryShape}})[0];
      OwnedTensor actual(to, kUnaryShape);
      visitAny(from, [&](auto fromTag) {
        visitAny(to, [&](auto toTag) {
          using From = typename decltype(fromTag)::type;
          using To = typename decltype(toTag)::type;
          runOnHost(input.numElements(), CastBody<From, To>{input.as<From>(), actual.as<To>()});
        });
      });
      EXPECT_EQ(actual.bytes, expected.bytes)
          << "cast from " << dtypeName(from) << " to " << dtypeName(to);
    }
}

TEST(CudaElementwiseMath, RefreshCopyMatchesTheCpuKernel) {
  for (double refresh : {0.0, 1.0})
    for (DType from : kFloatTypes)
      for (DType to : kFloatTypes) {
        OwnedTensor flag = testing::f32({}, {refresh});
        OwnedTensor source = randomTensor(from, kUnaryShape, 53);
        OwnedTensor copy = randomTensor(to, kUnaryShape, 59);
        OwnedTensor expected =
            runKernel("refresh_copy", {flag, source, copy}, {{to, kUnaryShape}})[0];
        OwnedTensor actual(to, kUnaryShape), inPlace = copy;
        visitFloat(from, [&](auto fromTag) {
          visitFloat(to, [&](auto toTag) {
            using From = typename decltype(fromTag)::type;
            using To = typename decltype(toTag)::type;
            using Body = RefreshCopyBody<From, To>;
            runOnHost(copy.numElements(),
                      Body{flag.as<float>(), source.as<From>(), copy.as<To>(), actual.as<To>()});
            runOnHost(copy.numElements(), Body{flag.as<float>(), source.as<From>(),
                                               inPlace.as<To>(), inPlace.as<To>()});
          });
        });
        std::string what = "refresh_copy " + std::to_string(refresh) + " from " + dtypeName(from) +
                           " to " + dtypeName(to);
        EXPECT_EQ(actual.bytes, expected.bytes) << what;
        EXPECT_EQ(inPlace.bytes, expected.bytes) << what << " in place";
      }
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

/// Operand k's element for output element `index`, the numpy way: unravel, then ravel with the
/// operand's broadcast dimensions at 0.
int64_t naiveOffset(const Shape &output, const Shape &operand, int64_t index) {
  Shape position(output.size());
  for (size_t d = output.size(); d-- > 0;) {
    position[d] = index % output[d];
    index /= output[d];
  }
  int64_t offset = 0;
  size_t lead = output.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d)
    offset = offset * operand[d] + (operand[d] == 1 ? 0 : position[lead + d]);
  return offset;
}

Shape broadcastOf(const std::vector<Shape> &shapes) {
  Shape result;
  std::string error;
  EXPECT_TRUE(broadcastShapes(shapes, result, error)) << error;
  return result;
}

template <typename Index, int N>
void expectNaiveOffsets(const BroadcastIndex<N> &index, const Shape &output,
                        const std::array<const Shape *, N> &operands) {
  int64_t count = 1;
  for (int64_t size : output)
    count *= size;
  for (int64_t i = 0; i < count; ++i) {
    Index offsets[N];
    index.offsets(static_cast<Index>(i), offsets);
    for (int k = 0; k < N; ++k)
      ASSERT_EQ(static_cast<int64_t>(offsets[k]), naiveOffset(output, *operands[k], i))
          << "operand " << k << " of output element " << i << " of " << formatShape(output);
  }
}

TEST(CudaElementwiseMath, MergingLeavesTheDimensionsTheIndexNeeds) {
  Shape same = {2, 3, 4}, row = {4}, column = {3, 1}, scalar = {};
  auto merged = mergeBroadcast<2>(same, {&same, &same});
  EXPECT_EQ(merged.dims, (Shape{24}));
  EXPECT_EQ(merged.strides[1], (Shape{1}));
  merged = mergeBroadcast<2>(same, {&same, &scalar});
  EXPECT_EQ(merged.dims, (Shape{24}));
  EXPECT_EQ(merged.strides[1], (Shape{0}));
  merged = mergeBroadcast<2>(same, {&same, &row});
  EXPECT_EQ(merged.dims, (Shape{6, 4}));
  EXPECT_EQ(merged.strides[0], (Shape{4, 1}));
  EXPECT_EQ(merged.strides[1], (Shape{0, 1}));
  merged = mergeBroadcast<2>(same, {&same, &column});
  EXPECT_EQ(merged.dims, (Shape{2, 3, 4}));
  EXPECT_EQ(merged.strides[1], (Shape{0, 1, 0}));
  Shape ones = {1, 1};
  merged = mergeBroadcast<2>(ones, {&ones, &scalar});
  EXPECT_EQ(merged.dims, (Shape{1}));
}

TEST(CudaElementwiseMath, BroadcastIndexFindsTheNumpyElements) {
  std::mt19937 random(61);
  std::uniform_int_distribution<int> rankOf(0, 8), sizeOf(1, 3), coin(0, 2);
  for (int trial = 0; trial < 300; ++trial) {
    Shape output(rankOf(random));
    for (int64_t &size : output)
      size = sizeOf(random);
    // Each operand keeps a suffix of the output's dimensions, some of them 1.
    std::array<Shape, 3> operands;
    for (Shape &operand : operands) {
      size_t rank = std::uniform_int_distribution<size_t>(0, output.size())(random);
      operand.assign(output.end() - rank, output.end());
      for (int64_t &size : operand)
        if (coin(random) == 0)
          size = 1;
    }
    std::array<const Shape *, 3> shapes = {&operands[0], &operands[1], &operands[2]};
    BroadcastIndex<3> index;
    ASSERT_TRUE(toBroadcastIndex(mergeBroadcast<3>(output, shapes), index));
    expectNaiveOffsets<uint32_t, 3>(index, output, shapes);
    expectNaiveOffsets<uint64_t, 3>(index, output, shapes);
  }
}

TEST(CudaElementwiseMath, TheTargetRefusesShapesTheIndexCannotWalk) {
  const TargetOp &add = cudaTarget().ops().at("add");
  const TargetOp &where = cudaTarget().ops().at("where");
  ASSERT_TRUE(add.limits && where.limits);
  auto verdict = [](const TargetOp &op, std::vector<Shape> inputs) {
    KernelCall call;
    for (const Shape &shape : inputs) // the limits look at shapes only
      call.inputs.push_back(TensorView{nullptr, DType::F32, shape});
    call.outputs.push_back(TensorView{nullptr, DType::F32, broadcastOf(inputs)});
    std::string error;
    return op.limits(call, error) ? std::string() : error;
  };
  // Nine alternating broadcast dimensions cannot merge; nine same-shape ones merge into one.
  Shape alternating = {2, 1, 2, 1, 2, 1, 2, 1, 2}, other = {1, 2, 1, 2, 1, 2, 1, 2, 1};
  Shape tall = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
  std::string error = verdict(add, {alternating, other});
  EXPECT_NE(error.find("add on CUDA broadcasts at most 8 dimensions"), std::string::npos) << error;
  EXPECT_EQ(verdict(add, {tall, tall}), "");
  EXPECT_NE(verdict(where, {alternating, other, alternating}).find("where"), std::string::npos);
  EXPECT_EQ(verdict(where, {tall, {2}, {}}), "");
  BroadcastIndex<2> index;
  EXPECT_FALSE(toBroadcastIndex(
      mergeBroadcast<2>(broadcastOf({alternating, other}), {&alternating, &other}), index));
}

const std::vector<std::pair<Shape, Shape>> kBroadcastPairs = {{{2, 3, 4}, {2, 3, 4}},
                                                              {{2, 3, 4}, {4}},
                                                              {{2, 3, 4}, {3, 1}},
                                                              {{2, 1, 4}, {1, 3, 1}},
                                                              {{}, {5}},
                                                              {{7}, {}},
                                                              {{1}, {2, 3}},
                                                              {{3, 1, 5, 1, 2}, {1, 4, 1, 3, 1}},
                                                              {{2, 0, 3}, {3}},
                                                              {{1, 1, 1}, {1, 1}}};

/// The CPU kernel of the broadcasting op against BroadcastBody over every pair of shapes, with
/// both index types.
template <typename Op, TypeClass Class> void expectBroadcastMatches(bool comparison, bool exact) {
  for (DType dtype : typesOf(Class))
    for (const auto &[lhsShape, rhsShape] : kBroadcastPairs) {
      Shape outputShape = broadcastOf({lhsShape, rhsShape});
      DType outputType = comparison ? DType::Bool : dtype;
      OwnedTensor lhs = randomTensor(dtype, lhsShape, 67), rhs = randomTensor(dtype, rhsShape, 71);
      OwnedTensor expected = runKernel(Op::name, {lhs, rhs}, {{outputType, outputShape}})[0];
      BroadcastIndex<2> index;
      ASSERT_TRUE(toBroadcastIndex(mergeBroadcast<2>(outputShape, {&lhsShape, &rhsShape}), index));
      visitClass<Class>(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto check = [&](auto indexTag, auto outputTag) {
          using Index = typename decltype(indexTag)::type;
          using Out = typename decltype(outputTag)::type;
          OwnedTensor actual(outputType, outputShape);
          BroadcastBody<T, Out, Op, Index> body{lhs.as<T>(), rhs.as<T>(), actual.as<Out>(), index,
                                                Op()};
          runOnHost(actual.numElements(), body);
          expectSame(actual, expected, exact ? kExact : ulps(dtype),
                     describe(Op::name, dtype) + " of " + formatShape(lhsShape) + " and " +
                         formatShape(rhsShape));
        };
        if (comparison) {
          check(TypeTag<uint32_t>{}, TypeTag<BoolByte>{});
          check(TypeTag<uint64_t>{}, TypeTag<BoolByte>{});
        } else {
          check(TypeTag<uint32_t>{}, TypeTag<T>{});
          check(TypeTag<uint64_t>{}, TypeTag<T>{});
        }
      });
    }
}

TEST(CudaElementwiseMath, ArithmeticMatchesTheCpuKernels) {
  expectBroadcastMatches<Add, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<Sub, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<Mul, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<Div, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<Pow, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<Max, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<Min, TypeClass::Numeric>(false, true);
  expectBroadcastMatches<PRelu, TypeClass::Numeric>(false, true);
}

TEST(CudaElementwiseMath, PowOfTwoIsTheSquare) {
  for (DType dtype : kFloatTypes) {
    OwnedTensor base = randomTensor(dtype, kUnaryShape, 73), two = testing::tensor(dtype, {}, {2});
    OwnedTensor expected = runKernel("pow", {base, two}, {{dtype, kUnaryShape}})[0];
    OwnedTensor actual(dtype, kUnaryShape);
    BroadcastIndex<2> index;
    Shape scalar;
    ASSERT_TRUE(toBroadcastIndex(mergeBroadcast<2>(kUnaryShape, {&kUnaryShape, &scalar}), index));
    visitFloat(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      runOnHost(base.numElements(), BroadcastBody<T, T, Pow, uint32_t>{
                                        base.as<T>(), two.as<T>(), actual.as<T>(), index, Pow()});
    });
    EXPECT_EQ(actual.bytes, expected.bytes) << describe("pow", dtype);
  }
}

TEST(CudaElementwiseMath, ComparisonsMatchTheCpuKernels) {
  expectBroadcastMatches<Equal, TypeClass::Any>(true, true);
  expectBroadcastMatches<Less, TypeClass::Any>(true, true);
  expectBroadcastMatches<Greater, TypeClass::Any>(true, true);
  expectBroadcastMatches<GreaterEqual, TypeClass::Any>(true, true);
  expectBroadcastMatches<LessEqual, TypeClass::Any>(true, true);
}

TEST(CudaElementwiseMath, WhereMatchesTheCpuKernel) {
  const std::vector<std::array<Shape, 3>> triples = {
      {Shape{2, 3, 4}, Shape{2, 3, 4}, Shape{2, 3, 4}},
      {Shape{3, 1}, Shape{1, 4}, Shape{}},
      {Shape{2, 1, 4}, Shape{4}, Shape{2, 3, 1}},
      {Shape{5}, Shape{}, Shape{}}};
  for (const auto &shapes : triples)
    for (DType dtype : kAnyType) {
      Shape outputShape = broadcastOf({shapes[0], shapes[1], shapes[2]});
      OwnedTensor condition = randomTensor(DType::Bool, shapes[0], 79);
      OwnedTensor onTrue = randomTensor(dtype, shapes[1], 83);
      OwnedTensor onFalse = randomTensor(dtype, shapes[2], 89);
      OwnedTensor expected =
          runKernel("where", {condition, onTrue, onFalse}, {{dtype, outputShape}})[0];
      OwnedTensor actual(dtype, outputShape);
      BroadcastIndex<3> index;
      ASSERT_TRUE(toBroadcastIndex(
          mergeBroadcast<3>(outputShape, {&shapes[0], &shapes[1], &shapes[2]}), index));
      visitBits(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        SelectBody<T, uint32_t> body{condition.as<BoolByte>(), onTrue.as<T>(), onFalse.as<T>(),
                                     actual.as<T>(), index};
        runOnHost(actual.numElements(), body);
      });
      EXPECT_EQ(actual.bytes, expected.bytes) << describe("where", dtype);
    }
}

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

TEST(CudaElementwiseMath, GradientBatchesCoverEveryElementOnce) {
  std::mt19937 random(97);
  std::uniform_int_distribution<int64_t> size(0, 3 * kGradientTile);
  std::vector<OwnedTensor> storage;
  std::vector<TensorView> gradients;
  for (int g = 0; g < 150; ++g) {
    storage.emplace_back(DType::F32, Shape{g % 7 == 0 ? 0 : size(random)});
    gradients.push_back(TensorView{nullptr, DType::F32, storage.back().shape});
  }
  for (size_t first = 0; first < gradients.size(); first += kGradientsPerBatch) {
    GradientBatch batch = gradientBatch(gradients, first);
    ASSERT_EQ(batch.size, std::min<int>(kGradientsPerBatch, gradients.size() - first));
    std::vector<std::vector<int>> seen(batch.size);
    for (int g = 0; g < batch.size; ++g)
      seen[g].assign(batch.count[g], 0);
    for (int64_t tile = 0; tile < batch.tiles(); ++tile) {
      int64_t begin, end;
      int g = batch.tileRange(tile, begin, end);
      ASSERT_TRUE(g >= 0 && g < batch.size);
      ASSERT_TRUE(0 <= begin && begin < end && end <= batch.count[g]) << "tile " << tile;
      for (int64_t i = begin; i < end; ++i)
        ++seen[g][i];
    }
    for (int g = 0; g < batch.size; ++g)
      for (int count : seen[g])
        ASSERT_EQ(count, 1) << "gradient " << first + g;
  }
}

TEST(CudaElementwiseMath, NonFiniteCheckMatchesTheCpuKernel) {
  for (float poison : {1.0f, INFINITY, -INFINITY, NAN})
    for (DType dtype : kFloatTypes) {
      std::vector<OwnedTensor> gradients = {
          testing::randomF32({300}, 101),
          testing::tensor(dtype, {5, 40}, std::vector<double>(200, 0.25)),
          testing::tensor(DType::BF16, {0}, {})};
      visitFloat(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        gradients[1].as<T>()[123] = Element<T>::store(poison);
      });
      OwnedTensor expected = runKernel("non_finite_check", gradients, {{DType::F32, {}}})[0];
      float found = 0.0f;
      for (const OwnedTensor &gradient : gradients)
        visitFloat(gradient.dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          runOnHost(gradient.numElements(), NonFiniteBody<T>{gradient.as<T>(), &found});
        });
      EXPECT_EQ(found, expected.at(0)) << "poison " << poison << " in " << dtypeName(dtype);
    }
}

TEST(CudaElementwiseMath, LossScaleUpdateMatchesTheCpuKernel) {
  for (int64_t window : {int64_t{1}, int64_t{5}, int64_t{2000}})
    for (double growth : {0.0, static_cast<double>(window) - 2, static_cast<double>(window) - 1})
      for (bool foundInf : {false, true})
        for (bool dynamic : {false, true}) {
          if (growth < 0)
            continue;
          std::vector<OwnedTensor> inputs = {testing::f32({}, {15}), testing::f32({}, {growth}),
                                             testing::f32({}, {3}),
                                             testing::f32({}, {foundInf ? 1.0 : 0.0})};
          std::vector<OwnedTensor> expected = runKernel(
              "loss_scale_update", inputs, {{DType::F32, {}}, {DType::F32, {}}, {DType::F32, {}}},
              attrs({{"window", window}, {"dynamic", int64_t{dynamic}}}));
          LossScaleState state = updatedLossScale({15.0f, static_cast<float>(growth), 3.0f},
                                                  foundInf, static_cast<float>(window), dynamic);
          std::string what = "window " + std::to_string(window) + " growth " +
                             std::to_string(growth) + " found_inf " + std::to_string(foundInf) +
                             " dynamic " + std::to_string(dynamic);
          EXPECT_EQ(state.exponent, expected[0].at(0)) << what;
          EXPECT_EQ(state.growth, expected[1].at(0)) << what;
          EXPECT_EQ(state.skipped, expected[2].at(0)) << what;
        }
}

} // namespace
} // namespace memc::kernels::cuda
