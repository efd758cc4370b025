//===- LargeTensorTest.cpp - the threaded and blocked paths ---------------===//
//
// The reference cases are small, so they take the kernels' serial paths. These tensors are
// large enough to be split over threads, blocked (conv columns, reduction partials, gemm row
// blocks) or folded (batched matmul), and are compared with plain loops written here. ctest
// runs them with MEMC_NUM_THREADS=4 so the split happens on any machine.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"

#include <random>

namespace memc::kernels::testing {
namespace {

int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

TEST(LargeTensor, AddWithRowAndColumnBroadcast) {
  OwnedTensor a = randomF32({64, 1, 700}, 1), b = randomF32({300, 1}, 2);
  std::vector<double> y = runKernel("add", {a, b}, {{DType::F32, {64, 300, 700}}})[0].values();
  std::vector<double> expected(y.size());
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 300; ++j)
      for (int64_t k = 0; k < 700; ++k)
        expected[(i * 300 + j) * 700 + k] = a.as<float>()[i * 700 + k] + b.as<float>()[j];
  EXPECT_TRUE(closeTo(y, expected, 1e-6, 1e-6));
}

TEST(LargeTensor, InPlaceMulOfManyElements) {
  OwnedTensor a = randomF32({3000000}, 3), b = randomF32({3000000}, 4);
  OwnedTensor original = a;
  std::vector<OwnedTensor> inputs = {a, b};
  KernelCall call = makeCall(inputs, inputs, Attributes());
  call.outputs.resize(1);
  std::string error;
  ASSERT_TRUE(kernelNamed("mul").check(call, error)) << error;
  ASSERT_TRUE(runWithWorkspace(kernelNamed("mul"), call, error));
  for (int64_t i = 0; i < 3000000; ++i)
    ASSERT_EQ(inputs[0].as<float>()[i], original.as<float>()[i] * b.as<float>()[i]) << i;
}

TEST(LargeTensor, SoftmaxRowsAndColumns) {
  OwnedTensor x = randomF32({300, 1000}, 5, 3.0);
  for (int64_t axis : {0, 1}) {
    std::vector<double> y =
        runKernel("softmax", {x}, {{DType::F32, {300, 1000}}}, attrs({{"axis", axis}}))[0].values();
    std::vector<double> expected(y.size());
    int64_t rows = axis == 1 ? 300 : 1000, length = axis == 1 ? 1000 : 300;
    for (int64_t r = 0; r < rows; ++r) {
      auto at = [&](int64_t j) { return axis == 1 ? r * 1000 + j : j * 1000 + r; };
      double max = -INFINITY, sum = 0;
      for (int64_t j = 0; j < length; ++j)
        max = std::max(max, static_cast<double>(x.as<float>()[at(j)]));
      for (int64_t j = 0; j < length; ++j)
        sum += std::exp(x.as<float>()[at(j)] - max);
      for (int64_t j = 0; j < length; ++j)
        expected[at(j)] = std::exp(x.as<float>()[at(j)] - max) / sum;
    }
    EXPECT_TRUE(closeTo(y, expected, 1e-5, 1e-9)) << "axis " << axis;
  }
}

TEST(LargeTensor, LayerNormRows) {
  OwnedTensor x = randomF32({512, 768}, 6, 2.0), scale = randomF32({768}, 7),
              bias = randomF32({768}, 8);
  std::vector<double> y = runKernel("layer_norm", {x, scale, bias}, {{DType::F32, {512, 768}}},
                                    attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}}))[0]
                              .values();
  std::vector<double> expected(y.size());
  for (int64_t r = 0; r < 512; ++r) {
    const float *row = x.as<float>() + r * 768;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < 768; ++j)
      mean += row[j] / 768.0;
    for (int64_t j = 0; j < 768; ++j)
      var += (row[j] - mean) * (row[j] - mean) / 768.0;
    for (int64_t j = 0; j < 768; ++j)
      expected[r * 768 + j] =
          (row[j] - mean) / std::sqrt(var + 1e-5) * scale.as<float>()[j] + bias.as<float>()[j];
  }
  EXPECT_TRUE(closeTo(y, expected, 1e-5, 1e-5));
}

/// Reduces `x` over `axes` with plain loops (sum, mean or max).
std::vector<double> naiveReduce(const OwnedTensor &x, const std::vector<int64_t> &axes,
                                const std::string &kind) {
  Shape out = x.shape;
  for (int64_t a : axes)
    out[a] = 1;
  std::vector<double> acc(count(out), kind == "max" ? -INFINITY : 0.0);
  std::vector<int64_t> index(x.shape.size());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t rest = i, o = 0;
    for (size_t d = x.shape.size(); d-- > 0;) {
      index[d] = rest % x.shape[d];
      rest /= x.shape[d];
    }
    for (size_t d = 0; d < x.shape.size(); ++d)
      o = o * out[d] + (out[d] == 1 ? 0 : index[d]);
    double v = x.at(i);
    acc[o] = kind == "max" ? std::max(acc[o], v) : acc[o] + v;
  }
  if (kind == "mean")
    for (double &v : acc)
      v /= static_cast<double>(x.numElements() / static_cast<int64_t>(acc.size()));
  return acc;
}

TEST(LargeTensor, ReductionsOverEveryLayout) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
  };
  std::vector<Case> cases = {
      {{3000000}, {0}},        {{200000, 3}, {0}},   {{3, 1000000}, {1}},       {{4096, 512}, {0}},
      {{64, 128, 96}, {0, 1}}, {{64, 128, 96}, {1}}, {{32, 50, 40, 20}, {0, 2}}};
  for (const Case &c : cases) {
    OwnedTensor x = randomF32(c.shape, 9);
    Shape out = c.shape;
    for (int64_t a : c.axes)
      out[a] = 1;
    for (std::string kind : {"sum", "mean", "max"}) {
      std::vector<double> y = runKernel("reduce_" + kind, {x}, {{DType::F32, out}},
                                        attrs({{"axes", c.axes}, {"keepdims", int64_t{1}}}))[0]
                                  .values();
      EXPECT_TRUE(closeTo(y, naiveReduce(x, c.axes, kind), 1e-5, 1e-4))
          << kind << " over " << formatShape(c.axes) << " of " << formatShape(c.shape);
    }
  }
}

TEST(LargeTensor, TransposesAndSlices) {
  OwnedTensor x = randomF32({8, 64, 16, 32}, 10);
  std::vector<int64_t> perm = {0, 2, 3, 1};
  Shape outShape = {8, 16, 32, 64};
  std::vector<double> y =
      runKernel("transpose", {x}, {{DType::F32, outShape}}, attrs({{"perm", perm}}))[0].values();
  for (int64_t a = 0; a < 8; ++a)
    for (int64_t b = 0; b < 16; ++b)
      for (int64_t c = 0; c < 32; ++c)
        for (int64_t d = 0; d < 64; ++d)
          ASSERT_EQ(y[((a * 16 + b) * 32 + c) * 64 + d],
                    x.as<float>()[((a * 64 + d) * 16 + b) * 32 + c]);
  OwnedTensor m = randomF32({1000, 900}, 11);
  std::vector<double> s = runKernel("slice", {m}, {{DType::F32, {334, 450}}},
                                    attrs({{"starts", std::vector<int64_t>{999, 1}},
                                           {"limits", std::vector<int64_t>{-1, 900}},
                                           {"steps", std::vector<int64_t>{-3, 2}}}))[0]
                              .values();
  for (int64_t i = 0; i < 334; ++i)
    for (int64_t j = 0; j < 450; ++j)
      ASSERT_EQ(s[i * 450 + j], m.as<float>()[(999 - 3 * i) * 900 + 1 + 2 * j]);
}

std::vector<double> naiveMatMul(const OwnedTensor &a, const OwnedTensor &b, int64_t batches,
                                bool broadcastB, int64_t m, int64_t k, int64_t n) {
  std::vector<double> c(batches * m * n, 0.0);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          c[(t * m + i) * n + j] +=
              a.at((t * m + i) * k + p) * b.at(((broadcastB ? 0 : t) * k + p) * n + j);
  return c;
}

TEST(LargeTensor, MatMulFoldedBatchedAndHalf) {
  OwnedTensor a = randomF32({3, 200, 300}, 12), w = randomF32({300, 250}, 13);
  EXPECT_TRUE(closeTo(runKernel("matmul", {a, w}, {{DType::F32, {3, 200, 250}}})[0].values(),
                      naiveMatMul(a, w, 3, true, 200, 300, 250), 1e-4, 1e-4));
  OwnedTensor q = randomF32({24, 128, 64}, 14), k = randomF32({24, 64, 128}, 15);
  EXPECT_TRUE(closeTo(runKernel("matmul", {q, k}, {{DType::F32, {24, 128, 128}}})[0].values(),
                      naiveMatMul(q, k, 24, false, 128, 64, 128), 1e-4, 1e-4));
  OwnedTensor big = randomF32({600, 500}, 16), other = randomF32({500, 400}, 17);
  EXPECT_TRUE(closeTo(runKernel("matmul", {big, other}, {{DType::F32, {600, 400}}})[0].values(),
                      naiveMatMul(big, other, 1, false, 600, 500, 400), 1e-4, 1e-4));
  OwnedTensor ah(DType::BF16, {2, 300, 200}), bh(DType::BF16, {200, 100});
  for (int64_t i = 0; i < ah.numElements(); ++i)
    ah.as<uint16_t>()[i] = floatToBFloat16(a.as<float>()[i]);
  for (int64_t i = 0; i < bh.numElements(); ++i)
    bh.as<uint16_t>()[i] = floatToBFloat16(w.as<float>()[i]);
  EXPECT_TRUE(closeTo(runKernel("matmul", {ah, bh}, {{DType::BF16, {2, 300, 100}}})[0].values(),
                      naiveMatMul(ah, bh, 2, true, 300, 200, 100), 1.6e-2, 1e-2));
}

TEST(LargeTensor, ConvolutionWithColumnBlocks) {
  // 64 channels * 9 taps * 172^2 positions is over the 2^24-element column scratch, so the
  // columns are built in blocks of output rows.
  const int64_t c = 64, h = 174, m = 3, group = 1;
  OwnedTensor x = randomF32({1, c, h, h}, 18), w = randomF32({m, c / group, 3, 3}, 19),
              b = randomF32({m}, 20);
  const int64_t out = h - 2;
  std::vector<double> y = runKernel("conv", {x, w, b}, {{DType::F32, {1, m, out, out}}},
                                    attrs({{"strides", std::vector<int64_t>{1, 1}},
                                           {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                                           {"dilations", std::vector<int64_t>{1, 1}},
                                           {"group", group}}))[0]
                              .values();
  std::vector<double> expected(m * out * out);
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < out; ++i)
      for (int64_t j = 0; j < out; ++j) {
        double sum = b.as<float>()[o];
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t ki = 0; ki < 3; ++ki)
            for (int64_t kj = 0; kj < 3; ++kj)
              sum += x.as<float>()[(ch * h + i + ki) * h + j + kj] *
                     w.as<float>()[((o * c + ch) * 3 + ki) * 3 + kj];
        expected[(o * out + i) * out + j] = sum;
      }
  EXPECT_TRUE(closeTo(y, expected, 1e-4, 1e-4));
}

TEST(LargeTensor, GatherConcatSplitRoundTrip) {
  OwnedTensor table = randomF32({50000, 64}, 21);
  OwnedTensor ids(DType::I64, {4096});
  std::mt19937 random(22);
  for (int64_t i = 0; i < 4096; ++i)
    ids.as<int64_t>()[i] = static_cast<int64_t>(random() % 100000) - 50000;
  std::vector<double> y = runKernel("gather", {table, ids}, {{DType::F32, {4096, 64}}},
                                    attrs({{"axis", int64_t{0}}}))[0]
                              .values();
  for (int64_t i = 0; i < 4096; ++i) {
    int64_t row = ids.as<int64_t>()[i] < 0 ? ids.as<int64_t>()[i] + 50000 : ids.as<int64_t>()[i];
    for (int64_t j = 0; j < 64; ++j)
      ASSERT_EQ(y[i * 64 + j], table.as<float>()[row * 64 + j]);
  }
  Attributes split = attrs({{"axis", int64_t{1}}, {"sizes", std::vector<int64_t>{10, 0, 54}}});
  std::vector<OwnedTensor> pieces = runKernel(
      "split", {table},
      {{DType::F32, {50000, 10}}, {DType::F32, {50000, 0}}, {DType::F32, {50000, 54}}}, split);
  std::vector<OwnedTensor> joined =
      runKernel("concat", pieces, {{DType::F32, {50000, 64}}}, attrs({{"axis", int64_t{1}}}));
  EXPECT_EQ(joined[0].bytes, table.bytes);
}

TEST(LargeTensor, CastAndDropoutOverThreads) {
  OwnedTensor x = randomF32({2000000}, 23, 100.0);
  std::vector<OwnedTensor> h = runKernel("cast", {x}, {{DType::F16, {2000000}}});
  for (int64_t i = 0; i < 2000000; ++i)
    ASSERT_EQ(h[0].as<uint16_t>()[i], floatToHalf(x.as<float>()[i])) << i;
  std::vector<double> d = runKernel("dropout", {x}, {{DType::F32, {2000000}}},
                                    attrs({{"ratio", 0.25}, {"seed", int64_t{3}}}))[0]
                              .values();
  int64_t kept = 0;
  for (int64_t i = 0; i < 2000000; ++i) {
    if (d[i] == 0)
      continue;
    ++kept;
    ASSERT_EQ(static_cast<float>(d[i]), x.as<float>()[i] * static_cast<float>(1.0 / 0.75));
  }
  EXPECT_NEAR(kept / 2e6, 0.75, 0.002);
}

} // namespace
} // namespace memc::kernels::testing
