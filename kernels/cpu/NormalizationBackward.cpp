//===- NormalizationBackward.cpp - layer/rms/batch norm gradients ---------===//
//
// All recompute the statistics from the input exactly as the forward kernels do (f64 mean,
// biased variance from a second pass) and use PyTorch's formulas, with x^ = (x - mean) * rstd:
//   dx     = rstd * (dy * g - mean(dy * g) - x^ * mean(dy * g * x^))   (per normalized group)
//   dscale = sum(dy * x^),  dbias = sum(dy)                            (over the other axes)
// rms_norm_grad is the same with mean = 0, without the mean(dy * g) term and dbias.
// Sums run in f64, elements in f32 (row loops cloned per instruction set, as VectorMath.h
// does); f16/bf16 round once, at the store. The scale and its gradients may have a float type
// of their own, as in the forward ops.
//
// layer_norm_grad and rms_norm_grad are threaded over blocks of rows; each block also sums its rows' dscale and
// dbias terms, and the blocks' sums are added in order, so the result does not depend on the
// thread count. batch_norm_grad is threaded over channels. Both read a row (a channel) whole
// before writing its dx, so dx may share the grad's or the input's buffer.
//
// Workspace: the scale as f32, the f64 gradient sums (per block for layer_norm_grad) and, for
// layer_norm_grad, two f32 rows per slot (blocks run in at most kMaxWorkspaceSlots pieces).
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/BatchNormPasses.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/NormalizationBackwardWorkspace.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>

namespace memc::kernels {

namespace {

/// Rounds the tensor's numElements f64 `values` into it.
void storeFloats(const double *values, const TensorView &tensor) {
  visitFloat(tensor.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *data = tensor.as<T>();
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      data[i] = Element<T>::store(static_cast<float>(values[i]));
  });
}

//===----------------------------------------------------------------------===//
// layer_norm_grad, rms_norm_grad
//===----------------------------------------------------------------------===//

/// One row's dx, with its dscale (and, `Centered`, dbias) terms added to `scaleSums` and
/// `biasSums`. `normalized` and `scaled` are f32 scratch of the width. RMS norm is layer norm
/// about zero without a bias: mean = 0, and dx loses the mean(dy * g) term.
template <bool Centered, typename T>
MEMC_VECTOR_CLONES void normalizeGradRow(const T *dy, const T *x, T *dx, int64_t width,
                                         double epsilon, const float *scale,
                                         double *__restrict scaleSums, double *__restrict biasSums,
                                         float *__restrict normalized, float *__restrict scaled) {
  double mean = Centered ? sumLanes(x, width) / width : 0.0;
  double rstd = 1.0 / std::sqrt(squaredDeviationLanes(x, width, mean) / width + epsilon);
  for (int64_t j = 0; j < width; ++j) {
    float grad = Element<T>::load(dy[j]);
    normalized[j] = static_cast<float>((Element<T>::load(x[j]) - mean) * rstd);
    scaled[j] = grad * scale[j];
    scaleSums[j] += static_cast<double>(grad) * normalized[j];
    if constexpr (Centered)
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
  float meanScaled = Centered ? static_cast<float>(sums[0][0] / width) : 0.0f;
  float meanProjection = static_cast<float>(sums[1][0] / width);
  float factor = static_cast<float>(rstd);
  for (j = 0; j < width; ++j)
    dx[j] = Element<T>::store(factor * (scaled[j] - meanScaled - normalized[j] * meanProjection));
}

/// layer_norm_grad (`Centered`) or rms_norm_grad: dx per row, the parameter gradients summed
/// per block of rows and then over the blocks in order.
template <bool Centered>
bool runRowNormalizationGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[1];
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  RowBlocks split(call);
  int64_t rows = split.rows, width = split.width, rowsPerBlock = split.rowsPerBlock;
  int64_t blocks = split.blocks, gradients = parameterGradients(call);
  if (width == 0)
    return true;
  WorkspaceCarver carver(call);
  RowNormGradScratch scratch = carveRowNormGrad(call, carver);
  if (!carver.fits(context))
    return false;
  double *sums = scratch.sums;
  std::fill(sums, sums + gradients * blocks * width, 0.0);
  const float *scale = loadAsFloat(call.inputs[2], scratch.scale);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = call.inputs[0].as<T>(), *x = input.as<T>();
    T *dx = call.outputs[0].as<T>();
    parallelForSlots(0, blocks, 1, [&](int64_t slot, int64_t begin, int64_t end) {
      float *rowScratch = scratch.rows + slot * 2 * width;
      for (int64_t block = begin; block < end; ++block) {
        double *scaleSums = sums + gradients * block * width, *biasSums = scaleSums + width;
        for (int64_t row = block * rowsPerBlock; row < std::min(rows, (block + 1) * rowsPerBlock);
             ++row)
          normalizeGradRow<Centered>(dy + row * width, x + row * width, dx + row * width, width,
                                     epsilon, scale, scaleSums, biasSums, rowScratch,
                                     rowScratch + width);
      }
    });
  });
  double *totals = scratch.scaleGrad;
  std::fill(totals, totals + gradients * width, 0.0);
  parallelFor(0, width, kElementwiseGrain / std::max<int64_t>(blocks, 1),
              [&](int64_t begin, int64_t end) {
                for (int64_t block = 0; block < blocks; ++block)
                  for (int64_t g = 0; g < gradients; ++g)
                    for (int64_t j = begin; j < end; ++j)
                      totals[g * width + j] += sums[(gradients * block + g) * width + j];
              });
  for (int64_t g = 0; g < gradients; ++g)
    storeFloats(totals + g * width, call.outputs[1 + g]);
  return true;
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

bool runBatchNormGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[1];
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  ChannelRuns runs(input);
  int64_t perChannel = runs.perChannel();
  WorkspaceCarver carver(call);
  BatchNormGradScratch scratch = carveBatchNormGrad(call, carver);
  if (!carver.fits(context))
    return false;
  const float *scale = loadAsFloat(call.inputs[2], scratch.scale);
  double *scaleGrad = scratch.scaleGrad, *biasGrad = scratch.biasGrad;
  std::fill(scaleGrad, scaleGrad + runs.channels, 0.0);
  std::fill(biasGrad, biasGrad + runs.channels, 0.0);
  if (perChannel > 0)
    visitFloat(input.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *dy = call.inputs[0].as<T>(), *x = input.as<T>();
      T *dx = call.outputs[0].as<T>();
      double count = static_cast<double>(perChannel);
      // Three passes (BatchNormChannels.h): the sums of x, dy and dy * x; the squared
      // deviations of x; dx.
      auto pass = [&](int k, int64_t begin, int64_t end) {
        if (k == 0)
          planeGradSums(dy, x, runs, begin, end, scratch.planeSums);
        else if (k == 1)
          planeSquaredDeviations(x, runs, begin, end, scratch.means, scratch.planeSquares);
        else
          inputGradPlanes(dy, x, dx, runs, begin, end, scratch.inputGrad);
      };
      auto finish = [&](int k, int64_t c) {
        if (k == 0) {
          double sumX = 0.0, sumDy = 0.0, product = 0.0;
          for (int64_t n = 0; n < runs.batch; ++n) {
            const PlaneGradSums &plane = scratch.planeSums[runs.plane(n, c)];
            sumX += plane.input;
            sumDy += plane.grad;
            product += plane.product;
          }
          scratch.means[c] = sumX / count;
          biasGrad[c] = sumDy;
          // sum(dy * (x - mean)) = sum(dy * x) - mean * sum(dy): in f64, the cancellation
          // costs nothing an f32 result keeps, and a pass over dy and x with (x - mean) is saved.
          scaleGrad[c] = product - scratch.means[c] * sumDy;
        } else if (k == 1) {
          double variance = channelTotal(scratch.planeSquares, runs, c) / count;
          double rstd = 1.0 / std::sqrt(variance + epsilon), centeredDot = scaleGrad[c];
          scaleGrad[c] = centeredDot * rstd;
          // dx = (dy - mean(dy) - (x - mean) * dot * rstd^2 / M) * rstd * scale.
          scratch.inputGrad[c] = {scratch.means[c], static_cast<float>(biasGrad[c] / count),
                                  static_cast<float>(centeredDot * rstd * rstd / count),
                                  static_cast<float>(rstd * scale[c])};
        }
      };
      runPlanePasses(runs, 2 * input.sizeBytes(), 3, pass, finish);
    });
  storeFloats(scaleGrad, call.outputs[1]);
  storeFloats(biasGrad, call.outputs[2]);
  return true;
}

} // namespace

void addNormalizationBackwardKernels(KernelRuns &table) {
  table["layer_norm_grad"] = &runRowNormalizationGrad<true>;
  table["rms_norm_grad"] = &runRowNormalizationGrad<false>;
  table["batch_norm_grad"] = &runBatchNormGrad;
}

} // namespace memc::kernels
