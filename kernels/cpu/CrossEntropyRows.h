//===- CrossEntropyRows.h - what the cross-entropy kernels share -*- C++ -*-===//
//
// The label validation and the row log-sum-exp pieces of cross_entropy (Losses.cpp, where they
// are defined) that linear_cross_entropy (LinearCrossEntropy.cpp) runs on its tiles of logits,
// so both kernels accept the same labels and sum the same way.
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

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CROSSENTROPYROWS_H
