//===- Conv2dReference.h - a 2-D convolution as plain f64 loops -*- C++ -*-===//
//
// The sizes of a 2-D convolution and its gradients as plain loops, which the backward kernels'
// blocked paths (KernelBackwardLargeTest.cpp) and the oneDNN paths (OneDnnConvolutionTest.cpp)
// are compared with.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_KERNELS_CONV2DREFERENCE_H
#define MEMC_TEST_KERNELS_CONV2DREFERENCE_H

#include "KernelTestSupport.h"

namespace memc::kernels::testing {

using Ints = std::vector<int64_t>;

/// A 2-D convolution's sizes, and its input gradient and weight gradient as plain loops.
struct Conv2d {
  int64_t n, c, h, w, m, kh, kw, group;
  Ints strides, pads, dilations;
  int64_t oh = 0, ow = 0;

  void finish() {
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1;
    ow = (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1;
  }
  Shape input() const { return {n, c, h, w}; }
  Shape weight() const { return {m, c / group, kh, kw}; }
  Shape output() const { return {n, m, oh, ow}; }
  Attributes attributes() const {
    return attrs(
        {{"strides", strides}, {"pads", pads}, {"dilations", dilations}, {"group", group}});
  }

  /// Calls visit(input index, weight index, output index) for every multiply of the forward.
  template <typename Visit> void forEachTap(Visit visit) const {
    int64_t cg = c / group, mg = m / group;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x)
            for (int64_t k = 0; k < cg; ++k)
              for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j) {
                  int64_t iy = y * strides[0] + i * dilations[0] - pads[0];
                  int64_t ix = x * strides[1] + j * dilations[1] - pads[1];
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                    continue;
                  int64_t channel = (o / mg) * cg + k;
                  visit(((b * c + channel) * h + iy) * w + ix, ((o * cg + k) * kh + i) * kw + j,
                        ((b * m + o) * oh + y) * ow + x);
                }
  }

  void expectGradients(uint32_t seed) const {
    OwnedTensor x = randomF32(input(), seed), wt = randomF32(weight(), seed + 1);
    OwnedTensor g = randomF32(output(), seed + 2);
    std::vector<double> dx(x.numElements(), 0.0), dw(wt.numElements(), 0.0);
    forEachTap([&](int64_t xi, int64_t wi, int64_t yi) {
      dx[xi] += static_cast<double>(g.as<float>()[yi]) * wt.as<float>()[wi];
      dw[wi] += static_cast<double>(g.as<float>()[yi]) * x.as<float>()[xi];
    });
    Attributes a = attributes();
    EXPECT_TRUE(
        closeTo(runKernel("conv_grad_input", {g, wt}, {{DType::F32, input()}}, a)[0].values(), dx,
                1e-4, 1e-4));
    EXPECT_TRUE(
        closeTo(runKernel("conv_grad_weight", {g, x}, {{DType::F32, weight()}}, a)[0].values(), dw,
                1e-4, 1e-3));
  }
};

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_CONV2DREFERENCE_H
