//===- PoolWindowChecks.h - the shape rule of pooling windows ---*- C++ -*-===//
//
// max_pool, avg_pool and their gradients take the same window attributes; this is their check,
// shared by the forward and backward op checks.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_OPS_POOLWINDOWCHECKS_H
#define MEMC_KERNELS_OPS_POOLWINDOWCHECKS_H

#include "kernels/ops/CallChecks.h"

#include <string>
#include <vector>

namespace memc::kernels {

/// The window attributes of a max_pool (or, `average`, avg_pool) call are well formed and give
/// `output` (named `outputRole` in messages) for `input`, of rank 3 or more.
inline bool checkPoolWindows(const TensorView &input, const TensorView &output, bool average,
                             const Attributes &attributes, const std::string &outputRole,
                             std::string &error) {
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode, countIncludePad;
  Shape expected;
  return requireInts(attributes, "kernel_shape", kernel, error) &&
         requireInts(attributes, "strides", strides, error) &&
         requireInts(attributes, "pads", pads, error) &&
         requireInts(attributes, "dilations", dilations, error) &&
         requireBool(attributes, "ceil_mode", ceilMode, error) &&
         (!average || requireBool(attributes, "count_include_pad", countIncludePad, error)) &&
         windowShape(input.shape, input.shape[1], kernel, strides, pads, dilations, ceilMode,
                     expected, error) &&
         checkShape(output, expected, outputRole, error);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_POOLWINDOWCHECKS_H
