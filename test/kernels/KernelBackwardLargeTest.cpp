//===- KernelBackwardLargeTest.cpp - backward kernels' blocked paths -------===//
//
// The reference cases are small, so they take the backward kernels' single-block paths. These
// tensors are large enough for column blocks within an image (conv_grad_input) and across
// images (conv_grad_weight), several row blocks (layer_norm_grad), tasks spread over threads
// (depthwise convolutions) and interleaved softmax columns, and are compared with plain f64
// loops written here; attention's one-pass backward is compared with its two passes, bit for
// bit. ctest runs them with MEMC_NUM_THREADS=4.
//
//===----------------------------------------------------------------------===//
#include "Conv2dReference.h"
#include "KernelTestSupport.h"

#include <algorithm>
#include <random>

namespace memc::kernels::testing {
namespace {

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

TEST(KernelBackwardLarge, ConvGradInputInColumnBlocks) {
  // 16 * 9 column rows of 256 positions: several blocks of output rows per image. An image of
  // 900 rows: oneDNN's blocked copies would pass kOneDnnMaxF32WorkspaceBytes, so memc's column
  // blocks run it.
  Conv2d conv{1, 16, 900, 256, 4, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  conv.finish();
  conv.expectGradients(1);
  Conv2d strided{1, 16, 900, 256, 4, 3, 3, 1, {1, 2}, {2, 1, 2, 1}, {2, 1}};
  strided.finish();
  strided.expectGradients(4);
}

TEST(KernelBackwardLarge, ConvGradWeightInBlocksAcrossImages) {
  Conv2d conv{6, 16, 40, 256, 4, 3, 3, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  conv.finish();
  conv.expectGradients(7);
}

TEST(KernelBackwardLarge, DepthwiseConvGradsSpreadOverThreads) {
  Conv2d conv{8, 32, 20, 20, 64, 3, 3, 32, {2, 1}, {1, 1, 0, 1}, {1, 2}};
  conv.finish();
  conv.expectGradients(10);
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

TEST(KernelBackwardLarge, LayerNormGradInRowBlocks) {
  const int64_t rows = 300, width = 200;
  OwnedTensor g = randomF32({rows, width}, 20), x = randomF32({rows, width}, 21, 3.0);
  OwnedTensor scale = randomF32({width}, 22);
  std::vector<double> dx(rows * width), dscale(width, 0.0), dbias(width, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *in = x.as<float>() + r * width, *dy = g.as<float>() + r * width;
    double mean = 0, var = 0, sumG = 0, sumGX = 0;
    for (int64_t j = 0; j < width; ++j)
      mean += in[j] / static_cast<double>(width);
    for (int64_t j = 0; j < width; ++j)
      var += (in[j] - mean) * (in[j] - mean) / width;
    double rstd = 1.0 / std::sqrt(var + 1e-5);
    for (int64_t j = 0; j < width; ++j) {
      double xhat = (in[j] - mean) * rstd, gj = dy[j] * static_cast<double>(scale.as<float>()[j]);
      sumG += gj;
      sumGX += gj * xhat;
      dscale[j] += dy[j] * xhat;
      dbias[j] += dy[j];
    }
    for (int64_t j = 0; j < width; ++j) {
      double xhat = (in[j] - mean) * rstd, gj = dy[j] * static_cast<double>(scale.as<float>()[j]);
      dx[r * width + j] = rstd * (gj - sumG / width - xhat * sumGX / width);
    }
  }
  std::vector<OwnedTensor> out =
      runKernel("layer_norm_grad", {g, x, scale},
                {{DType::F32, {rows, width}}, {DType::F32, {width}}, {DType::F32, {width}}},
                attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}}));
  EXPECT_TRUE(closeTo(out[0].values(), dx, 1e-4, 1e-5));
  EXPECT_TRUE(closeTo(out[1].values(), dscale, 1e-4, 1e-4));
  EXPECT_TRUE(closeTo(out[2].values(), dbias, 1e-4, 1e-4));
}

TEST(KernelBackwardLarge, BatchNormGrad) {
  const int64_t n = 16, c = 8, spatial = 1024;
  OwnedTensor g = randomF32({n, c, 32, 32}, 30), x = randomF32({n, c, 32, 32}, 31, 2.0);
  OwnedTensor scale = randomF32({c}, 32);
  std::vector<double> dx(n * c * spatial), dscale(c), dbias(c);
  for (int64_t k = 0; k < c; ++k) {
    auto at = [&](const OwnedTensor &t, int64_t b, int64_t s) {
      return static_cast<double>(t.as<float>()[(b * c + k) * spatial + s]);
    };
    double count = n * spatial, mean = 0, var = 0, sumDy = 0, dot = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s)
        mean += at(x, b, s) / count;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s) {
        var += (at(x, b, s) - mean) * (at(x, b, s) - mean) / count;
        sumDy += at(g, b, s);
        dot += at(g, b, s) * (at(x, b, s) - mean);
      }
    double rstd = 1.0 / std::sqrt(var + 1e-5);
    dscale[k] = dot * rstd;
    dbias[k] = sumDy;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t s = 0; s < spatial; ++s)
        dx[(b * c + k) * spatial + s] =
            (at(g, b, s) - sumDy / count - (at(x, b, s) - mean) * dot * rstd * rstd / count) *
            rstd * scale.as<float>()[k];
  }
  std::vector<OwnedTensor> out =
      runKernel("batch_norm_grad", {g, x, scale},
                {{DType::F32, {n, c, 32, 32}}, {DType::F32, {c}}, {DType::F32, {c}}},
                attrs({{"epsilon", 1e-5}}));
  EXPECT_TRUE(closeTo(out[0].values(), dx, 1e-4, 1e-5));
  EXPECT_TRUE(closeTo(out[1].values(), dscale, 1e-4, 1e-3));
  EXPECT_TRUE(closeTo(out[2].values(), dbias, 1e-4, 1e-3));
}

TEST(KernelBackwardLarge, SoftmaxGradsAlongRowsAndColumns) {
  const Shape shape = {64, 300, 3};
  OwnedTensor g = randomF32(shape, 40), logits = randomF32(shape, 41, 2.0);
  for (int64_t axis : {1, 2}) {
    Attributes a = attrs({{"axis", axis}});
    OwnedTensor y = runKernel("softmax", {logits}, {{DType::F32, shape}}, a)[0];
    OwnedTensor logY = runKernel("log_softmax", {logits}, {{DType::F32, shape}}, a)[0];
    int64_t length = shape[axis], inner = axis == 1 ? 3 : 1;
    std::vector<double> dSoftmax(y.numElements()), dLogSoftmax(y.numElements());
    for (int64_t row = 0; row < y.numElements() / length; ++row) {
      int64_t base = (row / inner) * length * inner + row % inner;
      double sumGY = 0, sumG = 0;
      for (int64_t i = 0; i < length; ++i) {
        int64_t k = base + i * inner;
        sumGY += static_cast<double>(g.as<float>()[k]) * y.as<float>()[k];
        sumG += g.as<float>()[k];
      }
      for (int64_t i = 0; i < length; ++i) {
        int64_t k = base + i * inner;
        dSoftmax[k] = y.as<float>()[k] * (g.as<float>()[k] - sumGY);
        dLogSoftmax[k] =
            g.as<float>()[k] - std::exp(static_cast<double>(logY.as<float>()[k])) * sumG;
      }
    }
    EXPECT_TRUE(closeTo(runKernel("softmax_grad", {g, y}, {{DType::F32, shape}}, a)[0].values(),
                        dSoftmax, 1e-4, 1e-6));
    EXPECT_TRUE(
        closeTo(runKernel("log_softmax_grad", {g, logY}, {{DType::F32, shape}}, a)[0].values(),
                dLogSoftmax, 1e-4, 1e-5));
  }
}

//===----------------------------------------------------------------------===//
// Embedding gradient and loss
//===----------------------------------------------------------------------===//

TEST(KernelBackwardLarge, EmbeddingGradient) {
  const int64_t vocabulary = 1000, width = 32;
  OwnedTensor ids(DType::I64, {64, 80});
  std::mt19937 random(50);
  for (int64_t i = 0; i < ids.numElements(); ++i) // few distinct ids: many repeats
    ids.as<int64_t>()[i] = static_cast<int64_t>(random() % 200) - 100;
  OwnedTensor g = randomF32({64, 80, width}, 51);
  std::vector<double> expected(vocabulary * width, 0.0);
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    int64_t row = ids.as<int64_t>()[i];
    row += row < 0 ? vocabulary : 0;
    for (int64_t j = 0; j < width; ++j)
      expected[row * width + j] += g.as<float>()[i * width + j];
  }
  EXPECT_TRUE(closeTo(runKernel("gather_grad", {g, ids}, {{DType::F32, {vocabulary, width}}},
                                attrs({{"axis", int64_t{0}}}))[0]
                          .values(),
                      expected, 1e-5, 1e-5));
}

TEST(KernelBackwardLarge, CrossEntropyOverManyRows) {
  const int64_t rows = 512, classes = 1000;
  OwnedTensor logits = randomF32({rows, classes}, 60, 3.0), labels(DType::I64, {rows});
  std::mt19937 random(61);
  for (int64_t r = 0; r < rows; ++r)
    labels.as<int64_t>()[r] = r % 7 == 0 ? -100 : static_cast<int64_t>(random() % classes);
  double total = 0, counted = 0;
  std::vector<double> dlogits(rows * classes, 0.0), softmax(classes);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t label = labels.as<int64_t>()[r];
    if (label < 0)
      continue;
    const float *row = logits.as<float>() + r * classes;
    double max = *std::max_element(row, row + classes), sum = 0;
    for (int64_t k = 0; k < classes; ++k)
      sum += std::exp(row[k] - max);
    total += std::log(sum) + max - row[label];
    ++counted;
    for (int64_t k = 0; k < classes; ++k)
      dlogits[r * classes + k] = std::exp(row[k] - max) / sum - (k == label);
  }
  for (double &v : dlogits)
    v *= 0.5 / counted;
  Attributes a = attrs({{"ignore_index", int64_t{-100}}});
  EXPECT_NEAR(runKernel("cross_entropy", {logits, labels}, {{DType::F32, {}}}, a)[0].at(0),
              total / counted, 1e-5 * total / counted);
  EXPECT_TRUE(closeTo(runKernel("cross_entropy_grad", {f32({}, {0.5}), logits, labels},
                                {{DType::F32, {rows, classes}}}, a)[0]
                          .values(),
                      dlogits, 1e-4, 1e-9));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Images [first, first + count) of a [N, ...] tensor, as a tensor of their own.
OwnedTensor batchSlice(const OwnedTensor &tensor, int64_t first, int64_t count) {
  Shape shape = tensor.shape;
  shape[0] = count;
  OwnedTensor slice(tensor.dtype, shape);
  size_t bytes = slice.bytes.size();
  std::copy_n(tensor.bytes.begin() + static_cast<ptrdiff_t>(first * bytes), bytes,
              slice.bytes.begin());
  return slice;
}

TEST(KernelBackwardLarge, AttentionGradOnePassIsTheTwoPassesBitForBit) {
  // 16 sequences of one head fill the 16 slots, so the backward takes one pass over them; each
  // sequence alone takes two. Sequences are independent: every slice must be the same bits.
  const int64_t n = 16, t = 70, d = 8;
  const Shape heads = {n, 1, t, d}, rows = {n, 1, t};
  for (DType dtype : {DType::F32, DType::BF16})
    for (int64_t causal : {0, 1}) {
      Attributes a = attrs({{"causal", causal}, {"scale", 0.35}});
      auto random = [&](uint32_t seed) {
        OwnedTensor values = randomF32(heads, seed);
        return tensor(dtype, heads, values.values());
      };
      OwnedTensor q = random(1), k = random(2), v = random(3), g = random(4);
      std::vector<OwnedTensor> forward =
          runKernel("flash_attention", {q, k, v}, {{dtype, heads}, {DType::F32, rows}}, a);
      std::vector<OwnedTensor> inputs = {g, q, k, v, forward[0], forward[1]};
      std::vector<OwnedTensor> all = runKernel("flash_attention_grad", inputs,
                                               {{dtype, heads}, {dtype, heads}, {dtype, heads}}, a);
      for (int64_t b = 0; b < n; ++b) {
        std::vector<OwnedTensor> one;
        for (const OwnedTensor &input : inputs)
          one.push_back(batchSlice(input, b, 1));
        Shape single = {1, 1, t, d};
        std::vector<OwnedTensor> alone = runKernel(
            "flash_attention_grad", one, {{dtype, single}, {dtype, single}, {dtype, single}}, a);
        for (size_t output = 0; output < 3; ++output)
          EXPECT_TRUE(alone[output].bytes == batchSlice(all[output], b, 1).bytes)
              << "sequence " << b << ", output " << output << ", causal " << causal;
      }
    }
}

} // namespace
} // namespace memc::kernels::testing
