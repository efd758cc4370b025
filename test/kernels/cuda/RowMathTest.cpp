//===- RowMathTest.cpp - the CUDA row kernels' arithmetic ----------------===//
//
// Runs the arithmetic of the CUDA row kernels (kernels/cuda/RowMath.h, ReductionMath.h) on the
// CPU: the serial row functions one row (or column) at a time, and the sums across rows the
// way the kernels cut them (RowWorkspace.h's chunks and splits, combined in order), over random
// inputs, and compares with the CPU kernels of the same ops. The normalizations take the CPU's
// own steps (f64 statistics and sums, x - mean in f64, the same roundings to f32), in another
// order of f64 additions and with or without an FMA where the CPU's vector clone has one: their
// f32 results agree to 2.5e-7 relative plus 2.5e-7 of the tensor's largest magnitude, about two
// f32 units in the last place (one is seen), rows whose mean is 1e4 times their deviation
// included. softmax and cross_entropy use expf where the CPU has its own exp: 2e-5 relative
// plus 2e-6 of the largest magnitude. bf16 results, rounded once from those f32 values, agree to
// one unit in their last place (1/128 relative, plus 1e-3 of the largest magnitude).
// Reductions and scans accumulate as the CPU does (f64, i64): integers agree exactly.
// What only a GPU runs (shuffles, block reductions and their order, launches) is not covered.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/RowMath.h"
#include "KernelTestSupport.h"
#include "kernels/ElementVisitors.h"
#include "kernels/KernelTargets.h"
#include "kernels/ShapeRules.h"
#include "kernels/cuda/CudaTarget.h"
#include "kernels/cuda/ReductionMath.h"
#include "kernels/cuda/RowWorkspace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace memc::kernels::cuda::rows {
namespace {

using testing::attrs;
using testing::closeTo;
using testing::makeCall;
using testing::OwnedTensor;
using testing::runKernel;

constexpr float kEpsilon = 1e-5f;
const DType kFloatDTypes[] = {DType::F32, DType::BF16};

/// Normal values (integers: uniform in [-3, 3]) rounded to the dtype.
OwnedTensor randomTensor(DType dtype, const Shape &shape, uint32_t seed, double mean = 0.0,
                         double deviation = 1.0) {
  std::mt19937 random(seed);
  std::normal_distribution<double> normal(mean, deviation);
  std::uniform_int_distribution<int> integer(-3, 3);
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<double> values(count);
  bool integral = dtype == DType::I32 || dtype == DType::I64;
  for (double &value : values)
    value = integral ? integer(random) : normal(random);
  return testing::tensor(dtype, shape, values);
}

FloatVector floatVector(const OwnedTensor &t) { return FloatVector{t.bytes.data(), t.dtype}; }

MutableFloatVector mutableFloatVector(OwnedTensor &t) {
  return MutableFloatVector{t.bytes.data(), t.dtype};
}

/// How closely an op's f32 results follow the CPU kernel's (the file comment's figures).
enum class Agreement {
  /// softmax, log_softmax, their gradients, cross_entropy: f32 arithmetic of their own (expf
  /// where the CPU has VectorMath's exp).
  Summed,
  /// The normalizations: the CPU's own steps, the f64 sums in another order.
  Normalized,
};

/// The CUDA arithmetic's agreement with the CPU kernel, by dtype.
::testing::AssertionResult agrees(const OwnedTensor &actual, const OwnedTensor &expected,
                                  Agreement agreement = Agreement::Summed) {
  double largest = 0.0;
  for (double value : expected.values())
    if (std::isfinite(value))
      largest = std::max(largest, std::abs(value));
  switch (expected.dtype) {
  case DType::F32:
    if (agreement == Agreement::Normalized)
      return closeTo(actual.values(), expected.values(), 2.5e-7, 2.5e-7 * largest);
    return closeTo(actual.values(), expected.values(), 2e-5, 2e-6 * largest);
  case DType::BF16:
    return closeTo(actual.values(), expected.values(), 1.0 / 128, 1e-3 * largest);
  case DType::F16:
    return closeTo(actual.values(), expected.values(), 1.0 / 1024, 1e-4 * largest);
  default:
    return closeTo(actual.values(), expected.values(), 0.0, 0.0);
  }
}

std::string describe(DType dtype, const Shape &shape) {
  return std::string(dtypeName(dtype)) + formatShape(shape);
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax and their gradients
//===----------------------------------------------------------------------===//

template <bool Log> void checkSoftmax(DType dtype, const Shape &shape, int64_t axis) {
  OwnedTensor x = randomTensor(dtype, shape, 7, 0.0, 3.0);
  std::vector<OwnedTensor> expected =
      runKernel(Log ? "log_softmax" : "softmax", {x}, {{dtype, shape}}, attrs({{"axis", axis}}));
  OwnedTensor actual(dtype, shape);
  AxisExtents e = extentsAroundAxis(shape, axis);
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t column = 0; column < e.outer * e.inner; ++column) {
      int64_t base = (column / e.inner) * e.length * e.inner + column % e.inner;
      softmaxRow<Log>(RowOf<const T>{x.as<T>() + base, e.inner},
                      RowOf<T>{actual.as<T>() + base, e.inner}, e.length);
    }
  });
  EXPECT_TRUE(agrees(actual, expected[0]))
      << (Log ? "log_softmax " : "softmax ") << describe(dtype, shape) << " axis " << axis;
}

TEST(RowMathSoftmax, RowsAndInterleavedRowsMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes) {
    checkSoftmax<false>(dtype, {6, 37}, 1);
    checkSoftmax<false>(dtype, {3, 20, 5}, 1);
    checkSoftmax<true>(dtype, {6, 37}, 1);
    checkSoftmax<true>(dtype, {3, 20, 5}, 0);
  }
}

template <bool Log> void checkSoftmaxGrad(DType dtype, const Shape &shape, int64_t axis) {
  OwnedTensor dy = randomTensor(dtype, shape, 3);
  OwnedTensor y = randomTensor(dtype, shape, 4, Log ? -2.0 : 0.1, Log ? 1.0 : 0.05);
  std::vector<OwnedTensor> expected = runKernel(Log ? "log_softmax_grad" : "softmax_grad", {dy, y},
                                                {{dtype, shape}}, attrs({{"axis", axis}}));
  OwnedTensor actual(dtype, shape);
  AxisExtents e = extentsAroundAxis(shape, axis);
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t column = 0; column < e.outer * e.inner; ++column) {
      int64_t base = (column / e.inner) * e.length * e.inner + column % e.inner;
      softmaxGradRow<Log>(RowOf<const T>{dy.as<T>() + base, e.inner},
                          RowOf<const T>{y.as<T>() + base, e.inner},
                          RowOf<T>{actual.as<T>() + base, e.inner}, e.length);
    }
  });
  EXPECT_TRUE(agrees(actual, expected[0])) << (Log ? "log_softmax_grad " : "softmax_grad ")
                                           << describe(dtype, shape) << " axis " << axis;
}

TEST(RowMathSoftmax, GradientsMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes) {
    checkSoftmaxGrad<false>(dtype, {5, 41}, 1);
    checkSoftmaxGrad<false>(dtype, {4, 9, 3}, 1);
    checkSoftmaxGrad<true>(dtype, {5, 41}, 1);
    checkSoftmaxGrad<true>(dtype, {4, 9, 3}, 1);
  }
}

//===----------------------------------------------------------------------===//
// layer_norm, add_layer_norm, rms_norm
//===----------------------------------------------------------------------===//

/// The normal distribution of a test's input rows (or channels).
struct Spread {
  double mean, deviation;
};

/// Rows a few deviations away from zero.
constexpr Spread kModestMean = {10.0, 2.0};

/// |mean| / deviation of about 1e3 and 1e4, where an f32 mean or f32 sums lose ~1e-4 of x^.
/// bf16 rounds each value to 8 significant bits, which caps the ratio of non-constant rows near
/// 1e3 (rows of 1e4 +- 8 round to a few neighbouring values).
std::vector<Spread> largeMeans(DType dtype) {
  if (dtype == DType::BF16)
    return {{1e3, 1.0}, {1e4, 8.0}};
  return {{1e3, 1.0}, {1e4, 1.0}};
}

/// The smallest |mean| / deviation over `groups` groups of `size` stored values, group g's
/// element m at offset(g, m).
template <typename Offset>
double smallestMeanToDeviation(const OwnedTensor &x, int64_t groups, int64_t size, Offset offset) {
  std::vector<double> values = x.values();
  double smallest = std::numeric_limits<double>::infinity();
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0.0, squares = 0.0;
    for (int64_t m = 0; m < size; ++m)
      mean += values[offset(g, m)];
    mean /= size;
    for (int64_t m = 0; m < size; ++m)
      squares += (values[offset(g, m)] - mean) * (values[offset(g, m)] - mean);
    smallest = std::min(smallest, std::abs(mean) / std::sqrt(squares / size));
  }
  return smallest;
}

/// The same over rows of `width` contiguous values.
double smallestRowMeanToDeviation(const OwnedTensor &x, int64_t width) {
  return smallestMeanToDeviation(x, x.numElements() / width, width,
                                 [width](int64_t row, int64_t j) { return row * width + j; });
}

std::string describe(Spread spread) {
  std::ostringstream text;
  text << " mean " << spread.mean << " deviation " << spread.deviation;
  return text.str();
}

Shape trailing(const Shape &shape) { return Shape(shape.begin() + 1, shape.end()); }

/// layer_norm (`Centered`, bias optional) or rms_norm over all dimensions but the first.
template <bool Centered>
void checkRowNorm(DType dtype, DType paramType, bool withBias, const Shape &shape, Spread spread) {
  Shape normalized = trailing(shape);
  int64_t rows = shape[0], width = extent(shape, 1, shape.size());
  OwnedTensor x = randomTensor(dtype, shape, 1, spread.mean, spread.deviation);
  OwnedTensor scale = randomTensor(paramType, normalized, 2, 1.0, 0.5);
  OwnedTensor bias = randomTensor(paramType, normalized, 3);
  std::vector<OwnedTensor> inputs = {x, scale};
  if (withBias)
    inputs.push_back(bias);
  std::vector<OwnedTensor> expected =
      runKernel(Centered ? "layer_norm" : "rms_norm", inputs, {{dtype, shape}},
                attrs({{"axis", int64_t{1}}, {"epsilon", double{kEpsilon}}}));
  OwnedTensor actual(dtype, shape);
  FloatVector biasVector = withBias ? floatVector(bias) : FloatVector{nullptr, DType::F32};
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t row = 0; row < rows; ++row)
      normalizeRow<Centered>(RowOf<const T>{x.as<T>() + row * width, 1}, floatVector(scale),
                             biasVector, RowOf<T>{actual.as<T>() + row * width, 1}, width,
                             kEpsilon);
  });
  EXPECT_TRUE(agrees(actual, expected[0], Agreement::Normalized))
      << (Centered ? "layer_norm " : "rms_norm ") << describe(dtype, shape) << describe(spread)
      << " parameters " << dtypeName(paramType) << (withBias ? " with bias" : "");
}

TEST(RowMathRowNorm, LayerNormAndRmsNormMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes)
    for (DType paramType : kFloatDTypes) {
      checkRowNorm<true>(dtype, paramType, true, {5, 4, 24}, kModestMean);
      checkRowNorm<true>(dtype, paramType, false, {5, 4, 24}, kModestMean);
      checkRowNorm<false>(dtype, paramType, false, {5, 4, 24}, kModestMean);
    }
}

void checkAddLayerNorm(DType dtype, const Shape &shape, Spread spread) {
  int64_t rows = shape[0], width = shape[1];
  OwnedTensor lhs = randomTensor(dtype, shape, 5, spread.mean, spread.deviation);
  OwnedTensor rhs = randomTensor(dtype, shape, 6, 0.0, spread.deviation);
  OwnedTensor scale = randomTensor(DType::F32, {width}, 7, 1.0, 0.3);
  OwnedTensor bias = randomTensor(DType::F32, {width}, 8);
  std::vector<OwnedTensor> expected =
      runKernel("add_layer_norm", {lhs, rhs, scale, bias}, {{dtype, shape}, {dtype, shape}},
                attrs({{"axis", int64_t{1}}, {"epsilon", double{kEpsilon}}}));
  OwnedTensor sum(dtype, shape), actual(dtype, shape);
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < sum.numElements(); ++i)
      sum.as<T>()[i] = residualSum(lhs.as<T>()[i], rhs.as<T>()[i]);
    for (int64_t row = 0; row < rows; ++row)
      normalizeRow<true>(RowOf<const T>{sum.as<T>() + row * width, 1}, floatVector(scale),
                         floatVector(bias), RowOf<T>{actual.as<T>() + row * width, 1}, width,
                         kEpsilon);
  });
  std::string what = "add_layer_norm " + describe(dtype, shape) + describe(spread);
  EXPECT_TRUE(agrees(sum, expected[0], Agreement::Normalized)) << what << ": sum";
  EXPECT_TRUE(agrees(actual, expected[1], Agreement::Normalized)) << what;
}

TEST(RowMathRowNorm, AddLayerNormNormalizesTheRoundedSum) {
  for (DType dtype : kFloatDTypes)
    checkAddLayerNorm(dtype, {6, 50}, {4.0, 1.0});
}

TEST(RowMathRowNorm, RowsWithALargeMeanNextToTheirSpreadMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes)
    for (Spread spread : largeMeans(dtype)) {
      Shape shape{6, 1000};
      EXPECT_GT(smallestRowMeanToDeviation(
                    randomTensor(dtype, shape, 1, spread.mean, spread.deviation), 1000),
                500.0);
      checkRowNorm<true>(dtype, DType::F32, true, shape, spread);
      checkRowNorm<true>(dtype, DType::BF16, false, shape, spread);
      checkRowNorm<false>(dtype, DType::F32, false, shape, spread);
      checkAddLayerNorm(dtype, shape, spread);
    }
}

//===----------------------------------------------------------------------===//
// layer_norm_grad, rms_norm_grad
//===----------------------------------------------------------------------===//

/// dx row by row; the parameter gradients as the kernels sum them: per chunk of rows in f64
/// (RowChunks), then the chunks in order.
template <bool Centered>
void checkRowNormGrad(DType dtype, DType paramType, const Shape &shape, Spread spread) {
  Shape normalized = trailing(shape);
  OwnedTensor dy = randomTensor(dtype, shape, 11);
  OwnedTensor x = randomTensor(dtype, shape, 12, spread.mean, spread.deviation);
  OwnedTensor scale = randomTensor(paramType, normalized, 13, 1.0, 0.5);
  std::vector<std::pair<DType, Shape>> outputTypes = {{dtype, shape}, {paramType, normalized}};
  if (Centered)
    outputTypes.push_back({paramType, normalized});
  Attributes attributes = attrs({{"axis", int64_t{1}}, {"epsilon", double{kEpsilon}}});
  std::vector<OwnedTensor> expected = runKernel(Centered ? "layer_norm_grad" : "rms_norm_grad",
                                                {dy, x, scale}, outputTypes, attributes);
  std::vector<OwnedTensor> inputs = {dy, x, scale};
  RowChunks split(makeCall(inputs, expected, attributes));
  EXPECT_GT(split.chunks, 1);
  EXPECT_GT(split.rowsPerChunk, 1);
  int64_t width = split.width;
  OwnedTensor dx(dtype, shape), scaleGrad(paramType, normalized), biasGrad(paramType, normalized);
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<double> scaleTotals(width, 0.0), biasTotals(width, 0.0);
    for (int64_t chunk = 0; chunk < split.chunks; ++chunk) {
      std::vector<double> scaleSums(width, 0.0), biasSums(width, 0.0);
      int64_t end = std::min(split.rows, (chunk + 1) * split.rowsPerChunk);
      for (int64_t row = chunk * split.rowsPerChunk; row < end; ++row) {
        RowOf<const T> grad{dy.as<T>() + row * width, 1}, in{x.as<T>() + row * width, 1};
        RowStatistics statistics = rowStatistics<Centered>(in, width, kEpsilon);
        for (int64_t j = 0; j < width; ++j) {
          scaleSums[j] += scaleGradTerm(grad.load(j), in.load(j), statistics);
          biasSums[j] += grad.load(j);
        }
        normGradRow<Centered>(grad, in, floatVector(scale), RowOf<T>{dx.as<T>() + row * width, 1},
                              width, kEpsilon);
      }
      for (int64_t j = 0; j < width; ++j) {
        scaleTotals[j] += scaleSums[j];
        biasTotals[j] += biasSums[j];
      }
    }
    for (int64_t j = 0; j < width; ++j) {
      mutableFloatVector(scaleGrad).store(j, static_cast<float>(scaleTotals[j]));
      mutableFloatVector(biasGrad).store(j, static_cast<float>(biasTotals[j]));
    }
  });
  std::string what = std::string(Centered ? "layer_norm_grad " : "rms_norm_grad ") +
                     describe(dtype, shape) + describe(spread) + " parameters " +
                     dtypeName(paramType);
  EXPECT_TRUE(agrees(dx, expected[0], Agreement::Normalized)) << what << ": input_grad";
  EXPECT_TRUE(agrees(scaleGrad, expected[1], Agreement::Normalized)) << what << ": scale_grad";
  if (Centered) {
    EXPECT_TRUE(agrees(biasGrad, expected[2], Agreement::Normalized)) << what << ": bias_grad";
  }
}

TEST(RowMathRowNormGrad, LayerNormGradAndRmsNormGradMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes)
    for (DType paramType : kFloatDTypes) {
      checkRowNormGrad<true>(dtype, paramType, {100, 2, 12}, {3.0, 1.0});
      checkRowNormGrad<false>(dtype, paramType, {100, 2, 12}, {3.0, 1.0});
    }
}

TEST(RowMathRowNormGrad, RowsWithALargeMeanNextToTheirSpreadMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes)
    for (Spread spread : largeMeans(dtype)) {
      checkRowNormGrad<true>(dtype, DType::F32, {256, 1024}, spread);
      checkRowNormGrad<false>(dtype, DType::F32, {256, 1024}, spread);
    }
}

//===----------------------------------------------------------------------===//
// batch_norm, batch_norm_grad
//===----------------------------------------------------------------------===//

TEST(RowMathBatchNorm, MomentsCombineInAnyGroupingToTheTwoPassStatistics) {
  std::mt19937 random(21);
  std::normal_distribution<float> normal(100.0f, 0.5f);
  std::vector<float> values(5000);
  for (float &value : values)
    value = normal(random);
  double mean = 0.0, squares = 0.0;
  for (float value : values)
    mean += value;
  mean /= values.size();
  for (float value : values)
    squares += (value - mean) * (value - mean);
  double variance = squares / values.size();
  RowOf<const float> row{values.data(), 1};
  for (int64_t parts : {1, 2, 7, 64, 5000}) {
    Moments total = Moments::none();
    int64_t size = (5000 + parts - 1) / parts;
    // Later parts first: the order must not matter beyond rounding.
    for (int64_t part = parts; part-- > 0;)
      total = Moments::combine(channelMoments(row, std::min<int64_t>(part * size, 5000),
                                              std::min<int64_t>((part + 1) * size, 5000)),
                               total);
    EXPECT_EQ(total.count, 5000);
    EXPECT_NEAR(total.mean, mean, 1e-14 * mean) << parts << " parts";
    EXPECT_NEAR(total.variance(), variance, 1e-10 * variance) << parts << " parts";
  }
}

/// A channel's moments as the kernels combine them: its chunks (ChannelSplit) in order.
template <typename T>
Moments channelMomentsBySplit(const OwnedTensor &x, const ChannelSplit &split, int64_t channel) {
  ChannelOf<const T> values{x.as<T>(), split.channels, split.spatial, channel};
  Moments total = Moments::none();
  for (int64_t s = 0; s < split.splits; ++s)
    total = Moments::combine(total, channelMoments(values, split.chunkBegin(s), split.chunkEnd(s)));
  return total;
}

/// The smallest |mean| / deviation over the channels of an [N, C, spatial...] tensor.
double smallestChannelMeanToDeviation(const OwnedTensor &x) {
  ChannelSplit split(x.view());
  return smallestMeanToDeviation(x, split.channels, split.perChannel, [&](int64_t c, int64_t m) {
    return ChannelOf<const float>{nullptr, split.channels, split.spatial, c}.offset(m);
  });
}

void checkBatchNorm(DType dtype, const Shape &shape, bool training, Spread spread) {
  int64_t channels = shape[1];
  double variance = spread.deviation * spread.deviation;
  OwnedTensor x = randomTensor(dtype, shape, 31, spread.mean, spread.deviation);
  OwnedTensor scale = randomTensor(DType::F32, {channels}, 32, 1.0, 0.3);
  OwnedTensor bias = randomTensor(DType::F32, {channels}, 33);
  OwnedTensor mean = randomTensor(DType::BF16, {channels}, 34, spread.mean, spread.deviation);
  OwnedTensor var = randomTensor(DType::F32, {channels}, 35, variance, variance / 8);
  std::vector<OwnedTensor> expected = runKernel(
      "batch_norm", {x, scale, bias, mean, var}, {{dtype, shape}},
      attrs({{"epsilon", double{kEpsilon}}, {"momentum", 0.1}, {"training", int64_t{training}}}));
  ChannelSplit split(x.view());
  OwnedTensor actual(dtype, shape);
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t c = 0; c < channels; ++c) {
      double channelMean = floatVector(mean).load(c), channelVar = floatVector(var).load(c);
      if (training) {
        Moments batch = channelMomentsBySplit<T>(x, split, c);
        channelMean = batch.mean;
        channelVar = batch.variance();
      }
      BatchNormCoefficients coefficients = batchNormCoefficients(
          channelMean, channelVar, floatVector(scale).load(c), floatVector(bias).load(c), kEpsilon);
      ChannelOf<const T> in{x.as<T>(), channels, split.spatial, c};
      ChannelOf<T> out{actual.as<T>(), channels, split.spatial, c};
      for (int64_t m = 0; m < split.perChannel; ++m)
        out.store(m, batchNormOutput(in.load(m), coefficients));
    }
  });
  EXPECT_TRUE(agrees(actual, expected[0], Agreement::Normalized))
      << "batch_norm " << describe(dtype, shape) << (training ? " training" : " inference")
      << describe(spread);
}

TEST(RowMathBatchNorm, TrainingAndInferenceMatchTheCpuKernel) {
  EXPECT_GT(ChannelSplit(TensorView{nullptr, DType::F32, {4, 3, 2048}}).splits, 1);
  for (DType dtype : kFloatDTypes)
    for (bool training : {true, false}) {
      checkBatchNorm(dtype, {4, 3, 2048}, training, {5.0, 2.0});
      checkBatchNorm(dtype, {5, 6, 3, 3}, training, {5.0, 2.0});
      checkBatchNorm(dtype, {7, 4}, training, {5.0, 2.0});
    }
}

void checkBatchNormGrad(DType dtype, DType paramType, const Shape &shape, Spread spread) {
  int64_t channels = shape[1];
  OwnedTensor dy = randomTensor(dtype, shape, 41);
  OwnedTensor x = randomTensor(dtype, shape, 42, spread.mean, spread.deviation);
  OwnedTensor scale = randomTensor(paramType, {channels}, 43, 1.0, 0.3);
  std::vector<OwnedTensor> expected =
      runKernel("batch_norm_grad", {dy, x, scale},
                {{dtype, shape}, {paramType, {channels}}, {paramType, {channels}}},
                attrs({{"epsilon", double{kEpsilon}}}));
  ChannelSplit split(x.view());
  OwnedTensor dx(dtype, shape), scaleGrad(paramType, {channels}), biasGrad(paramType, {channels});
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t c = 0; c < channels; ++c) {
      Moments batch = channelMomentsBySplit<T>(x, split, c);
      ChannelOf<const T> grad{dy.as<T>(), channels, split.spatial, c};
      ChannelOf<const T> in{x.as<T>(), channels, split.spatial, c};
      BatchNormGradSums total = {0.0, 0.0};
      for (int64_t s = 0; s < split.splits; ++s) {
        BatchNormGradSums part = {0.0, 0.0};
        for (int64_t m = split.chunkBegin(s); m < split.chunkEnd(s); ++m)
          part = part + batchNormGradTerms(grad.load(m), in.load(m), batch.mean);
        total = total + part;
      }
      mutableFloatVector(scaleGrad).store(c, batchNormScaleGrad(batch, kEpsilon, total));
      mutableFloatVector(biasGrad).store(c, static_cast<float>(total.dy));
      BatchNormGradCoefficients coefficients =
          batchNormGradCoefficients(batch, kEpsilon, floatVector(scale).load(c), total);
      ChannelOf<T> out{dx.as<T>(), channels, split.spatial, c};
      for (int64_t m = 0; m < split.perChannel; ++m)
        out.store(m, batchNormGradInput(grad.load(m), in.load(m), coefficients));
    }
  });
  std::string what = "batch_norm_grad " + describe(dtype, shape) + describe(spread) +
                     " parameters " + dtypeName(paramType);
  EXPECT_TRUE(agrees(dx, expected[0], Agreement::Normalized)) << what << ": input_grad";
  EXPECT_TRUE(agrees(scaleGrad, expected[1], Agreement::Normalized)) << what << ": scale_grad";
  EXPECT_TRUE(agrees(biasGrad, expected[2], Agreement::Normalized)) << what << ": bias_grad";
}

TEST(RowMathBatchNorm, GradientMatchesTheCpuKernel) {
  for (DType dtype : kFloatDTypes) {
    checkBatchNormGrad(dtype, DType::BF16, {4, 3, 2048}, {5.0, 2.0});
    checkBatchNormGrad(dtype, DType::BF16, {5, 6, 3, 3}, {5.0, 2.0});
    checkBatchNormGrad(dtype, DType::BF16, {7, 4}, {5.0, 2.0});
  }
}

TEST(RowMathBatchNorm, ChannelsWithALargeMeanNextToTheirSpreadMatchTheCpuKernel) {
  for (DType dtype : kFloatDTypes)
    for (Spread spread : largeMeans(dtype)) {
      Shape shape{8, 3, 1024};
      EXPECT_GT(smallestChannelMeanToDeviation(
                    randomTensor(dtype, shape, 31, spread.mean, spread.deviation)),
                500.0);
      for (bool training : {true, false})
        checkBatchNorm(dtype, shape, training, spread);
      checkBatchNormGrad(dtype, DType::F32, shape, spread);
    }
}

TEST(RowMathBatchNorm, GradientOfAnEmptyBatchIsZero) {
  BatchNormGradSums none = {0.0, 0.0};
  EXPECT_EQ(batchNormScaleGrad(Moments::none(), kEpsilon, none), 0.0f);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Each output as the kernels compute it: the plan's chunks accumulated in order of r, then
/// combined in chunk order.
template <typename T, typename Reducer>
void reduceByPlan(const ReductionPlan &plan, const T *x, T *y) {
  for (int64_t output = 0; output < plan.outputs; ++output) {
    const T *base = x + plan.outputBase(output);
    typename Reducer::Acc total = Reducer::init();
    for (int64_t split = 0; split < plan.splits; ++split) {
      typename Reducer::Acc part = Reducer::init();
      for (int64_t r = plan.chunkBegin(split); r < plan.chunkEnd(split); ++r)
        part = Reducer::add(part, Element<T>::load(base[plan.reducedOffset(r)]));
      total = Reducer::combine(total, part);
    }
    y[output] = Reducer::finish(total, plan.count);
  }
}

template <template <typename> class Reducer>
void checkReduction(const char *op, const OwnedTensor &x, const std::vector<int64_t> &axes,
                    bool keepdims) {
  Attributes attributes = attrs({{"axes", axes}, {"keepdims", int64_t{keepdims}}});
  Shape outputShape;
  std::string error;
  ASSERT_TRUE(reduceShape(x.shape, axes, keepdims, outputShape, error)) << error;
  std::vector<OwnedTensor> expected = runKernel(op, {x}, {{x.dtype, outputShape}}, attributes);
  ReductionPlan plan;
  ASSERT_TRUE(planReduction(x.shape, axes, plan));
  OwnedTensor actual(x.dtype, outputShape);
  visitNumeric(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduceByPlan<T, Reducer<T>>(plan, x.as<T>(), actual.as<T>());
  });
  EXPECT_TRUE(closeTo(actual.values(), expected[0].values(), 1e-6, 0.0))
      << op << " " << describe(x.dtype, x.shape) << " axes " << formatShape(axes)
      << (keepdims ? " keepdims" : "") << ", " << plan.splits << " chunks";
}

struct ReductionCase {
  Shape shape;
  std::vector<int64_t> axes;
  bool keepdims;
};

const ReductionCase kReductionCases[] = {
    {{4, 5, 6}, {1}, true},        {{4, 5, 6}, {0, 2}, false},   {{4, 5, 6}, {0, 1}, false},
    {{4, 5, 6}, {0, 1, 2}, false}, {{6, 4, 3, 5}, {1, 3}, true}, {{3, 1, 7}, {1}, false},
    {{3, 7}, {}, false},           {{3, 0}, {1}, false},         {{2, 4096}, {1}, false},
    {{512, 8}, {0}, true},
};

TEST(RowMathReduction, EveryReducerMatchesTheCpuKernelOnEveryLayout) {
  for (const ReductionCase &c : kReductionCases)
    for (DType dtype : {DType::F32, DType::BF16, DType::I32, DType::I64}) {
      OwnedTensor x = randomTensor(dtype, c.shape, 51);
      checkReduction<SumReducer>("reduce_sum", x, c.axes, c.keepdims);
      checkReduction<MeanReducer>("reduce_mean", x, c.axes, c.keepdims);
      checkReduction<MaxReducer>("reduce_max", x, c.axes, c.keepdims);
      if (!isFloating(dtype))
        continue;
      checkReduction<L2Reducer>("reduce_l2", x, c.axes, c.keepdims);
      checkReduction<LogSumExpReducer>("reduce_log_sum_exp", x, c.axes, c.keepdims);
      OwnedTensor nearOne = randomTensor(dtype, c.shape, 52, 1.0, 0.01);
      checkReduction<ProdReducer>("reduce_prod", nearOne, c.axes, c.keepdims);
    }
  for (DType dtype : {DType::I32, DType::I64})
    for (const ReductionCase &c : kReductionCases)
      checkReduction<ProdReducer>("reduce_prod", randomTensor(dtype, c.shape, 53), c.axes,
                                  c.keepdims);
}

TEST(RowMathReduction, PlansCutLongRangesAndGiveShortOnesToThreads) {
  ReductionPlan plan;
  ASSERT_TRUE(planReduction({2, 4096}, {1}, plan));
  EXPECT_TRUE(plan.byWarps);
  EXPECT_GT(plan.splits, 1);
  ASSERT_TRUE(planReduction({512, 8}, {0}, plan));
  EXPECT_EQ(plan.width, 8);
  EXPECT_FALSE(plan.byWarps);
  EXPECT_GT(plan.splits, 1);
  // Ranges shorter than a warp are a thread's.
  ASSERT_TRUE(planReduction({4, 5, 6}, {0, 2}, plan));
  EXPECT_EQ(plan.width, 1);
  EXPECT_FALSE(plan.byWarps);
  ASSERT_TRUE(planReduction({4, 5, 6}, {1}, plan));
  EXPECT_EQ(plan.splits, 1);
}

TEST(RowMathReduction, NaNAndInfinitiesAsTheCpuKernel) {
  double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  OwnedTensor x =
      testing::f32({5, 3}, {1, nan, 3, -inf, -inf, -inf, inf, 2, 1, inf, -inf, 0, -1e30, 1e30, 5});
  checkReduction<MaxReducer>("reduce_max", x, {1}, false);
  checkReduction<SumReducer>("reduce_sum", x, {1}, false);
  checkReduction<LogSumExpReducer>("reduce_log_sum_exp", x, {1}, false);
  checkReduction<L2Reducer>("reduce_l2", x, {1}, false);
}

//===----------------------------------------------------------------------===//
// cumsum
//===----------------------------------------------------------------------===//

void checkCumSum(DType dtype, const Shape &shape, int64_t axis, bool exclusive, bool reverse) {
  OwnedTensor x = randomTensor(dtype, shape, 61);
  std::vector<OwnedTensor> expected = runKernel(
      "cumsum", {x}, {{dtype, shape}},
      attrs({{"axis", axis}, {"exclusive", int64_t{exclusive}}, {"reverse", int64_t{reverse}}}));
  OwnedTensor actual(dtype, shape);
  AxisExtents e = extentsAroundAxis(shape, axis);
  visitNumeric(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t column = 0; column < e.outer * e.inner; ++column) {
      int64_t base = (column / e.inner) * e.length * e.inner + column % e.inner;
      cumsumRow(x.as<T>() + base, actual.as<T>() + base, e.length, e.inner, exclusive, reverse);
    }
  });
  EXPECT_TRUE(closeTo(actual.values(), expected[0].values(), 0.0, 0.0))
      << "cumsum " << describe(dtype, shape) << " axis " << axis << (exclusive ? " exclusive" : "")
      << (reverse ? " reverse" : "");
}

TEST(RowMathScan, CumSumMatchesTheCpuKernel) {
  for (DType dtype : {DType::F32, DType::BF16, DType::I32, DType::I64})
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        checkCumSum(dtype, {5, 37}, 1, exclusive, reverse);
        checkCumSum(dtype, {3, 6, 4}, 1, exclusive, reverse);
        checkCumSum(dtype, {4, 3}, 0, exclusive, reverse);
      }
}

//===----------------------------------------------------------------------===//
// cross_entropy, cross_entropy_grad
//===----------------------------------------------------------------------===//

void checkCrossEntropy(DType dtype, DType labelType, const std::vector<double> &labelValues) {
  int64_t rows = static_cast<int64_t>(labelValues.size()), classes = 13;
  Shape shape{rows, classes};
  OwnedTensor logits = randomTensor(dtype, shape, 71, 0.0, 4.0);
  OwnedTensor labels = testing::tensor(labelType, {rows}, labelValues);
  OwnedTensor grad = testing::f32({}, {0.7});
  Attributes attributes = attrs({{"ignore_index", int64_t{-100}}});
  std::vector<OwnedTensor> loss =
      runKernel("cross_entropy", {logits, labels}, {{DType::F32, {}}}, attributes);
  std::vector<OwnedTensor> gradient =
      runKernel("cross_entropy_grad", {grad, logits, labels}, {{dtype, shape}}, attributes);
  OwnedTensor actualLoss(DType::F32, {}), actualGradient(dtype, shape);
  IndexVector targets{labels.bytes.data(), labelType == DType::I64};
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    double total = 0.0;
    int64_t counted = 0;
    for (int64_t row = 0; row < rows; ++row) {
      int64_t target = targetOf(targets.load(row), classes, -100);
      if (target >= 0) {
        total +=
            crossEntropyRowLoss(RowOf<const T>{logits.as<T>() + row * classes, 1}, classes, target);
        ++counted;
      }
    }
    *actualLoss.as<float>() = crossEntropyMean(total, counted);
    float scale = crossEntropyGradScale(*grad.as<float>(), counted);
    for (int64_t row = 0; row < rows; ++row) {
      int64_t target = targetOf(targets.load(row), classes, -100);
      RowOf<T> out{actualGradient.as<T>() + row * classes, 1};
      if (target < 0)
        for (int64_t j = 0; j < classes; ++j)
          out.store(j, 0.0f);
      else
        crossEntropyGradRow(RowOf<const T>{logits.as<T>() + row * classes, 1}, out, classes, target,
                            scale);
    }
  });
  EXPECT_TRUE(agrees(actualLoss, loss[0])) << "cross_entropy " << describe(dtype, shape);
  EXPECT_TRUE(agrees(actualGradient, gradient[0]))
      << "cross_entropy_grad " << describe(dtype, shape);
}

TEST(RowMathCrossEntropy, LossAndGradientMatchTheCpuKernel) {
  std::vector<double> labels = {3, 0, -100, 12, 7, 7, -100, 1, 5};
  for (DType dtype : kFloatDTypes)
    for (DType labelType : {DType::I64, DType::I32}) {
      checkCrossEntropy(dtype, labelType, labels);
      checkCrossEntropy(dtype, labelType, {-100, -100, -100});
    }
}

TEST(RowMathCrossEntropy, TheFirstLabelOutsideTheClassesIsReportedAsTheCpuReportsIt) {
  std::vector<double> values = {3, -100, 2, 13, -1, 4};
  OwnedTensor logits = randomTensor(DType::F32, {6, 13}, 81);
  OwnedTensor labels = testing::i64({6}, values), loss(DType::F32, {});
  Attributes attributes = attrs({{"ignore_index", int64_t{-100}}});
  std::vector<OwnedTensor> inputs = {logits, labels}, outputs = {loss};
  std::string cpuError;
  EXPECT_FALSE(testing::runWithWorkspace(testing::kernelNamed("cross_entropy"),
                                         makeCall(inputs, outputs, attributes), cpuError));
  DeviceErrorRecord record;
  record.code = kLabelOutOfRange;
  for (int64_t position = 0; position < 6; ++position) {
    int64_t label = static_cast<int64_t>(values[position]);
    if (targetOf(label, 13, -100) == kLabelOutsideClasses) {
      record.values[0] = label;
      record.values[1] = position;
      record.values[2] = 13;
      break;
    }
  }
  EXPECT_EQ(describeDeviceError(record), cpuError);
}

//===----------------------------------------------------------------------===//
// The target record
//===----------------------------------------------------------------------===//

TEST(RowMathTarget, ListsEveryOpOfTheGroup) {
  for (const char *op : {"softmax",          "log_softmax",        "softmax_grad",
                         "log_softmax_grad", "layer_norm",         "add_layer_norm",
                         "rms_norm",         "layer_norm_grad",    "rms_norm_grad",
                         "batch_norm",       "batch_norm_grad",    "reduce_sum",
                         "reduce_mean",      "reduce_max",         "reduce_prod",
                         "reduce_l2",        "reduce_log_sum_exp", "cumsum",
                         "cross_entropy",    "cross_entropy_grad"})
    EXPECT_TRUE(cudaTarget().ops().count(op)) << op;
}

TEST(RowMathTarget, ReductionsRefuseMoreDimensionGroupsThanTheKernelsTake) {
  Shape alternating(2 * kMaxDimGroups + 2, 2);
  std::vector<int64_t> axes;
  for (int64_t d = 1; d < static_cast<int64_t>(alternating.size()); d += 2)
    axes.push_back(d);
  Shape reduced;
  std::string error;
  ASSERT_TRUE(reduceShape(alternating, axes, false, reduced, error));
  Attributes attributes = attrs({{"axes", axes}, {"keepdims", int64_t{0}}});
  KernelCall call;
  call.inputs.push_back(TensorView{nullptr, DType::F32, alternating});
  call.outputs.push_back(TensorView{nullptr, DType::F32, reduced});
  call.attributes = &attributes;
  const Kernel &reduceSum = targetContracts(kCudaTarget)->at("reduce_sum");
  EXPECT_FALSE(checkKernelCall(reduceSum, call, error));
  EXPECT_NE(error.find("reduce_sum on CUDA"), std::string::npos) << error;
  // A rank-16 input always fits.
  Shape sixteen(16, 2);
  axes = {1, 3, 5, 7, 9, 11, 13, 15};
  ASSERT_TRUE(reduceShape(sixteen, axes, false, reduced, error));
  call.inputs[0].shape = sixteen;
  call.outputs[0].shape = reduced;
  attributes = attrs({{"axes", axes}, {"keepdims", int64_t{0}}});
  EXPECT_TRUE(checkKernelCall(reduceSum, call, error)) << error;
}

TEST(RowMathTarget, WorkspaceHoldsTheChunksPartialResults) {
  const KernelTable &cuda = *targetContracts(kCudaTarget);
  Attributes attributes = attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}});
  KernelCall call;
  Shape shape{4096, 768};
  call.inputs = {TensorView{nullptr, DType::BF16, shape}, TensorView{nullptr, DType::BF16, shape},
                 TensorView{nullptr, DType::F32, {768}}};
  call.outputs = {TensorView{nullptr, DType::BF16, shape}, TensorView{nullptr, DType::F32, {768}},
                  TensorView{nullptr, DType::F32, {768}}};
  call.attributes = &attributes;
  RowChunks split(call);
  uint64_t bytes = workspaceBytes(cuda.at("layer_norm_grad"), call);
  EXPECT_GE(bytes, 4096 * sizeof(RowStatistics) + 2 * split.chunks * 768 * sizeof(double));
  EXPECT_LT(bytes, 4096 * sizeof(RowStatistics) + 2 * split.chunks * 768 * sizeof(double) + 128);
  // One chunk per output: no partial results.
  Attributes reduceAttributes =
      attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  call = KernelCall{};
  call.inputs = {TensorView{nullptr, DType::F32, {8192, 64}}};
  call.outputs = {TensorView{nullptr, DType::F32, {8192}}};
  call.attributes = &reduceAttributes;
  EXPECT_EQ(workspaceBytes(cuda.at("reduce_sum"), call), 0u);
  call.inputs[0].shape = {1, 1 << 20};
  call.outputs[0].shape = {1};
  EXPECT_EQ(workspaceBytes(cuda.at("reduce_sum"), call), kMaxReductionSplits * kPartialBytes);
}

} // namespace
} // namespace memc::kernels::cuda::rows
