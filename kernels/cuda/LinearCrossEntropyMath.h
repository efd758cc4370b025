//===- LinearCrossEntropyMath.h - the row arithmetic of the fused loss -*- C++ -*-===//
//
// The per-row and per-element steps of the CUDA linear_cross_entropy kernels
// (LinearCrossEntropy.cu), shared with the host test that checks them against the CPU kernel
// (test/kernels/cuda/MatMulMathTest.cpp). A row's logits are the product's plus the bias; a
// thread takes the classes first, first + step, ... of its row, and the block combines the
// threads' maxima and f64 sums of exponentials. Everything else is as the CPU kernel
// (kernels/cpu/LinearCrossEntropy.cpp) computes it: labels, the f64 logsumexp, the loss and
// the gradient scale (grad / counted rows).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_LINEARCROSSENTROPYMATH_H
#define MEMC_KERNELS_CUDA_LINEARCROSSENTROPYMATH_H

#include "kernels/Float16.h"
#include "kernels/HostDevice.h"

#include <cmath>
#include <cstdint>

namespace memc::kernels::cuda {

/// A float tensor's element as f32 (16-bit types widen exactly).
MEMC_HOST_DEVICE inline float widen(float value) { return value; }
MEMC_HOST_DEVICE inline float widen(Half value) { return halfToFloat(value.bits); }
MEMC_HOST_DEVICE inline float widen(BFloat16 value) { return bfloat16ToFloat(value.bits); }

/// A row's class from its label: -1 when the label is ignore_index; false when the label is
/// neither that nor a class in [0, classes).
MEMC_HOST_DEVICE inline bool labelTarget(int64_t label, int64_t ignoreIndex, int64_t classes,
                                         int64_t &target) {
  target = -1;
  if (label == ignoreIndex)
    return true;
  if (label < 0 || label >= classes)
    return false;
  target = label;
  return true;
}

/// Class c's logit: the product's, plus the bias's when there is one (null: none).
template <typename T>
MEMC_HOST_DEVICE inline float biasedLogit(const float *row, const T *bias, int64_t c) {
  return bias ? row[c] + widen(bias[c]) : row[c];
}

/// The larger of two logits, NaNs skipped (as the CPU's maxOf).
MEMC_HOST_DEVICE inline float maxSkippingNaN(float a, float b) { return b > a ? b : a; }

/// The largest logit of classes first, first + step, ... (-inf when none).
template <typename T>
MEMC_HOST_DEVICE inline float partialMax(const float *row, const T *bias, int64_t classes,
                                         int64_t first, int64_t step) {
  float max = -INFINITY;
  for (int64_t c = first; c < classes; c += step)
    max = maxSkippingNaN(max, biasedLogit(row, bias, c));
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

/// A row's loss: logsumexp minus the label's logit; 0 for an ignored row (target -1).
MEMC_HOST_DEVICE inline double rowLoss(double logSumExp, float targetLogit, int64_t target) {
  return target < 0 ? 0.0 : logSumExp - targetLogit;
}

/// The loss: the mean over the counted rows (0 when none is counted).
MEMC_HOST_DEVICE inline float meanLoss(double total, int64_t counted) {
  return counted == 0 ? 0.0f : static_cast<float>(total / static_cast<double>(counted));
}

/// What the incoming gradient becomes per counted row: grad / counted (0 when none).
MEMC_HOST_DEVICE inline float gradientScale(float grad, int64_t counted) {
  return counted == 0 ? 0.0f : grad / static_cast<float>(counted);
}

/// A logit's gradient, scale * (e^(logit - logsumexp) - [class is the target]); 0 for every
/// class of an ignored row (target -1).
MEMC_HOST_DEVICE inline float logitGradient(float logit, float logSumExp, float scale, int64_t c,
                                            int64_t target) {
  if (target < 0)
    return 0.0f;
  const float gradient = expf(logit - logSumExp) * scale;
  return c == target ? gradient - scale : gradient;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_LINEARCROSSENTROPYMATH_H
