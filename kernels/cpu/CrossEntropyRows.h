//===- CrossEntropyRows.h - what the cross-entropy kernels share -*- C++ -*-===//
//
// The label validation and the row log-sum-exp pieces of cross_entropy (Losses.cpp, where they
// are defined) that linear_cross_entropy (LinearCrossEntropy.cpp) runs on its tiles of logits,
// so both kernels accept the same labels and sum the same way; and the fused gradient's row.
// flash_attention's online softmax takes its row maxima from maxOf too.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CROSSENTROPYROWS_H
#define MEMC_KERNELS_CPU_CROSSENTROPYROWS_H

#include "kernels/Kernel.h"

#include <cstdint>
#include <string>

namespace memc::kernels {

/// Each row's label as a class index, -1 for an ignored row; false with a message for a label
/// outside [0, classes) that is not ignore_index. `counted` is the number of rows not ignored.
bool readLabels(const TensorView &labels, int64_t classes, int64_t ignoreIndex, int64_t *targets,
                int64_t &counted, std::string &error);

/// The largest of x[0, n), NaNs skipped (-inf if none).
float maxOf(const float *x, int64_t n);

/// Sum over x[0, n) of e^(x[i] - max) in f64; also stores the exponentials in y unless it is
/// null (y may be x).
double sumExp(const float *x, float *y, int64_t n, float max);

/// linear_cross_entropy_grad's row of logits, in place, into their gradient given the row's
/// logsumexp: scale * (e^(logit - logsumexp) - onehot), the label's column being `target` (or
/// outside [0, n) when the label is in another chunk of classes). Probabilities below the
/// smallest normal float become 0: as subnormal operands of the tile's products each would cost
/// a microcode assist per multiply (the GPT-2 bench model's first steps, logits 80 and more
/// apart, ran the gradient at 9 GFLOP/s instead of 115), and what they would add is below any
/// sum's rounding.
void logitsGradRow(float *row, int64_t n, float logsumexp, float scale, int64_t target);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CROSSENTROPYROWS_H
