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

/// The most taps a window of max_pool_with_argmax / max_pool_grad_argmax may have: its saved
/// tap index is one byte.
inline constexpr int64_t kMaxArgmaxWindowTaps = 256;

/// The taps of a whole window (the product of kernel_shape, padding included); 0 when the
/// attribute is missing (checkPoolWindows reports that).
inline int64_t windowTapCount(const Attributes &attributes) {
  std::vector<int64_t> kernel;
  if (!attributes.getInts("kernel_shape", kernel))
    return 0;
  int64_t taps = 1;
  for (int64_t k : kernel)
    taps *= k;
  return taps;
}

/// The window attributes are checkPoolWindows's for `input` and `output`, the windows have at
/// most kMaxArgmaxWindowTaps taps, and `taps` (named `tapsRole`) is u8 of `output`'s shape.
inline bool checkArgmaxPoolWindows(const TensorView &input, const TensorView &output,
                                   const TensorView &taps, const Attributes &attributes,
                                   const std::string &outputRole, const std::string &tapsRole,
                                   std::string &error) {
  if (!checkPoolWindows(input, output, false, attributes, outputRole, error) ||
      !checkDType(taps, {DType::U8}, tapsRole, error) ||
      !checkShape(taps, output.shape, tapsRole, error))
    return false;
  int64_t count = windowTapCount(attributes);
  if (count > kMaxArgmaxWindowTaps) {
    error = "a window has " + std::to_string(count) + " taps; a one-byte argmax allows at most " +
            std::to_string(kMaxArgmaxWindowTaps);
    return false;
  }
  return true;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_POOLWINDOWCHECKS_H
