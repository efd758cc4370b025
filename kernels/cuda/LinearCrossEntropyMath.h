//===- LinearCrossEntropyMath.h - the row arithmetic of the fused loss -*- C++ -*-===//
//
// The per-row and per-element steps of the CUDA linear_cross_entropy kernels
// (LinearCrossEntropy.cu), shared with the host test that checks them against the CPU kernel
// (test/kernels/cuda/MatMulMathTest.cpp). A row's logits are the product's plus the bias; a
// thread takes the classes first, first + step, ... of its row, and the block combines the
// threads' maxima and f64 sums of exponentials. Everything else is as the CPU kernel
// (kernels/cpu/LinearCrossEntropy.cpp) computes it: the f64 logsumexp, the loss and the
// logits' gradient here; the labels' classes (targetOf), the NaN-skipping maximum, the mean over
// the counted rows and the gradient scale are cross_entropy's (RowMath.h), as the CPU kernel
// shares cross_entropy's (kernels/cpu/CrossEntropyRows.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_LINEARCROSSENTROPYMATH_H
#define MEMC_KERNELS_CUDA_LINEARCROSSENTROPYMATH_H

#include "kernels/HostDevice.h"
#include "kernels/StoredElement.h"
#include "kernels/cuda/RowMath.h"

#include <cmath>
#include <cstdint>

namespace memc::kernels::cuda {

/// Class c's logit: the product's, plus the bias's when there is one (null: none).
template <typename T>
MEMC_HOST_DEVICE inline float biasedLogit(const float *row, const T *bias, int64_t c) {
  return bias ? row[c] + loadFloat(bias, c) : row[c];
}

/// The largest logit of classes first, first + step, ... (-inf when none).
template <typename T>
MEMC_HOST_DEVICE inline float partialMax(const float *row, const T *bias, int64_t classes,
                                         int64_t first, int64_t step) {
  float max = -INFINITY;
  for (int64_t c = first; c < classes; c += step)
    max = rows::maxSkippingNaN(max, biasedLogit(row, bias, c));
  return max;
}

/// The sum in f64 of e^(logit - max) over classes first, first + step, ...
template <typename T>
MEMC_HOST_DEVICE inline double partialSumExp(const float *row, const T *bias, int64_t classes,
                                             int64_t first, int64_t step, float max) {
  double sum = 0.0;
  for (int64_t c = first; c < classes; c += step)
    sum += expf(biasedLogit(row, bias, c) - max);
  return sum;
}

/// The row's logsumexp in f64 from its maximum and its sum of exponentials.
MEMC_HOST_DEVICE inline double rowLogSumExp(double sumExp, float max) { return log(sumExp) + max; }

/// A row's loss: logsumexp minus the label's logit; 0 for a row without a class (target < 0).
MEMC_HOST_DEVICE inline double rowLoss(double logSumExp, float targetLogit, int64_t target) {
  return target < 0 ? 0.0 : logSumExp - targetLogit;
}

/// A logit's gradient, scale * (e^(logit - logsumexp) - [class is the target]); 0 for every
/// class of a row without a class (target < 0).
MEMC_HOST_DEVICE inline float logitGradient(float logit, float logSumExp, float scale, int64_t c,
                                            int64_t target) {
  if (target < 0)
    return 0.0f;
  const float gradient = expf(logit - logSumExp) * scale;
  return c == target ? gradient - scale : gradient;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_LINEARCROSSENTROPYMATH_H
