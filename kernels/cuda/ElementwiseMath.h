//===- ElementwiseMath.h - the CUDA elementwise kernels' arithmetic --*- C++ -*-===//
//
// Everything the CUDA elementwise kernels (Unary.cu, Binary.cu, LossScale.cu) compute, as
// MEMC_HOST_DEVICE code, on elements loaded, stored and cast as kernels/StoredElement.h says
// (and clipped as kernels/Clip.h says, both shared with the CPU kernels): the functions of the
// unary, binary and comparison ops (each with its op's name and, for the unary ones, its type
// class), the gelu derivatives, the loss scale's update, where a broadcasting op's output element
// reads its operands and, at the end, each kernel's body: what one thread does for element i.
// The kernels are grid-stride loops around the bodies; a host test
// (test/kernels/cuda/ElementwiseMathTest.cpp) runs the same bodies on the CPU against the CPU
// kernels (kernels/cpu/Unary.cpp, Binary.cpp, ActivationBackward.cpp, LossScale.cpp), whose
// semantics they copy: f16/bf16 compute in f32 and round once, integers wrap, NaN passes
// through relu, clip, max and min.
//
// The transcendental functions are the C library's names (expf, erff, tanhf, ...): glibc's in
// the host test, CUDA's on the device (within a few ulp, CUDA's Math API error table), against
// the CPU kernels' VectorMath (within 2.4 ulp), so results agree to a few ulp, not bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ELEMENTWISEMATH_H
#define MEMC_KERNELS_CUDA_ELEMENTWISEMATH_H

#include "kernels/Clip.h"
#include "kernels/DropoutMask.h"
#include "kernels/HostDevice.h"
#include "kernels/IntegerArithmetic.h"
#include "kernels/ShapeRules.h"
#include "kernels/StoredElement.h"
#include "kernels/ops/TypeClasses.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace memc::kernels::cuda {

//===----------------------------------------------------------------------===//
// Unary functions
//===----------------------------------------------------------------------===//

struct Neg {
  static constexpr const char *name = "neg";
  static constexpr TypeClass types = TypeClass::Numeric;
  template <typename C> MEMC_HOST_DEVICE C operator()(C x) const { return wrapNegate(x); }
};
struct Exp {
  static constexpr const char *name = "exp";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return expf(x); }
};
struct Log {
  static constexpr const char *name = "log";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return logf(x); }
};
struct Sqrt {
  static constexpr const char *name = "sqrt";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return sqrtf(x); }
};
struct Reciprocal {
  static constexpr const char *name = "reciprocal";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return 1.0f / x; }
};
struct Erf {
  static constexpr const char *name = "erf";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return erff(x); }
};
struct Tanh {
  static constexpr const char *name = "tanh";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return tanhf(x); }
};
/// e^x / (1 + e^x) below 0 and 1 / (1 + e^-x) above, so that e^-|x| never overflows.
struct Sigmoid {
  static constexpr const char *name = "sigmoid";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const {
    float e = expf(-fabsf(x));
    return (x < 0.0f ? e : 1.0f) / (1.0f + e);
  }
};
/// Written so that NaN passes through, as torch.relu does.
struct Relu {
  static constexpr const char *name = "relu";
  static constexpr TypeClass types = TypeClass::Numeric;
  template <typename C> MEMC_HOST_DEVICE C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct Not {
  static constexpr const char *name = "not";
  static constexpr TypeClass types = TypeClass::Bool;
  MEMC_HOST_DEVICE bool operator()(bool x) const { return !x; }
};
/// Integers wrap (|INT_MIN| is INT_MIN), as torch.abs.
struct Abs {
  static constexpr const char *name = "abs";
  static constexpr TypeClass types = TypeClass::Numeric;
  template <typename C> MEMC_HOST_DEVICE C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return x < C(0) ? wrapNegate(x) : x;
    else
      return fabsf(x);
  }
};
struct Sin {
  static constexpr const char *name = "sin";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return sinf(x); }
};
struct Cos {
  static constexpr const char *name = "cos";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const { return cosf(x); }
};
/// max(x, 0) + log1p(e^-|x|): log(1 + e^x) without overflow for large x.
struct Softplus {
  static constexpr const char *name = "softplus";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const {
    return (x < 0.0f ? 0.0f : x) + log1pf(expf(-fabsf(x)));
  }
};
/// torch's x * min(max(x + 3, 0), 6) / 6, so results round as torch's do; NaN passes.
struct HardSwish {
  static constexpr const char *name = "hard_swish";
  static constexpr TypeClass types = TypeClass::Float;
  MEMC_HOST_DEVICE float operator()(float x) const {
    float gate = x + 3.0f < 0.0f ? 0.0f : x + 3.0f;
    gate = 6.0f < gate ? 6.0f : gate;
    return x * gate / 6.0f;
  }
};

struct LeakyRelu {
  float alpha;
  MEMC_HOST_DEVICE float operator()(float x) const { return x < 0.0f ? alpha * x : x; }
};
/// expm1 keeps small negative values exact, as torch's elu does.
struct Elu {
  float alpha;
  MEMC_HOST_DEVICE float operator()(float x) const { return x > 0.0f ? x : alpha * expm1f(x); }
};
/// clamp(alpha x + beta, 0, 1), written so that NaN passes through.
struct HardSigmoid {
  float alpha, beta;
  MEMC_HOST_DEVICE float operator()(float x) const {
    float y = alpha * x + beta;
    if (y < 0.0f)
      y = 0.0f;
    if (y > 1.0f)
      y = 1.0f;
    return y;
  }
};

//===----------------------------------------------------------------------===//
// gelu and its derivatives
//===----------------------------------------------------------------------===//

constexpr float kSqrtHalf = static_cast<float>(0.70710678118654752440);
/// sqrt(2 / pi).
constexpr float kGeluBeta = static_cast<float>(0.79788456080286535588);
constexpr float kGeluKappa = 0.044715f;
/// 1 / sqrt(2 pi), the normal density at 0.
constexpr float kNormalDensity = static_cast<float>(0.39894228040143267794);

/// x Phi(x) with the normal CDF from erf.
struct GeluErf {
  MEMC_HOST_DEVICE float operator()(float x) const {
    return x * 0.5f * (1.0f + erff(x * kSqrtHalf));
  }
};

/// PyTorch's tanh approximation 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as the
/// equal x / (1 + e^-2u): one exp, and no cancellation in 1 + tanh(u) for negative x.
struct GeluTanh {
  MEMC_HOST_DEVICE float operator()(float x) const {
    float u = kGeluBeta * (x + kGeluKappa * x * x * x);
    return x / (1.0f + expf(-2.0f * u));
  }
};

/// d/dx of x Phi(x): Phi(x) + x phi(x).
struct GeluDerivative {
  MEMC_HOST_DEVICE float operator()(float x) const {
    float cdf = 0.5f * (1.0f + erff(x * kSqrtHalf));
    return cdf + x * kNormalDensity * expf(-0.5f * x * x);
  }
};

/// d/dx of 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as PyTorch writes it.
struct GeluTanhDerivative {
  MEMC_HOST_DEVICE float operator()(float x) const {
    float t = tanhf(kGeluBeta * (x + kGeluKappa * x * x * x));
    float innerDerivative = kGeluBeta * (1.0f + 3.0f * kGeluKappa * x * x);
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * innerDerivative;
  }
};

//===----------------------------------------------------------------------===//
// trilu
//===----------------------------------------------------------------------===//

/// Whether trilu keeps element (row, column) of a matrix. k is compared, never added, so any k
/// is safe.
MEMC_HOST_DEVICE inline bool triluKeeps(int64_t row, int64_t column, int64_t k, bool upper) {
  return upper ? column - row >= k : column - row <= k;
}

//===----------------------------------------------------------------------===//
// Binary functions and comparisons
//===----------------------------------------------------------------------===//

struct Add {
  static constexpr const char *name = "add";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapAdd(a, b);
    else
      return a + b;
  }
};
struct Sub {
  static constexpr const char *name = "sub";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapSub(a, b);
    else
      return a - b;
  }
};
struct Mul {
  static constexpr const char *name = "mul";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapMul(a, b);
    else
      return a * b;
  }
};
/// Integer division truncates toward zero, with the cases C leaves undefined defined:
/// x / 0 = 0 and INT_MIN / -1 = INT_MIN.
struct Div {
  static constexpr const char *name = "div";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return divideTruncating(a, b);
    else
      return a / b;
  }
};
/// A float exponent of exactly 2 is x * x, the correctly rounded square the CPU kernel computes
/// (its x^2 shortcut, and glibc's powf elsewhere).
struct Pow {
  static constexpr const char *name = "pow";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapPow(a, b);
    else
      return b == 2.0f ? a * a : powf(a, b);
  }
};
/// max and min propagate NaN from either side, as torch.maximum/minimum do.
struct Max {
  static constexpr const char *name = "max";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    return a > b || a != a ? a : b;
  }
};
struct Min {
  static constexpr const char *name = "min";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    return a < b || a != a ? a : b;
  }
};
/// a < 0 ? slope * a : a, the slope b.
struct PRelu {
  static constexpr const char *name = "prelu";
  template <typename C> MEMC_HOST_DEVICE C operator()(C a, C b) const {
    return a < C(0) ? Mul()(b, a) : a;
  }
};
struct Equal {
  static constexpr const char *name = "equal";
  template <typename C> MEMC_HOST_DEVICE bool operator()(C a, C b) const { return a == b; }
};
struct Less {
  static constexpr const char *name = "less";
  template <typename C> MEMC_HOST_DEVICE bool operator()(C a, C b) const { return a < b; }
};
struct Greater {
  static constexpr const char *name = "greater";
  template <typename C> MEMC_HOST_DEVICE bool operator()(C a, C b) const { return a > b; }
};
struct GreaterEqual {
  static constexpr const char *name = "greater_equal";
  template <typename C> MEMC_HOST_DEVICE bool operator()(C a, C b) const { return a >= b; }
};
struct LessEqual {
  static constexpr const char *name = "less_equal";
  template <typename C> MEMC_HOST_DEVICE bool operator()(C a, C b) const { return a <= b; }
};

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

/// Infinity or NaN: the exponent field all ones.
MEMC_HOST_DEVICE inline bool isNonFinite(float x) {
  return (floatBits(x) & 0x7f800000u) == 0x7f800000u;
}

/// Gradients per non_finite_check launch: their addresses travel as kernel parameters.
constexpr int kGradientsPerBatch = 64;
/// Elements one block of non_finite_check checks at a time.
constexpr int64_t kGradientTile = 4096;

/// The gradients of one non_finite_check launch, cut into tiles of kGradientTile elements
/// (gradient g has tiles [firstTile[g], firstTile[g + 1])) that the launch's blocks share out.
struct GradientBatch {
  const void *data[kGradientsPerBatch];
  int64_t count[kGradientsPerBatch];
  int64_t firstTile[kGradientsPerBatch + 1];
  DType dtype[kGradientsPerBatch];
  int size;

  MEMC_HOST_DEVICE int64_t tiles() const { return firstTile[size]; }
  /// The gradient of `tile` (< tiles()), and the elements [begin, end) of it the tile covers.
  MEMC_HOST_DEVICE int tileRange(int64_t tile, int64_t &begin, int64_t &end) const {
    // The last g with firstTile[g] <= tile: empty gradients have no tiles, so it is the one.
    int low = 0, high = size - 1;
    while (low < high) {
      int middle = (low + high + 1) / 2;
      if (firstTile[middle] <= tile)
        low = middle;
      else
        high = middle - 1;
    }
    begin = (tile - firstTile[low]) * kGradientTile;
    end = begin + kGradientTile < count[low] ? begin + kGradientTile : count[low];
    return low;
  }
};

/// The batch of gradients[first, first + kGradientsPerBatch). Host only.
inline GradientBatch gradientBatch(const std::vector<TensorView> &gradients, size_t first) {
  GradientBatch batch{};
  size_t size = gradients.size() - first;
  batch.size = static_cast<int>(size < kGradientsPerBatch ? size : kGradientsPerBatch);
  for (int g = 0; g < batch.size; ++g) {
    const TensorView &gradient = gradients[first + g];
    batch.data[g] = gradient.data;
    batch.count[g] = gradient.numElements();
    batch.dtype[g] = gradient.dtype;
    batch.firstTile[g + 1] =
        batch.firstTile[g] + (batch.count[g] + kGradientTile - 1) / kGradientTile;
  }
  return batch;
}

/// The dynamic loss scale's state: the scale is 2^exponent; growth counts the finite steps in
/// a row, skipped the steps an overflow skipped.
struct LossScaleState {
  float exponent, growth, skipped;
};

/// torch's _amp_update_scale_: after an overflow, one step skipped and (dynamic) the scale
/// halved; after `window` finite steps in a row (dynamic), the scale doubled.
MEMC_HOST_DEVICE inline LossScaleState updatedLossScale(LossScaleState state, bool foundInf,
                                                        float window, bool dynamic) {
  if (foundInf) {
    state.skipped += 1;
    if (dynamic) {
      state.exponent -= 1;
      state.growth = 0;
    }
  } else if (dynamic) {
    state.growth += 1;
    if (state.growth >= window) {
      state.exponent += 1;
      state.growth = 0;
    }
  }
  return state;
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

/// Dimensions a broadcasting kernel walks, after merging (mergeBroadcast).
constexpr int kMaxBroadcastRank = 8;

/// An output shape and the element strides its N operands are read with (0 along the
/// dimensions they broadcast), with size-1 dimensions dropped and neighbours merged where every
/// operand reads them as one: same-shape operands become one dimension, a row bias [M] against
/// [N, M] two. Host only.
template <int N> struct MergedBroadcast {
  Shape dims;
  std::array<Shape, N> strides;
};

template <int N>
MergedBroadcast<N> mergeBroadcast(const Shape &output,
                                  const std::array<const Shape *, N> &operands) {
  std::array<Shape, N> full;
  for (int k = 0; k < N; ++k) {
    const Shape &operand = *operands[k];
    full[k].assign(output.size(), 0);
    size_t offset = output.size() - operand.size();
    int64_t running = 1;
    for (size_t d = operand.size(); d-- > 0;) {
      full[k][offset + d] = operand[d] == 1 ? 0 : running;
      running *= operand[d];
    }
  }
  MergedBroadcast<N> merged;
  for (size_t d = 0; d < output.size(); ++d) {
    if (output[d] == 1)
      continue;
    bool mergeable = !merged.dims.empty();
    for (int k = 0; k < N && mergeable; ++k)
      mergeable = merged.strides[k].back() == full[k][d] * output[d];
    if (mergeable) {
      merged.dims.back() *= output[d];
      for (int k = 0; k < N; ++k)
        merged.strides[k].back() = full[k][d];
      continue;
    }
    merged.dims.push_back(output[d]);
    for (int k = 0; k < N; ++k)
      merged.strides[k].push_back(full[k][d]);
  }
  if (merged.dims.empty()) {
    merged.dims.push_back(1);
    for (int k = 0; k < N; ++k)
      merged.strides[k].push_back(0);
  }
  return merged;
}

/// Where output element i of a broadcasting op reads each of its N operands: a merged layout
/// (at most kMaxBroadcastRank dimensions) small enough to pass to a kernel by value.
template <int N> struct BroadcastIndex {
  int rank = 1;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t strides[N][kMaxBroadcastRank] = {};

  /// Operand k's element offset for output element `index`, into offsets[k]. Index is a
  /// 32-bit type when the output has fewer than 2^32 elements: 64-bit division is slow on a GPU.
  template <typename Index> MEMC_HOST_DEVICE void offsets(Index index, Index (&offsets)[N]) const {
    for (int k = 0; k < N; ++k)
      offsets[k] = 0;
    // The outermost dimension needs no remainder: what is left of the index is its position.
    for (int d = rank - 1; d > 0; --d) {
      auto dim = static_cast<Index>(dims[d]);
      Index position = index % dim;
      index /= dim;
      for (int k = 0; k < N; ++k)
        offsets[k] += position * static_cast<Index>(strides[k][d]);
    }
    for (int k = 0; k < N; ++k)
      offsets[k] += index * static_cast<Index>(strides[k][0]);
  }
};

/// The index of a merged layout; false when it has more than kMaxBroadcastRank dimensions.
template <int N> bool toBroadcastIndex(const MergedBroadcast<N> &merged, BroadcastIndex<N> &index) {
  if (merged.dims.size() > static_cast<size_t>(kMaxBroadcastRank))
    return false;
  index.rank = static_cast<int>(merged.dims.size());
  for (int d = 0; d < index.rank; ++d) {
    index.dims[d] = merged.dims[d];
    for (int k = 0; k < N; ++k)
      index.strides[k][d] = merged.strides[k][d];
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Kernel bodies
//===----------------------------------------------------------------------===//
//
// What one thread does for output element i: the CUDA kernels call body(i) in grid-stride
// loops, the host test calls it in a plain loop. Each body reads element i (or the operand
// elements it maps to) before writing element i and nothing else, so an output may share an
// equally shaped input's buffer (in-place steps). Index is the type of index arithmetic with a
// division in it: 32-bit where the output has fewer than 2^32 elements, as 64-bit division is
// slow on a GPU.

/// y[i] = op(x[i]) in the compute type.
template <typename T, typename Op> struct MapBody {
  const T *x;
  T *y;
  Op op;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    y[i] = Element<T>::store(op(Element<T>::load(x[i])));
  }
};

/// dx[i] = dy[i] * derivative(x[i]).
template <typename T, typename Derivative> struct GradBody {
  const T *dy, *x;
  T *dx;
  Derivative derivative;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    dx[i] = Element<T>::store(Element<T>::load(dy[i]) * derivative(Element<T>::load(x[i])));
  }
};

/// y[i] = gelu(x[i] + bias[i % width]), the sum in f32: bias_gelu.
template <typename T, typename B, typename Gelu, typename Index> struct BiasGeluBody {
  const T *x;
  const B *bias;
  T *y;
  Index width;
  Gelu gelu;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    Index column = static_cast<Index>(i) % width;
    y[i] = Element<T>::store(gelu(Element<T>::load(x[i]) + Element<B>::load(bias[column])));
  }
};

/// dx[i] = dy[i] * derivative(x[i] + bias[i % width]): bias_gelu_grad.
template <typename T, typename B, typename Derivative, typename Index> struct BiasGeluGradBody {
  const T *dy, *x;
  const B *bias;
  T *dx;
  Index width;
  Derivative derivative;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    Index column = static_cast<Index>(i) % width;
    float sum = Element<T>::load(x[i]) + Element<B>::load(bias[column]);
    dx[i] = Element<T>::store(Element<T>::load(dy[i]) * derivative(sum));
  }
};

/// trilu over matrices [rows, columns] stacked along the leading dimensions; T is the
/// elements' bits (selection moves values unchanged).
template <typename T, typename Index> struct TriluBody {
  const T *x;
  T *y;
  Index rows, columns;
  int64_t k;
  bool upper;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    auto flat = static_cast<Index>(i);
    Index column = flat % columns, row = flat / columns % rows;
    y[i] = triluKeeps(row, column, k, upper) ? x[i] : T(0);
  }
};

/// y[i] = x[i] converted.
template <typename From, typename To> struct CastBody {
  const From *x;
  To *y;
  MEMC_HOST_DEVICE void operator()(int64_t i) const { y[i] = convertElement<From, To>(x[i]); }
};

/// refresh_copy: the source cast where the refresh flag (a device scalar, read here) is
/// nonzero, else the copy as it is (nothing to write when the output is the copy's buffer).
template <typename From, typename To> struct RefreshCopyBody {
  const float *refresh;
  const From *source;
  const To *copy;
  To *y;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    if (*refresh != 0.0f)
      y[i] = convertElement<From, To>(source[i]);
    else if (copy != y)
      y[i] = copy[i];
  }
};

/// y[i] = a[i'] op b[i''] with i', i'' the broadcast operands' elements; Out is T, or a bool
/// byte for comparisons.
template <typename T, typename Out, typename Op, typename Index> struct BroadcastBody {
  const T *a, *b;
  Out *y;
  BroadcastIndex<2> index;
  Op op;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    Index offsets[2];
    index.offsets(static_cast<Index>(i), offsets);
    y[i] =
        Element<Out>::store(op(Element<T>::load(a[offsets[0]]), Element<T>::load(b[offsets[1]])));
  }
};

/// where: y[i] = condition ? onTrue : onFalse, broadcast; T is the elements' bits.
template <typename T, typename Index> struct SelectBody {
  const BoolByte *condition;
  const T *onTrue, *onFalse;
  T *y;
  BroadcastIndex<3> index;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    Index offsets[3];
    index.offsets(static_cast<Index>(i), offsets);
    y[i] = condition[offsets[0]] ? onTrue[offsets[1]] : onFalse[offsets[2]];
  }
};

/// Sets *found to 1 where x[i] is infinite or NaN (every writer writes the same value).
template <typename T> struct NonFiniteBody {
  const T *x;
  float *found;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    if (isNonFinite(Element<T>::load(x[i])))
      *found = 1.0f;
  }
};

/// y[i] = x[i] / (1 - ratio) where the mask keeps element i, else 0. The kernel builds the mask
/// on the device, from the salt operand.
template <typename T> struct DropoutBody {
  const T *x;
  T *y;
  DropoutMask mask;
  MEMC_HOST_DEVICE void operator()(int64_t i) const {
    y[i] = Element<T>::store(mask.keeps(i) ? Element<T>::load(x[i]) * mask.keptScale() : 0.0f);
  }
};

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_ELEMENTWISEMATH_H
