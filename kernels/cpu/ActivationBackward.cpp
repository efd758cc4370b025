//===- ActivationBackward.cpp - gelu_grad, softmax_grad, log_softmax_grad -===//
//
// gelu_grad is elementwise, with PyTorch's GeluBackward formulas (exact and tanh) in f32;
// bias_gelu_grad is the same at x + bias, the sum recomputed in registers.
// softmax_grad and log_softmax_grad work from the forward output y along one axis:
//   softmax:     dx = y * (dy - sum(dy * y))
//   log_softmax: dx = dy - exp(y) * sum(dy)
// with f64 sums, threaded over rows (or blocks of interleaved rows along a non-innermost axis)
// like the forward softmax. Loops are cloned per instruction set with VectorMath's exp, erf and
// tanh (within 2 ulp of libm's), so they vectorize. Every kernel reads element i before writing
// element i, and the row kernels read a whole row before writing any of it, so the result may
// share the grad's or y's buffer.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/BiasedRows.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"
#include "kernels/ops/CallChecks.h"

#include <algorithm>
#include <cmath>

namespace memc::kernels {

namespace {

//===----------------------------------------------------------------------===//
// gelu_grad
//===----------------------------------------------------------------------===//

/// dx[i] = dy[i] * derivative(x[i]) (dx may be dy or x).
template <typename T, typename Derivative>
MEMC_VECTOR_CLONES void gradElements(const T *dy, const T *x, T *dx, int64_t n,
                                     Derivative derivative) {
  for (int64_t i = 0; i < n; ++i)
    dx[i] = Element<T>::store(Element<T>::load(dy[i]) * derivative(Element<T>::load(x[i])));
}

/// d/dx of x Phi(x): Phi(x) + x phi(x).
struct GeluDerivative {
  MEMC_VECTOR_INLINE float operator()(float x) const {
    constexpr auto kAlpha = static_cast<float>(M_SQRT1_2);
    constexpr auto kDensity = static_cast<float>(M_2_SQRTPI * M_SQRT1_2 * 0.5);
    float cdf = 0.5f * (1.0f + vectormath::erf(x * kAlpha));
    return cdf + x * kDensity * vectormath::exp(-0.5f * x * x);
  }
};

/// d/dx of 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as PyTorch writes it.
struct GeluTanhDerivative {
  MEMC_VECTOR_INLINE float operator()(float x) const {
    constexpr auto kBeta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
    constexpr float kKappa = 0.044715f;
    float t = vectormath::tanh(kBeta * (x + kKappa * x * x * x));
    float innerDerivative = kBeta * (1.0f + 3.0f * kKappa * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * innerDerivative;
  }
};

/// Elements per block of mapGrad: blocks are fixed by the index alone, so each element takes
/// the same code path (vector body or scalar remainder, whose roundings may differ in the last
/// bit) whatever the thread count.
constexpr int64_t kGradBlock = 1024;

template <typename T, typename Derivative> void mapGrad(const KernelCall &call) {
  const T *dy = call.inputs[0].as<T>(), *x = call.inputs[1].as<T>();
  T *dx = call.outputs[0].as<T>();
  int64_t n = call.outputs[0].numElements();
  parallelFor(0, (n + kGradBlock - 1) / kGradBlock, kExpensiveGrain / kGradBlock,
              [&](int64_t begin, int64_t end) {
                for (int64_t block = begin; block < end; ++block) {
                  int64_t first = block * kGradBlock;
                  gradElements(dy + first, x + first, dx + first, std::min(kGradBlock, n - first),
                               Derivative());
                }
              });
}

bool runGeluGrad(KernelContext &, const KernelCall &call) {
  std::string approximate = "none";
  attributesOf(call).getString("approximate", approximate);
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (approximate == "tanh")
      mapGrad<T, GeluTanhDerivative>(call);
    else
      mapGrad<T, GeluDerivative>(call);
  });
  return true;
}

/// dx[i] = dy[i] * derivative(x[i] + bias[i]) over one row (dx may be dy or x).
template <typename T, typename B, typename Derivative>
MEMC_VECTOR_CLONES void biasedGradRow(const T *dy, const T *x, const B *bias, T *dx, int64_t n,
                                      Derivative derivative) {
  for (int64_t i = 0; i < n; ++i)
    dx[i] = Element<T>::store(Element<T>::load(dy[i]) *
                              derivative(Element<T>::load(x[i]) + Element<B>::load(bias[i])));
}

bool runBiasGeluGrad(KernelContext &, const KernelCall &call) {
  std::string approximate = "none";
  attributesOf(call).getString("approximate", approximate);
  const TensorView &bias = call.inputs[2];
  visitDataAndBias(call.inputs[0].dtype, bias.dtype, [&](auto dataTag, auto biasTag) {
    using T = typename decltype(dataTag)::type;
    using B = typename decltype(biasTag)::type;
    const T *dy = call.inputs[0].as<T>(), *x = call.inputs[1].as<T>();
    const B *b = bias.as<B>();
    T *dx = call.outputs[0].as<T>();
    int64_t width = bias.numElements();
    parallelForRows(call.outputs[0].numElements(), width, kExpensiveGrain, [&](int64_t offset) {
      if (approximate == "tanh")
        biasedGradRow(dy + offset, x + offset, b, dx + offset, width, GeluTanhDerivative());
      else
        biasedGradRow(dy + offset, x + offset, b, dx + offset, width, GeluDerivative());
    });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// softmax_grad, log_softmax_grad
//===----------------------------------------------------------------------===//

/// The row sum the gradient needs: sum(dy * y) for softmax, sum(dy) for log_softmax.
template <bool Log> double rowTerm(float dy, float y) {
  if constexpr (Log)
    return dy;
  else
    return static_cast<double>(dy) * y;
}

template <bool Log> float gradOf(float dy, float y, float sum) {
  if constexpr (Log)
    return dy - vectormath::exp(y) * sum;
  else
    return y * (dy - sum);
}

/// The gradient of one contiguous row of n elements; the sum in kLanes interleaved f64
/// accumulators, as sumLanes.
template <typename T, bool Log>
MEMC_VECTOR_CLONES void softmaxGradRow(const T *dy, const T *y, T *dx, int64_t n) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += rowTerm<Log>(Element<T>::load(dy[i + l]), Element<T>::load(y[i + l]));
  for (int64_t l = 0; i < n; ++i, ++l)
    lanes[l] += rowTerm<Log>(Element<T>::load(dy[i]), Element<T>::load(y[i]));
  double sum = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l)
    sum += lanes[l];
  for (i = 0; i < n; ++i)
    dx[i] = Element<T>::store(
        gradOf<Log>(Element<T>::load(dy[i]), Element<T>::load(y[i]), static_cast<float>(sum)));
}

/// Interleaved rows per task along a non-innermost axis.
constexpr int64_t kColumnBlock = 64;

/// The same for width <= kColumnBlock interleaved rows r[j * stride + c], c in [0, width): rows
/// along a non-innermost axis, vectorized across c.
template <typename T, bool Log>
MEMC_VECTOR_CLONES void softmaxGradColumns(const T *dy, const T *y, T *dx, int64_t length,
                                           int64_t stride, int64_t width) {
  double sums[kColumnBlock] = {};
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      int64_t i = j * stride + c;
      sums[c] += rowTerm<Log>(Element<T>::load(dy[i]), Element<T>::load(y[i]));
    }
  float rounded[kColumnBlock];
  for (int64_t c = 0; c < width; ++c)
    rounded[c] = static_cast<float>(sums[c]);
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      int64_t i = j * stride + c;
      dx[i] = Element<T>::store(
          gradOf<Log>(Element<T>::load(dy[i]), Element<T>::load(y[i]), rounded[c]));
    }
}

template <bool Log> bool runSoftmaxGrad(KernelContext &, const KernelCall &call) {
  const Shape &shape = call.inputs[0].shape;
  int64_t axis = attributesOf(call).intOr("axis", 0);
  int64_t outer = 1, length = shape[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  if (call.outputs[0].numElements() == 0)
    return true;
  // Tasks are (outer index, block of up to kColumnBlock interleaved rows).
  int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  int64_t grain = std::max<int64_t>(1, kExpensiveGrain / (length * std::min(inner, kColumnBlock)));
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *dy = call.inputs[0].as<T>(), *y = call.inputs[1].as<T>();
    T *dx = call.outputs[0].as<T>();
    parallelFor(0, outer * blocks, grain, [&](int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        int64_t o = task / blocks, c0 = (task % blocks) * kColumnBlock;
        int64_t offset = o * length * inner + c0;
        if (inner == 1)
          softmaxGradRow<T, Log>(dy + offset, y + offset, dx + offset, length);
        else
          softmaxGradColumns<T, Log>(dy + offset, y + offset, dx + offset, length, inner,
                                     std::min(kColumnBlock, inner - c0));
      }
    });
  });
  return true;
}

} // namespace

void addActivationBackwardKernels(KernelRuns &table) {
  table["gelu_grad"] = &runGeluGrad;
  table["bias_gelu_grad"] = &runBiasGeluGrad;
  table["softmax_grad"] = &runSoftmaxGrad<false>;
  table["log_softmax_grad"] = &runSoftmaxGrad<true>;
}

} // namespace memc::kernels
