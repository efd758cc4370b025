//===- Losses.cpp - cross_entropy and cross_entropy_grad ------------------===//
//
// torch.nn.functional.cross_entropy with the class axis last, integer labels, ignore_index and
// mean reduction. Labels are data: both kernels validate them all before computing (a label
// outside [0, C) that is not ignore_index is an error). Each row's log-sum-exp subtracts the
// row maximum first and sums in f64, with VectorMath's exp (within 2 ulp of libm's) in loops
// cloned per instruction set; rows spread over threads, f16/bf16 rows through f32 scratch.
//   cross_entropy:      mean over counted rows of logsumexp(row) - row[label], summed in f64
//                       in row order; 0 when every row is ignored (PyTorch gives NaN there)
//   cross_entropy_grad: grad * (softmax(row) - onehot(label)) / count on counted rows, 0 on
//                       ignored ones
// cross_entropy_grad reads a row whole before writing it, so its result may share the logits'
// buffer.
//
// Workspace: each row's class index (and, for cross_entropy, its loss, kept so that the sum runs
// in row order whatever the split), plus for f16/bf16 logits one f32 row per slot (rows run in at
// most kMaxWorkspaceSlots pieces).
//
//===----------------------------------------------------------------------===//
#include "kernels/ScalarOperand.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/CrossEntropyRows.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/LossesWorkspace.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memc::kernels {

bool readLabels(const TensorView &labels, int64_t classes, int64_t ignoreIndex, int64_t *targets,
                int64_t &counted, std::string &error) {
  int64_t rows = labels.numElements();
  counted = 0;
  return visitIndex(labels.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I *values = labels.as<I>();
    for (int64_t i = 0; i < rows; ++i) {
      int64_t label = values[i];
      if (label == ignoreIndex) {
        targets[i] = -1;
        continue;
      }
      if (label < 0 || label >= classes) {
        error = "label " + std::to_string(label) + " at position " + std::to_string(i) +
                " is outside [0, " + std::to_string(classes) + ")";
        return false;
      }
      targets[i] = label;
      ++counted;
    }
    return true;
  });
}

MEMC_VECTOR_CLONES float maxOf(const float *x, int64_t n) {
  float lanes[kLanes];
  for (float &lane : lanes)
    lane = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  for (; i < n; ++i)
    lanes[0] = x[i] > lanes[0] ? x[i] : lanes[0];
  float max = lanes[0];
  for (float lane : lanes)
    max = lane > max ? lane : max;
  return max;
}

MEMC_VECTOR_CLONES double sumExp(const float *x, float *y, int64_t n, float max) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float e = vectormath::exp(x[i + l] - max);
      if (y)
        y[i + l] = e;
      lanes[l] += e;
    }
  for (int64_t l = 0; i < n; ++i, ++l) {
    float e = vectormath::exp(x[i] - max);
    if (y)
      y[i] = e;
    lanes[l] += e;
  }
  double sum = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l)
    sum += lanes[l];
  return sum;
}

MEMC_VECTOR_CLONES void logitsGradRow(float *row, int64_t n, float logsumexp, float scale,
                                      int64_t target) {
  for (int64_t i = 0; i < n; ++i) {
    float gradient = vectormath::exp(row[i] - logsumexp) * scale;
    row[i] = std::fabs(gradient) < std::numeric_limits<float>::min() ? 0.0f : gradient;
  }
  if (target >= 0 && target < n)
    row[target] -= scale;
}

namespace {

MEMC_VECTOR_CLONES void scaleInPlace(float *y, int64_t n, float scale) {
  for (int64_t i = 0; i < n; ++i)
    y[i] *= scale;
}

/// Row r of the logits as f32: the tensor's own row, or the row converted into `scratch`.
template <typename T>
const float *floatRow(const T *logits, int64_t r, int64_t classes, float *scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return logits + r * classes;
  } else {
    for (int64_t c = 0; c < classes; ++c)
      scratch[c] = Element<T>::load(logits[r * classes + c]);
    return scratch;
  }
}

bool runCrossEntropy(KernelContext &context, const KernelCall &call) {
  std::string error;
  const TensorView &logits = call.inputs[0];
  WorkspaceCarver carver(call);
  LossScratch scratch = carveCrossEntropy(call, carver);
  if (!carver.fits(context))
    return false;
  LossRows split(logits);
  int64_t classes = split.classes, *targets = scratch.targets;
  double *losses = scratch.losses;
  int64_t counted;
  if (!readLabels(call.inputs[1], classes, attributesOf(call).intOr("ignore_index", -100), targets,
                  counted, error))
    return context.fail(error);
  visitFloat(logits.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = logits.as<T>();
    parallelForSlots(0, split.rows, split.grain, [&](int64_t slot, int64_t begin, int64_t end) {
      float *rowScratch = scratch.floatRows + slot * classes;
      for (int64_t r = begin; r < end; ++r) {
        if (targets[r] < 0) {
          losses[r] = 0.0;
          continue;
        }
        const float *row = floatRow(x, r, classes, rowScratch);
        float max = maxOf(row, classes);
        losses[r] = std::log(sumExp(row, nullptr, classes, max)) + max - row[targets[r]];
      }
    });
  });
  double total = 0.0;
  for (int64_t r = 0; r < split.rows; ++r)
    total += losses[r];
  *call.outputs[0].as<float>() = counted == 0 ? 0.0f : static_cast<float>(total / counted);
  return true;
}

/// One counted row's gradient, (softmax(row) - onehot(target)) * scale, into `out` (which may
/// be `row`).
void crossEntropyGradRow(const float *row, float *out, int64_t classes, int64_t target,
                         float scale) {
  float max = maxOf(row, classes);
  float factor = static_cast<float>(scale / sumExp(row, out, classes, max));
  float atTarget = out[target] * factor - scale;
  scaleInPlace(out, classes, factor);
  out[target] = atTarget;
}

bool runCrossEntropyGrad(KernelContext &context, const KernelCall &call) {
  std::string error;
  const TensorView &logits = call.inputs[1], &result = call.outputs[0];
  WorkspaceCarver carver(call);
  LossScratch scratch = carveCrossEntropyGrad(call, carver);
  if (!carver.fits(context))
    return false;
  LossRows split(logits);
  int64_t classes = split.classes, *targets = scratch.targets;
  int64_t counted;
  if (!readLabels(call.inputs[2], classes, attributesOf(call).intOr("ignore_index", -100), targets,
                  counted, error))
    return context.fail(error);
  float scale = counted == 0
                    ? 0.0f
                    : ScalarOperand<float>(call.inputs[0]).get() / static_cast<float>(counted);
  visitFloat(logits.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = logits.as<T>();
    T *dx = result.as<T>();
    parallelForSlots(0, split.rows, split.grain, [&](int64_t slot, int64_t begin, int64_t end) {
      float *rowScratch = scratch.floatRows + slot * classes;
      for (int64_t r = begin; r < end; ++r) {
        T *out = dx + r * classes;
        if (targets[r] < 0) {
          std::fill(out, out + classes, Element<T>::store(0.0f));
        } else if constexpr (std::is_same_v<T, float>) {
          crossEntropyGradRow(x + r * classes, out, classes, targets[r], scale);
        } else {
          for (int64_t c = 0; c < classes; ++c)
            rowScratch[c] = Element<T>::load(x[r * classes + c]);
          crossEntropyGradRow(rowScratch, rowScratch, classes, targets[r], scale);
          for (int64_t c = 0; c < classes; ++c)
            out[c] = Element<T>::store(rowScratch[c]);
        }
      }
    });
  });
  return true;
}

} // namespace

void addLossKernels(KernelRuns &table) {
  table["cross_entropy"] = &runCrossEntropy;
  table["cross_entropy_grad"] = &runCrossEntropyGrad;
}

} // namespace memc::kernels
