//===- Normalization.cpp - softmax, log_softmax, layer_norm, batch_norm ---===//
//
// All compute in f32 with f64 sums (so f16/bf16 round once, at the store) and are threaded
// over independent rows or channels. Softmax subtracts the row maximum first; layer_norm and
// batch_norm (training) use the biased variance from a second pass over the data, which stays
// accurate when the mean is large next to the spread.
//
// Scale, bias and statistics may have any float type, independently of the input (the ops
// allow it); they are small and read once into f32 vectors.
//
// Scratch: std::vector (those vectors, softmax's exponentials of up to 2^20 elements per
// thread), for now; the plan will account for kernel workspace later.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t count = 1;
  for (size_t i = begin; i < end; ++i)
    count *= shape[i];
  return count;
}

//===----------------------------------------------------------------------===//
// softmax, log_softmax
//===----------------------------------------------------------------------===//

bool checkSoftmax(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkCall(call, 1, 1, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "output", error) ||
      !requireInt(attributesOf(call), "axis", axis, error))
    return false;
  if (axis < 0 || axis >= call.inputs[0].rank()) {
    error =
        "axis " + std::to_string(axis) + " out of range for " + formatShape(call.inputs[0].shape);
    return false;
  }
  return true;
}

/// Rows (or blocks of rows) longer than this recompute exp in the last pass instead of keeping
/// it in scratch.
constexpr int64_t kSoftmaxScratch = int64_t{1} << 20;

/// Softmax (or log-softmax) of one contiguous row x[0, n) into y.
template <typename T, bool Log>
void softmaxRow(const T *x, T *y, int64_t n, std::vector<float> &scratch) {
  auto larger = [](float a, float v) { return v > a ? v : a; };
  float max = foldLanes<float>(x, n, -std::numeric_limits<float>::infinity(), larger, larger);
  float *exps = nullptr; // exp(x - max), when kept
  if constexpr (std::is_same_v<T, float> && !Log) {
    exps = y; // x[i] is read before y[i] is written, so y may be x
  } else if (n <= kSoftmaxScratch) {
    scratch.resize(n);
    exps = scratch.data();
  }
  double sum;
  if (exps) {
    for (int64_t i = 0; i < n; ++i)
      exps[i] = std::exp(Element<T>::load(x[i]) - max);
    sum = sumLanes(exps, n);
  } else {
    sum = foldLanes<double>(
        x, n, 0.0, [max](double acc, float v) { return acc + std::exp(v - max); },
        [](double a, double b) { return a + b; });
  }
  if constexpr (Log) {
    float logSum = static_cast<float>(std::log(sum));
    for (int64_t i = 0; i < n; ++i)
      y[i] = Element<T>::store((Element<T>::load(x[i]) - max) - logSum);
  } else {
    float scale = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i)
      y[i] = Element<T>::store((exps ? exps[i] : std::exp(Element<T>::load(x[i]) - max)) * scale);
  }
}

/// The same for `width` interleaved rows x[j * stride + c], c in [0, width): rows along a
/// non-innermost axis, vectorized across c.
template <typename T, bool Log>
void softmaxColumns(const T *x, T *y, int64_t length, int64_t stride, int64_t width,
                    std::vector<float> &scratch, std::vector<float> &maxima,
                    std::vector<double> &sums) {
  maxima.assign(width, -std::numeric_limits<float>::infinity());
  sums.assign(width, 0.0);
  bool keep = length * width <= kSoftmaxScratch;
  if (keep)
    scratch.resize(length * width);
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      float v = Element<T>::load(x[j * stride + c]);
      maxima[c] = v > maxima[c] ? v : maxima[c];
    }
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      float e = std::exp(Element<T>::load(x[j * stride + c]) - maxima[c]);
      if (keep)
        scratch[j * width + c] = e;
      sums[c] += e;
    }
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      float v = Element<T>::load(x[j * stride + c]);
      float result;
      if constexpr (Log)
        result = v - maxima[c] - static_cast<float>(std::log(sums[c]));
      else
        result = (keep ? scratch[j * width + c] : std::exp(v - maxima[c])) *
                 static_cast<float>(1.0 / sums[c]);
      y[j * stride + c] = Element<T>::store(result);
    }
}

template <bool Log> bool runSoftmax(const KernelCall &call, std::string &) {
  const TensorView &input = call.inputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  int64_t outer = product(input.shape, 0, axis), length = input.shape[axis];
  int64_t inner = product(input.shape, axis + 1, input.shape.size());
  if (input.numElements() == 0)
    return true;
  // Tasks are (outer index, block of up to 64 interleaved rows).
  constexpr int64_t kBlock = 64;
  int64_t blocks = (inner + kBlock - 1) / kBlock;
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    int64_t grain = std::max<int64_t>(1, kExpensiveGrain / (length * std::min(inner, kBlock)));
    parallelFor(0, outer * blocks, grain, [&](int64_t begin, int64_t end) {
      std::vector<float> scratch, maxima;
      std::vector<double> sums;
      for (int64_t task = begin; task < end; ++task) {
        int64_t o = task / blocks, c0 = (task % blocks) * kBlock;
        int64_t offset = o * length * inner + c0;
        if (inner == 1)
          softmaxRow<T, Log>(x + offset, y + offset, length, scratch);
        else
          softmaxColumns<T, Log>(x + offset, y + offset, length, inner,
                                 std::min(kBlock, inner - c0), scratch, maxima, sums);
      }
    });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

bool checkEpsilon(const Attributes &attributes, std::string &error) {
  double epsilon;
  if (!requireFloat(attributes, "epsilon", epsilon, error))
    return false;
  if (!(epsilon >= 0.0) || std::isinf(epsilon)) {
    error = "epsilon must be finite and non-negative, got " + std::to_string(epsilon);
    return false;
  }
  return true;
}

bool checkLayerNorm(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkCall(call, 2, 3, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "output", error) ||
      !requireInt(attributesOf(call), "axis", axis, error) ||
      !checkEpsilon(attributesOf(call), error))
    return false;
  const Shape &shape = call.inputs[0].shape;
  if (axis < 0 || axis >= call.inputs[0].rank()) {
    error = "axis " + std::to_string(axis) + " out of range for " + formatShape(shape);
    return false;
  }
  Shape normalized(shape.begin() + axis, shape.end());
  const char *roles[] = {"input", "scale", "bias"};
  for (size_t i = 1; i < call.inputs.size(); ++i)
    if (!checkDType(call.inputs[i], kFloatTypes, roles[i], error) ||
        !checkShape(call.inputs[i], normalized, roles[i], error))
      return false;
  return true;
}

bool runLayerNorm(const KernelCall &call, std::string &) {
  const TensorView &input = call.inputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  int64_t rows = product(input.shape, 0, axis);
  int64_t width = product(input.shape, axis, input.shape.size());
  if (input.numElements() == 0)
    return true;
  std::vector<float> scale = loadAsFloat(call.inputs[1]);
  std::vector<float> bias =
      call.inputs.size() > 2 ? loadAsFloat(call.inputs[2]) : std::vector<float>(width, 0.0f);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    parallelFor(
        0, rows, std::max<int64_t>(1, kElementwiseGrain / width), [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const T *in = x + row * width;
            T *out = y + row * width;
            double mean = sumLanes(in, width) / width;
            double squares = squaredDeviationLanes(in, width, mean);
            double rstd = 1.0 / std::sqrt(squares / width + epsilon);
            // Centered in f64: an f32 mean would cost the spread its precision when
            // the mean is large next to it.
            for (int64_t j = 0; j < width; ++j) {
              float normalized = static_cast<float>((Element<T>::load(in[j]) - mean) * rstd);
              out[j] = Element<T>::store(normalized * scale[j] + bias[j]);
            }
          }
        });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

bool checkBatchNorm(const KernelCall &call, std::string &error) {
  double momentum;
  bool training;
  const Attributes &attributes = attributesOf(call);
  if (!checkCall(call, 5, 5, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkRankAtLeast(call.inputs[0], 2, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "output", error) ||
      !checkEpsilon(attributes, error) || !requireFloat(attributes, "momentum", momentum, error) ||
      !requireBool(attributes, "training", training, error))
    return false;
  const char *roles[] = {"input", "scale", "bias", "mean", "var"};
  for (size_t i = 1; i < 5; ++i)
    if (!checkDType(call.inputs[i], kFloatTypes, roles[i], error) ||
        !checkShape(call.inputs[i], {call.inputs[0].shape[1]}, roles[i], error))
      return false;
  return true;
}

bool runBatchNorm(const KernelCall &call, std::string &) {
  const TensorView &input = call.inputs[0];
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  bool training = attributesOf(call).intOr("training", 0) == 1;
  int64_t batch = input.shape[0], channels = input.shape[1];
  int64_t spatial = product(input.shape, 2, input.shape.size());
  if (input.numElements() == 0)
    return true;
  std::vector<float> scale = loadAsFloat(call.inputs[1]), bias = loadAsFloat(call.inputs[2]);
  std::vector<float> mean = loadAsFloat(call.inputs[3]), var = loadAsFloat(call.inputs[4]);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    int64_t perChannel = batch * spatial;
    parallelFor(0, channels, std::max<int64_t>(1, kElementwiseGrain / perChannel),
                [&](int64_t begin, int64_t end) {
                  for (int64_t c = begin; c < end; ++c) {
                    double channelMean = mean[c], channelVar = var[c];
                    if (training) {
                      double sum = 0.0, squares = 0.0;
                      for (int64_t n = 0; n < batch; ++n)
                        for (int64_t s = 0; s < spatial; ++s)
                          sum += Element<T>::load(x[(n * channels + c) * spatial + s]);
                      channelMean = sum / perChannel;
                      for (int64_t n = 0; n < batch; ++n)
                        for (int64_t s = 0; s < spatial; ++s) {
                          double d =
                              Element<T>::load(x[(n * channels + c) * spatial + s]) - channelMean;
                          squares += d * d;
                        }
                      channelVar = squares / perChannel;
                    }
                    // y = x * alpha + beta, as PyTorch folds it.
                    double alpha = scale[c] / std::sqrt(channelVar + epsilon);
                    float a = static_cast<float>(alpha);
                    float b = static_cast<float>(bias[c] - channelMean * alpha);
                    for (int64_t n = 0; n < batch; ++n) {
                      int64_t base = (n * channels + c) * spatial;
                      for (int64_t s = 0; s < spatial; ++s)
                        y[base + s] = Element<T>::store(Element<T>::load(x[base + s]) * a + b);
                    }
                  }
                });
  });
  return true;
}

} // namespace

void addNormalizationKernels(KernelTable &table) {
  table["softmax"] = Kernel{&checkSoftmax, &runSoftmax<false>};
  table["log_softmax"] = Kernel{&checkSoftmax, &runSoftmax<true>};
  table["layer_norm"] = Kernel{&checkLayerNorm, &runLayerNorm};
  table["batch_norm"] = Kernel{&checkBatchNorm, &runBatchNorm};
}

} // namespace memc::kernels
