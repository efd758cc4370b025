//===- NormalizationBackward.cpp - layer_norm_grad, batch_norm_grad -------===//
//
// Both recompute the statistics from the input exactly as the forward kernels do (f64 mean,
// biased variance from a second pass) and use PyTorch's formulas, with x^ = (x - mean) * rstd:
//   dx     = rstd * (dy * g - mean(dy * g) - x^ * mean(dy * g * x^))   (per normalized group)
//   dscale = sum(dy * x^),  dbias = sum(dy)                            (over the other axes)
// Sums run in f64, elements in f32 (row loops cloned per instruction set, as VectorMath.h
// does); f16/bf16 round once, at the store. The scale and its gradients may have a float type
// of their own, as in the forward ops.
//
// layer_norm_grad is threaded over blocks of rows; each block also sums its rows' dscale and
// dbias terms, and the blocks' sums are added in order, so the result does not depend on the
// thread count. batch_norm_grad is threaded over channels. Both read a row (a channel) whole
// before writing its dx, so dx may share the grad's or the input's buffer.
//
// Scratch: std::vector (the per-block sums, the scale), for now; the plan will account for
// kernel workspace later.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>

namespace memc::kernels {

namespace {

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

/// (grad, input, scale) -> (input_grad, scale_grad, bias_grad): grad, input and input_grad of
/// one float type and shape, scale and its gradients of one float type and `scaleShape`.
bool checkNormGradCall(const KernelCall &call, std::string &error) {
  return checkCall(call, 3, 3, 3, error) &&
         checkDType(call.inputs[1], kFloatTypes, "input", error) &&
         checkSameDType(call.inputs[0], call.inputs[1], "grad", "input", error) &&
         checkShape(call.inputs[0], call.inputs[1].shape, "grad", error) &&
         checkSameDType(call.outputs[0], call.inputs[1], "input_grad", "input", error) &&
         checkShape(call.outputs[0], call.inputs[1].shape, "input_grad", error) &&
         checkDType(call.inputs[2], kFloatTypes, "scale", error) &&
         checkEpsilon(attributesOf(call), error);
}

bool checkScaleShapes(const KernelCall &call, const Shape &scaleShape, std::string &error) {
  return checkShape(call.inputs[2], scaleShape, "scale", error) &&
         checkSameDType(call.outputs[1], call.inputs[2], "scale_grad", "scale", error) &&
         checkShape(call.outputs[1], scaleShape, "scale_grad", error) &&
         checkSameDType(call.outputs[2], call.inputs[2], "bias_grad", "scale", error) &&
         checkShape(call.outputs[2], scaleShape, "bias_grad", error);
}

void storeFloats(const std::vector<double> &values, const TensorView &tensor) {
  visitFloat(tensor.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *data = tensor.as<T>();
    for (size_t i = 0; i < values.size(); ++i)
      data[i] = Element<T>::store(static_cast<float>(values[i]));
  });
}

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

bool checkLayerNormGrad(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkNormGradCall(call, error) || !requireInt(attributesOf(call), "axis", axis, error))
    return false;
  const Shape &shape = call.inputs[1].shape;
  if (axis < 0 || axis >= call.inputs[1].rank()) {
    error = "axis " + std::to_string(axis) + " out of range for " + formatShape(shape);
    return false;
  }
  return checkScaleShapes(call, Shape(shape.begin() + axis, shape.end()), error);
}

/// At most this many blocks of rows (each with its own dscale and dbias sums).
constexpr int64_t kMaxRowBlocks = 64;

/// One row's dx, with its dscale and dbias terms added to `scaleSums` and `biasSums`.
/// `normalized` and `scaled` are f32 scratch of the width.
template <typename T>
MEMC_VECTOR_CLONES void layerNormGradRow(const T *dy, const T *x, T *dx, int64_t width,
                                         double epsilon, const float *scale,
                                         double *__restrict scaleSums, double *__restrict biasSums,
                                         float *__restrict normalized, float *__restrict scaled) {
  double mean = sumLanes(x, width) / width;
  double rstd = 1.0 / std::sqrt(squaredDeviationLanes(x, width, mean) / width + epsilon);
  for (int64_t j = 0; j < width; ++j) {
    float grad = Element<T>::load(dy[j]);
    normalized[j] = static_cast<float>((Element<T>::load(x[j]) - mean) * rstd);
    scaled[j] = grad * scale[j];
    scaleSums[j] += static_cast<double>(grad) * normalized[j];
    biasSums[j] += grad;
  }
  // sum(dy * scale) and sum(dy * scale * x^), in kLanes lanes as sumLanes.
  double sums[2][kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= width; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      sums[0][l] += scaled[j + l];
      sums[1][l] += static_cast<double>(scaled[j + l]) * normalized[j + l];
    }
  for (int64_t l = 0; j < width; ++j, ++l) {
    sums[0][l] += scaled[j];
    sums[1][l] += static_cast<double>(scaled[j]) * normalized[j];
  }
  for (int64_t l = 1; l < kLanes; ++l) {
    sums[0][0] += sums[0][l];
    sums[1][0] += sums[1][l];
  }
  float meanScaled = static_cast<float>(sums[0][0] / width);
  float meanProjection = static_cast<float>(sums[1][0] / width);
  float factor = static_cast<float>(rstd);
  for (j = 0; j < width; ++j)
    dx[j] = Element<T>::store(factor * (scaled[j] - meanScaled - normalized[j] * meanProjection));
}

bool runLayerNormGrad(const KernelCall &call, std::string &) {
  const TensorView &input = call.inputs[1];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  int64_t rows = 1, width = 1;
  for (int64_t d = 0; d < input.rank(); ++d)
    (d < axis ? rows : width) *= input.shape[d];
  if (width == 0)
    return true;
  // Blocks of rows fixed by the shape alone, so the sums' order is too.
  int64_t rowsPerBlock = std::max<int64_t>(1, kElementwiseGrain / width);
  rowsPerBlock = std::max(rowsPerBlock, (rows + kMaxRowBlocks - 1) / kMaxRowBlocks);
  int64_t blocks = (rows + rowsPerBlock - 1) / rowsPerBlock;
  std::vector<double> sums(static_cast<size_t>(2 * blocks * width), 0.0);
  std::vector<float> scale = loadAsFloat(call.inputs[2]);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = call.inputs[0].as<T>(), *x = input.as<T>();
    T *dx = call.outputs[0].as<T>();
    parallelFor(0, blocks, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> scratch(static_cast<size_t>(2 * width));
      for (int64_t block = begin; block < end; ++block) {
        double *scaleSums = sums.data() + 2 * block * width, *biasSums = scaleSums + width;
        for (int64_t row = block * rowsPerBlock; row < std::min(rows, (block + 1) * rowsPerBlock);
             ++row)
          layerNormGradRow(dy + row * width, x + row * width, dx + row * width, width, epsilon,
                           scale.data(), scaleSums, biasSums, scratch.data(),
                           scratch.data() + width);
      }
    });
  });
  std::vector<double> scaleGrad(static_cast<size_t>(width), 0.0), biasGrad = scaleGrad;
  parallelFor(0, width, kElementwiseGrain / std::max<int64_t>(blocks, 1),
              [&](int64_t begin, int64_t end) {
                for (int64_t block = 0; block < blocks; ++block)
                  for (int64_t j = begin; j < end; ++j) {
                    scaleGrad[j] += sums[2 * block * width + j];
                    biasGrad[j] += sums[(2 * block + 1) * width + j];
                  }
              });
  storeFloats(scaleGrad, call.outputs[1]);
  storeFloats(biasGrad, call.outputs[2]);
  return true;
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

bool checkBatchNormGrad(const KernelCall &call, std::string &error) {
  return checkNormGradCall(call, error) && checkRankAtLeast(call.inputs[1], 2, "input", error) &&
         checkScaleShapes(call, {call.inputs[1].shape[1]}, error);
}

bool runBatchNormGrad(const KernelCall &call, std::string &) {
  const TensorView &input = call.inputs[1];
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  int64_t batch = input.shape[0], channels = input.shape[1], spatial = 1;
  for (int64_t d = 2; d < input.rank(); ++d)
    spatial *= input.shape[d];
  int64_t perChannel = batch * spatial;
  std::vector<float> scale = loadAsFloat(call.inputs[2]);
  std::vector<double> scaleGrad(static_cast<size_t>(channels), 0.0), biasGrad = scaleGrad;
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = call.inputs[0].as<T>(), *x = input.as<T>();
    T *dx = call.outputs[0].as<T>();
    // Calls visit(base) for the channel's contiguous runs of `spatial` elements.
    auto forEachRun = [&](int64_t c, auto visit) {
      for (int64_t n = 0; n < batch; ++n)
        visit((n * channels + c) * spatial);
    };
    parallelFor(
        0, channels, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(perChannel, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t c = begin; c < end && perChannel > 0; ++c) {
            double sum = 0.0;
            forEachRun(c, [&](int64_t base) { sum += sumLanes(x + base, spatial); });
            double mean = sum / perChannel, squares = 0.0;
            forEachRun(c, [&](int64_t base) {
              squares += squaredDeviationLanes(x + base, spatial, mean);
            });
            double rstd = 1.0 / std::sqrt(squares / perChannel + epsilon);
            // sum(dy) and sum(dy * (x - mean)).
            double sumDy = 0.0, dot = 0.0;
            forEachRun(c, [&](int64_t base) {
              for (int64_t s = 0; s < spatial; ++s) {
                float grad = Element<T>::load(dy[base + s]);
                sumDy += grad;
                dot += grad * (Element<T>::load(x[base + s]) - mean);
              }
            });
            scaleGrad[c] = dot * rstd;
            biasGrad[c] = sumDy;
            // dx = (dy - mean(dy) - (x - mean) * dot * rstd^2 / M) * rstd * scale.
            float meanDy = static_cast<float>(sumDy / perChannel);
            float projection = static_cast<float>(dot * rstd * rstd / perChannel);
            float factor = static_cast<float>(rstd * scale[c]);
            forEachRun(c, [&](int64_t base) {
              for (int64_t s = 0; s < spatial; ++s) {
                float centered = static_cast<float>(Element<T>::load(x[base + s]) - mean);
                float grad = Element<T>::load(dy[base + s]);
                dx[base + s] = Element<T>::store((grad - meanDy - centered * projection) * factor);
              }
            });
          }
        });
  });
  storeFloats(scaleGrad, call.outputs[1]);
  storeFloats(biasGrad, call.outputs[2]);
  return true;
}

} // namespace

void addNormalizationBackwardKernels(KernelTable &table) {
  table["layer_norm_grad"] = Kernel{&checkLayerNormGrad, &runLayerNormGrad};
  table["batch_norm_grad"] = Kernel{&checkBatchNormGrad, &runBatchNormGrad};
}

} // namespace memc::kernels
