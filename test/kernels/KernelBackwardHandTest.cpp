//===- KernelBackwardHandTest.cpp - backward kernels beyond PyTorch's cases ===//
//
// What the PyTorch references cannot pin: max_pool_grad's pick among ties, NaN, -inf and
// windows in the padding; the scatters on every element type and on empty tensors;
// cross_entropy when every label is ignored. Then adjointness against the forward kernels:
// conv, avg_pool, slice and gather are linear, so <f(x), g> = <x, f_grad(g)> for any
// attributes, including those PyTorch rejects (pads past half the window, avg_pool dilations),
// and <max_pool(x), g> = <x, max_pool_grad(g, x)>. Last, results written over an input's
// buffer, as the planner's in-place steps ask. Outputs start as NaN bytes, so an element a
// kernel forgets to write shows.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "ReferenceCases.h"
#include "kernels/ShapeRules.h"

#include <cstring>
#include <limits>
#include <random>
#include <set>

namespace memc::kernels::testing {
namespace {

using Ints = std::vector<int64_t>;
using Types = std::vector<std::pair<DType, Shape>>;

constexpr double kInf = std::numeric_limits<double>::infinity();

Attributes poolAttrs(Ints kernel, Ints strides, Ints pads, Ints dilations, bool ceilMode) {
  return attrs({{"kernel_shape", kernel},
                {"strides", strides},
                {"pads", pads},
                {"dilations", dilations},
                {"ceil_mode", int64_t{ceilMode}}});
}

/// Checks and runs `kernel` on outputs filled with 0xFF bytes (NaN for floats).
std::vector<OwnedTensor> runOnNaN(const std::string &kernel, const std::vector<OwnedTensor> &inputs,
                                  const Types &outputTypes, const Attributes &attributes) {
  std::vector<OwnedTensor> outputs;
  for (const auto &[dtype, shape] : outputTypes) {
    outputs.emplace_back(dtype, shape);
    std::memset(outputs.back().bytes.data(), 0xFF, outputs.back().bytes.size());
  }
  KernelCall call = makeCall(inputs, outputs, attributes);
  std::string error;
  EXPECT_TRUE(kernelNamed(kernel).check(call, error)) << kernel << ": " << error;
  EXPECT_TRUE(runWithWorkspace(kernelNamed(kernel), call, error)) << kernel << ": " << error;
  return outputs;
}

std::vector<double> run1(const std::string &kernel, const std::vector<OwnedTensor> &inputs,
                         DType dtype, Shape shape, const Attributes &attributes) {
  return runOnNaN(kernel, inputs, {{dtype, shape}}, attributes)[0].values();
}

//===----------------------------------------------------------------------===//
// Hand-computed cases
//===----------------------------------------------------------------------===//

TEST(KernelBackwardHand, MaxPoolGradTakesTheFirstMaximum) {
  Attributes a = poolAttrs({2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false);
  // Window 0 is all ties; window 1 has its maximum 3 twice.
  OwnedTensor x = f32({1, 1, 2, 4}, {1, 1, 3, 2, 1, 1, 2, 3});
  EXPECT_EQ(run1("max_pool_grad", {f32({1, 1, 1, 2}, {5, 7}), x}, DType::F32, {1, 1, 2, 4}, a),
            (std::vector<double>{5, 0, 7, 0, 0, 0, 0, 0}));
}

TEST(KernelBackwardHand, MaxPoolGradOnNaNAndNegativeInfinity) {
  Attributes a = poolAttrs({2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false);
  OwnedTensor g = f32({1, 1, 1, 1}, {5});
  // PyTorch's rule: a NaN replaces the running maximum, so the last NaN wins.
  EXPECT_EQ(
      run1("max_pool_grad", {g, f32({1, 1, 2, 2}, {1, NAN, 3, NAN})}, DType::F32, {1, 1, 2, 2}, a),
      (std::vector<double>{0, 0, 0, 5}));
  // All -inf: the window's first tap inside the input.
  EXPECT_EQ(run1("max_pool_grad", {g, f32({1, 1, 2, 2}, {-kInf, -kInf, -kInf, -kInf})}, DType::F32,
                 {1, 1, 2, 2}, a),
            (std::vector<double>{5, 0, 0, 0}));
  Attributes padded = poolAttrs({2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false);
  EXPECT_EQ(run1("max_pool_grad",
                 {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({1, 1, 2, 2}, {-kInf, -kInf, -kInf, -kInf})},
                 DType::F32, {1, 1, 2, 2}, padded),
            (std::vector<double>{1, 2, 3, 4}));
}

TEST(KernelBackwardHand, MaxPoolGradAddsOverlappingWindowsAndDropsPaddingWindows) {
  OwnedTensor x = f32({1, 1, 3}, {1, 5, 2});
  EXPECT_EQ(run1("max_pool_grad", {f32({1, 1, 2}, {10, 20}), x}, DType::F32, {1, 1, 3},
                 poolAttrs({2}, {1}, {0, 0}, {1}, false)),
            (std::vector<double>{0, 30, 0}));
  // Pads past the window (PyTorch rejects them): the first two windows see only padding.
  EXPECT_EQ(run1("max_pool_grad", {f32({1, 1, 4}, {10, 20, 30, 40}), f32({1, 1, 2}, {4, 9})},
                 DType::F32, {1, 1, 2}, poolAttrs({1}, {1}, {2, 0}, {1}, false)),
            (std::vector<double>{30, 40}));
}

TEST(KernelBackwardHand, AvgPoolGradWithDilationAndPaddingWindows) {
  Attributes a = poolAttrs({2}, {1}, {0, 0}, {2}, false);
  a.set("count_include_pad", int64_t{0});
  EXPECT_EQ(run1("avg_pool_grad", {f32({1, 1, 3}, {1, 2, 3})}, DType::F32, {1, 1, 5}, a),
            (std::vector<double>{0.5, 1, 2, 1, 1.5}));
  Attributes b = poolAttrs({1}, {1}, {2, 0}, {1}, false);
  for (int64_t include : {0, 1}) {
    b.set("count_include_pad", include);
    EXPECT_EQ(run1("avg_pool_grad", {f32({1, 1, 3}, {1, 2, 3})}, DType::F32, {1, 1, 1}, b),
              (std::vector<double>{3}));
  }
}

TEST(KernelBackwardHand, GatherGradAccumulatesRepeatsAndCountsNegativesFromTheEnd) {
  Attributes axis0 = attrs({{"axis", int64_t{0}}});
  OwnedTensor grad = f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(run1("gather_grad", {grad, i64({4}, {2, -1, 0, 2})}, DType::F32, {3, 2}, axis0),
            (std::vector<double>{5, 6, 0, 0, 11, 14}));
  EXPECT_EQ(run1("gather_grad", {OwnedTensor(DType::F32, {0, 2}), i64({0}, {})}, DType::F32, {3, 2},
                 axis0),
            (std::vector<double>(6, 0.0)));
  // Axis 1 with a 2-D index: grad [2, 2, 2] = data.shape[:1] + [2, 2] + data.shape[2:].
  OwnedTensor rows = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(run1("gather_grad", {rows, tensor(DType::I32, {2, 2}, {1, 1, 0, -3})}, DType::F32,
                 {2, 3}, attrs({{"axis", int64_t{1}}})),
            (std::vector<double>{7, 3, 0, 15, 11, 0}));
}

TEST(KernelBackwardHand, SliceGradOnEveryElementTypeAndEmptySlices) {
  Attributes reverse = attrs({{"starts", Ints{3}}, {"limits", Ints{0}}, {"steps", Ints{-2}}});
  for (DType dtype : {DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::Bool})
    EXPECT_EQ(run1("slice_grad", {tensor(dtype, {2}, {1, 1})}, dtype, {5}, reverse),
              (std::vector<double>{0, 1, 0, 1, 0}))
        << dtypeName(dtype);
  EXPECT_EQ(run1("slice_grad", {tensor(DType::I32, {2}, {7, 8})}, DType::I32, {5}, reverse),
            (std::vector<double>{0, 8, 0, 7, 0}));
  Attributes empty = attrs({{"starts", Ints{1, 0}}, {"limits", Ints{1, 3}}, {"steps", Ints{1, 1}}});
  EXPECT_EQ(run1("slice_grad", {OwnedTensor(DType::F32, {0, 3})}, DType::F32, {2, 3}, empty),
            (std::vector<double>(6, 0.0)));
  // A slice that takes every element (reversed): a permutation, nothing left to zero.
  Attributes all = attrs({{"starts", Ints{2}}, {"limits", Ints{-1}}, {"steps", Ints{-1}}});
  EXPECT_EQ(run1("slice_grad", {f32({3}, {1, 2, 3})}, DType::F32, {3}, all),
            (std::vector<double>{3, 2, 1}));
}

TEST(KernelBackwardHand, CrossEntropyAndItsGradient) {
  Attributes ignore = attrs({{"ignore_index", int64_t{-100}}});
  OwnedTensor logits = f32({2, 2}, {0, std::log(3.0), 5, 5});
  OwnedTensor labels = i64({2}, {1, -100});
  EXPECT_NEAR(run1("cross_entropy", {logits, labels}, DType::F32, {}, ignore)[0],
              std::log(4.0 / 3.0), 1e-7);
  EXPECT_TRUE(closeTo(
      run1("cross_entropy_grad", {f32({}, {2}), logits, labels}, DType::F32, {2, 2}, ignore),
      {0.5, -0.5, 0, 0}, 1e-6, 1e-7));
  // Every label ignored: the loss is 0 (PyTorch's mean gives 0/0) and so is its gradient.
  OwnedTensor ignored = i64({2}, {-100, -100});
  EXPECT_EQ(run1("cross_entropy", {logits, ignored}, DType::F32, {}, ignore),
            (std::vector<double>{0}));
  EXPECT_EQ(run1("cross_entropy_grad", {f32({}, {2}), logits, ignored}, DType::F32, {2, 2}, ignore),
            (std::vector<double>{0, 0, 0, 0}));
  // No rows at all.
  EXPECT_EQ(run1("cross_entropy", {OwnedTensor(DType::F32, {0, 4}), i64({0}, {})}, DType::F32, {},
                 ignore),
            (std::vector<double>{0}));
}

//===----------------------------------------------------------------------===//
// Adjointness against the forward kernels
//===----------------------------------------------------------------------===//

OwnedTensor randomTensor(DType dtype, const Shape &shape, std::mt19937 &random) {
  OwnedTensor t(dtype, shape);
  std::normal_distribution<double> normal;
  std::vector<double> values(static_cast<size_t>(t.numElements()));
  for (double &v : values)
    v = normal(random);
  return tensor(dtype, shape, values);
}

/// <a, b> and sum |a_i b_i| (the scale of its rounding error).
std::pair<double, double> dot(const OwnedTensor &a, const OwnedTensor &b) {
  double sum = 0, scale = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    sum += a.at(i) * b.at(i);
    scale += std::abs(a.at(i) * b.at(i));
  }
  return {sum, scale};
}

#define EXPECT_SAME_DOT(lhs, rhs, what)                                                            \
  do {                                                                                             \
    auto [l, lScale] = (lhs);                                                                      \
    auto [r, rScale] = (rhs);                                                                      \
    EXPECT_NEAR(l, r, 1e-5 * std::max(lScale, rScale) + 1e-9) << (what);                           \
  } while (0)

/// The forward output shape of a window op; fails the test if the attributes are invalid.
Shape windowOutput(const Shape &input, int64_t channels, const Ints &kernel, const Attributes &a,
                   bool ceilMode) {
  Ints strides, pads, dilations;
  a.getInts("strides", strides);
  a.getInts("pads", pads);
  a.getInts("dilations", dilations);
  Shape output;
  std::string error;
  EXPECT_TRUE(
      windowShape(input, channels, kernel, strides, pads, dilations, ceilMode, output, error))
      << error;
  return output;
}

TEST(KernelBackwardAdjoint, Convolution) {
  struct Config {
    Shape input, weight;
    Ints strides, pads, dilations;
    int64_t group;
  };
  std::vector<Config> configs = {
      {{1, 2, 5, 5}, {3, 2, 3, 3}, {1, 1}, {3, 3, 2, 4}, {1, 1}, 1},
      {{2, 4, 7, 6}, {4, 1, 2, 3}, {2, 3}, {0, 1, 2, 0}, {2, 1}, 4},
      {{1, 6, 9}, {4, 3, 4}, {3}, {5, 0}, {2}, 2},
      {{1, 2, 4, 3, 5}, {2, 2, 2, 2, 3}, {1, 2, 1}, {1, 1, 0, 2, 0, 1}, {1, 1, 2}, 1},
      {{2, 3, 4, 4}, {5, 3, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
      {{3, 8, 6, 5}, {8, 2, 3, 3}, {1, 2}, {2, 1, 1, 2}, {2, 2}, 4},
  };
  std::mt19937 random(7);
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config &c = configs[i];
    Attributes a = attrs(
        {{"strides", c.strides}, {"pads", c.pads}, {"dilations", c.dilations}, {"group", c.group}});
    Shape output =
        windowOutput(c.input, c.weight[0], Shape(c.weight.begin() + 2, c.weight.end()), a, false);
    OwnedTensor x = randomTensor(DType::F32, c.input, random);
    OwnedTensor w = randomTensor(DType::F32, c.weight, random);
    OwnedTensor g = randomTensor(DType::F32, output, random);
    OwnedTensor y = runOnNaN("conv", {x, w}, {{DType::F32, output}}, a)[0];
    OwnedTensor dx = runOnNaN("conv_grad_input", {g, w}, {{DType::F32, c.input}}, a)[0];
    OwnedTensor dw = runOnNaN("conv_grad_weight", {g, x}, {{DType::F32, c.weight}}, a)[0];
    EXPECT_SAME_DOT(dot(y, g), dot(x, dx), "conv_grad_input, config " + std::to_string(i));
    EXPECT_SAME_DOT(dot(y, g), dot(w, dw), "conv_grad_weight, config " + std::to_string(i));
  }
}

TEST(KernelBackwardAdjoint, Pooling) {
  struct Config {
    Shape input;
    Ints kernel, strides, pads, dilations;
    bool ceilMode;
  };
  std::vector<Config> configs = {
      {{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
      {{1, 2, 8, 9}, {2, 3}, {3, 2}, {1, 0, 1, 2}, {2, 1}, true},
      {{1, 2, 10}, {3}, {2}, {1, 1}, {3}, false},
      {{1, 1, 5, 6, 7}, {2, 3, 2}, {2, 1, 3}, {1, 1, 0, 1, 1, 1}, {1, 2, 1}, true},
      {{2, 2, 4, 4}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},
  };
  std::mt19937 random(11);
  for (size_t i = 0; i < configs.size(); ++i) {
    const Config &c = configs[i];
    Attributes a = poolAttrs(c.kernel, c.strides, c.pads, c.dilations, c.ceilMode);
    Shape output = windowOutput(c.input, c.input[1], c.kernel, a, c.ceilMode);
    OwnedTensor x = randomTensor(DType::F32, c.input, random);
    OwnedTensor g = randomTensor(DType::F32, output, random);
    std::string label = "config " + std::to_string(i);
    OwnedTensor maxima = runOnNaN("max_pool", {x}, {{DType::F32, output}}, a)[0];
    OwnedTensor routed = runOnNaN("max_pool_grad", {g, x}, {{DType::F32, c.input}}, a)[0];
    EXPECT_SAME_DOT(dot(maxima, g), dot(x, routed), "max_pool_grad, " + label);
    for (int64_t include : {0, 1}) {
      a.set("count_include_pad", include);
      OwnedTensor y = runOnNaN("avg_pool", {x}, {{DType::F32, output}}, a)[0];
      OwnedTensor dx = runOnNaN("avg_pool_grad", {g}, {{DType::F32, c.input}}, a)[0];
      EXPECT_SAME_DOT(dot(y, g), dot(x, dx), "avg_pool_grad, " + label);
    }
  }
}

/// max_pool's pick for each window of an NCHW input, a tap at a time in row-major order: the
/// first tap inside the input, then any greater or NaN one (PyTorch's rule); -1 for a window with
/// no tap inside. Indices are into the whole input.
std::vector<int64_t> naiveMaxPoolPicks(const OwnedTensor &x, const Shape &output,
                                       const Ints &kernel, const Ints &strides, const Ints &pads,
                                       const Ints &dilations) {
  const Shape &in = x.shape;
  std::vector<int64_t> picks;
  for (int64_t plane = 0; plane < in[0] * in[1]; ++plane)
    for (int64_t oh = 0; oh < output[2]; ++oh)
      for (int64_t ow = 0; ow < output[3]; ++ow) {
        int64_t pick = -1;
        double max = -kInf;
        for (int64_t kh = 0; kh < kernel[0]; ++kh)
          for (int64_t kw = 0; kw < kernel[1]; ++kw) {
            int64_t h = oh * strides[0] - pads[0] + kh * dilations[0];
            int64_t w = ow * strides[1] - pads[1] + kw * dilations[1];
            if (h < 0 || h >= in[2] || w < 0 || w >= in[3])
              continue;
            int64_t index = (plane * in[2] + h) * in[3] + w;
            double value = x.at(index);
            if (pick < 0 || value > max || std::isnan(value)) {
              pick = index;
              max = value;
            }
          }
        picks.push_back(pick);
      }
  return picks;
}

TEST(KernelBackwardHand, MaxPoolRunsPickAsOneWindowAtATime) {
  // Rows wide enough for the kernels' runs of windows in vector lanes (MaxPoolRuns.h), any
  // stride and dilation, values with ties, NaN and -inf: max_pool and max_pool_grad against
  // the rule applied a tap at a time. Small integers keep every sum exact in any order.
  std::mt19937 random(19);
  auto pickIn = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  auto specialValue = [&]() {
    int64_t roll = pickIn(0, 99);
    return roll < 3 ? std::nan("") : roll < 8 ? -kInf : static_cast<double>(pickIn(-2, 2));
  };
  for (int config = 0; config < 150; ++config) {
    Ints kernel = {pickIn(1, 4), pickIn(1, 4)}, strides = {pickIn(1, 3), pickIn(1, 3)};
    Ints dilations = {pickIn(1, 2), pickIn(1, 2)};
    Ints pads = {pickIn(0, kernel[0] / 2), pickIn(0, kernel[1] / 2)};
    pads.push_back(pads[0]);
    pads.push_back(pads[1]);
    bool ceilMode = pickIn(0, 1) == 1;
    Shape input = {pickIn(1, 2), pickIn(1, 2), pickIn(8, 12), pickIn(8, 80)};
    DType dtype = config % 3 == 2 ? DType::BF16 : DType::F32;
    Attributes a = poolAttrs(kernel, strides, pads, dilations, ceilMode);
    Shape output = windowOutput(input, input[1], kernel, a, ceilMode);
    std::vector<double> xs(static_cast<size_t>(input[0] * input[1] * input[2] * input[3]));
    for (double &v : xs)
      v = specialValue();
    OwnedTensor x = tensor(dtype, input, xs);
    std::vector<double> gs(static_cast<size_t>(output[0] * output[1] * output[2] * output[3]));
    for (double &v : gs)
      v = static_cast<double>(pickIn(-3, 3));
    OwnedTensor g = tensor(dtype, output, gs);
    std::vector<int64_t> picks = naiveMaxPoolPicks(x, output, kernel, strides, pads, dilations);
    std::vector<double> maxima, routed(xs.size(), 0.0);
    for (size_t p = 0; p < picks.size(); ++p) {
      maxima.push_back(picks[p] < 0 ? -kInf : x.at(picks[p]));
      if (picks[p] >= 0)
        routed[static_cast<size_t>(picks[p])] += gs[p];
    }
    std::string label = "config " + std::to_string(config);
    std::vector<double> y = runOnNaN("max_pool", {x}, {{dtype, output}}, a)[0].values();
    ASSERT_EQ(y.size(), maxima.size()) << label;
    for (size_t p = 0; p < y.size(); ++p)
      ASSERT_TRUE(std::isnan(maxima[p]) ? std::isnan(y[p]) : y[p] == maxima[p])
          << label << ", max_pool output " << p << ": " << y[p] << " instead of " << maxima[p];
    EXPECT_EQ(runOnNaN("max_pool_grad", {g, x}, {{dtype, input}}, a)[0].values(), routed)
        << label;
  }
}

TEST(KernelBackwardHand, MaxPoolArgmaxRoutesAsMaxPoolGrad) {
  // max_pool_with_argmax's result and max_pool_grad_argmax's gradient against max_pool and
  // max_pool_grad, byte for byte: 1-, 2- and 3-d windows up to 256 taps, pads up to whole
  // windows in the padding, ties, NaN and -inf, a grad of another float type, and fractional
  // gradients, whose sums differ in the last bits if the order of the additions does.
  std::mt19937 random(23);
  auto pickIn = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(random);
  };
  auto inputValue = [&]() {
    int64_t roll = pickIn(0, 99);
    return roll < 3 ? std::nan("") : roll < 8 ? -kInf : static_cast<double>(pickIn(-2, 2));
  };
  const DType types[] = {DType::F32, DType::BF16, DType::F16};
  for (int config = 0; config < 120; ++config) {
    size_t rank = static_cast<size_t>(config % 3 + 1);
    Ints kernel, strides, dilations, pads(2 * rank);
    Shape input = {pickIn(1, 2), pickIn(1, 3)};
    for (size_t d = 0; d < rank; ++d) {
      kernel.push_back(pickIn(1, rank == 1 ? 9 : 4));
      strides.push_back(pickIn(1, 3));
      dilations.push_back(pickIn(1, 2));
      pads[d] = pickIn(0, kernel[d]);
      pads[d + rank] = pickIn(0, kernel[d]);
      // At least one whole window in the padded input, so the attributes are valid; a window
      // may be wider than the input (then a tap's offset does not name it: WindowTapIndex.h).
      int64_t smallest = (kernel[d] - 1) * dilations[d] + 1 - pads[d] - pads[d + rank];
      input.push_back(std::max(smallest, pickIn(1, rank == 2 ? 40 : 9)));
    }
    if (config == 0) { // the most taps a byte holds
      kernel[0] = 256;
      dilations[0] = 1;
      input[2] = 300;
    }
    bool ceilMode = pickIn(0, 1) == 1;
    DType dtype = types[config % 3], gradType = types[(config / 3) % 3];
    Attributes a = poolAttrs(kernel, strides, pads, dilations, ceilMode);
    Shape output = windowOutput(input, input[1], kernel, a, ceilMode);
    std::string label = "config " + std::to_string(config);
    int64_t inputs = 1, outputs = 1;
    for (size_t d = 0; d < input.size(); ++d) {
      inputs *= input[d];
      outputs *= output[d];
    }
    std::vector<double> xs(static_cast<size_t>(inputs)), gs(static_cast<size_t>(outputs));
    for (double &v : xs)
      v = inputValue();
    for (double &v : gs)
      v = std::uniform_real_distribution<double>(-1.0, 1.0)(random);
    OwnedTensor x = tensor(dtype, input, xs), g = tensor(gradType, output, gs);
    OwnedTensor y = runOnNaN("max_pool", {x}, {{dtype, output}}, a)[0];
    std::vector<OwnedTensor> saved =
        runOnNaN("max_pool_with_argmax", {x}, {{dtype, output}, {DType::U8, output}}, a);
    EXPECT_EQ(saved[0].bytes, y.bytes) << label << ": max_pool_with_argmax's result";
    OwnedTensor dx = runOnNaN("max_pool_grad", {g, x}, {{dtype, input}}, a)[0];
    OwnedTensor routed = runOnNaN("max_pool_grad_argmax", {g, saved[1]}, {{dtype, input}}, a)[0];
    EXPECT_EQ(routed.bytes, dx.bytes) << label << ": max_pool_grad_argmax's result";
  }
}

TEST(KernelBackwardHand, MaxPoolArgmaxWindowsFitAByte) {
  Attributes a = poolAttrs({257}, {1}, {0, 0}, {1}, false);
  OwnedTensor x(DType::F32, {1, 1, 257}), g(DType::F32, {1, 1, 1}), taps(DType::U8, {1, 1, 1});
  OwnedTensor y(DType::F32, {1, 1, 1}), dx(DType::F32, {1, 1, 257});
  std::string error;
  std::vector<OwnedTensor> input = {x}, grads = {g, taps}, forward = {y, taps}, backward = {dx};
  EXPECT_FALSE(kernelNamed("max_pool_with_argmax").check(makeCall(input, forward, a), error));
  EXPECT_NE(error.find("257 taps"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(kernelNamed("max_pool_grad_argmax").check(makeCall(grads, backward, a), error));
  EXPECT_NE(error.find("at most 256"), std::string::npos) << error;
  OwnedTensor wide(DType::I32, {1, 1, 1});
  forward = {y, wide};
  a = poolAttrs({257}, {257}, {0, 0}, {1}, false);
  EXPECT_FALSE(kernelNamed("max_pool_with_argmax").check(makeCall(input, forward, a), error));
  EXPECT_NE(error.find("argmax"), std::string::npos) << error;
}

TEST(KernelBackwardAdjoint, SliceAndGather) {
  std::mt19937 random(13);
  OwnedTensor x = randomTensor(DType::F32, {5, 6, 4}, random);
  Attributes slice =
      attrs({{"starts", Ints{4, 1, 3}}, {"limits", Ints{0, 6, -1}}, {"steps", Ints{-2, 2, -1}}});
  OwnedTensor sg = randomTensor(DType::F32, {2, 3, 4}, random);
  OwnedTensor sliced = runOnNaN("slice", {x}, {{DType::F32, {2, 3, 4}}}, slice)[0];
  OwnedTensor sdx = runOnNaN("slice_grad", {sg}, {{DType::F32, {5, 6, 4}}}, slice)[0];
  EXPECT_SAME_DOT(dot(sliced, sg), dot(x, sdx), "slice_grad");
  for (int64_t axis : {0, 1, 2}) {
    OwnedTensor indices = i64({2, 3}, {0, -1, 2, 2, 0, -1});
    Shape gathered;
    std::string error;
    ASSERT_TRUE(gatherShape(x.shape, indices.shape, axis, gathered, error)) << error;
    Attributes a = attrs({{"axis", axis}});
    OwnedTensor g = randomTensor(DType::F32, gathered, random);
    OwnedTensor y = runOnNaN("gather", {x, indices}, {{DType::F32, gathered}}, a)[0];
    OwnedTensor dx = runOnNaN("gather_grad", {g, indices}, {{DType::F32, x.shape}}, a)[0];
    EXPECT_SAME_DOT(dot(y, g), dot(x, dx), "gather_grad, axis " + std::to_string(axis));
  }
}

//===----------------------------------------------------------------------===//
// In place
//===----------------------------------------------------------------------===//

/// Kernels whose first output may share a buffer with an input of its shape and type.
const std::set<std::string> kInPlaceKernels = {"gelu_grad",        "softmax_grad",
                                               "log_softmax_grad", "layer_norm_grad",
                                               "rms_norm_grad",    "batch_norm_grad",
                                               "cross_entropy_grad", "bias_gelu_grad"};

double defaultRtol(DType dtype) {
  return dtype == DType::F16 ? 2e-3 : dtype == DType::BF16 ? 1.6e-2 : 1e-5;
}

TEST(KernelBackwardInPlace, MatchesPyTorchOverEachInput) {
  int checked = 0;
  for (const ReferenceCase &c : references()) {
    if (!kInPlaceKernels.count(c.kernel))
      continue;
    for (size_t j = 0; j < c.inputs.size(); ++j) {
      if (c.inputs[j].shape != c.outputs[0].shape || c.inputs[j].dtype != c.outputs[0].dtype)
        continue;
      std::vector<OwnedTensor> buffers = c.inputs;
      std::vector<OwnedTensor> outputs;
      for (const OwnedTensor &t : c.outputs)
        outputs.emplace_back(t.dtype, t.shape);
      KernelCall call = makeCall(buffers, outputs, c.attributes);
      call.outputs[0].data = call.inputs[j].data;
      std::string error;
      const Kernel &k = kernelNamed(c.kernel);
      ASSERT_TRUE(k.check(call, error)) << c.name << ": " << error;
      ASSERT_TRUE(runWithWorkspace(k, call, error)) << c.name << ": " << error;
      outputs[0] = buffers[j];
      for (size_t i = 0; i < c.outputs.size(); ++i) {
        double rtol = c.rtol >= 0 ? c.rtol : defaultRtol(c.outputs[i].dtype);
        double atol = c.rtol >= 0 ? c.atol : c.outputs[i].dtype == DType::F32 ? 1e-6 : 1e-5;
        EXPECT_TRUE(closeTo(outputs[i].values(), c.outputs[i].values(), rtol, atol))
            << c.name << ", output " << i << " over input " << j;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}

} // namespace
} // namespace memc::kernels::testing
