//===- Binary.cpp - broadcasting elementwise kernels ----------------------===//
//
// add sub mul div pow max min prelu, equal less greater greater_equal less_equal, where: numpy broadcasting through StridedLayout.
// f16/bf16 compute in f32 and round once. Integers follow kernels/IntegerArithmetic.h (wrapping;
// division truncating, x / 0 = 0 and INT_MIN / -1 = INT_MIN). Output element i depends only on input elements that
// map to it, so an output sharing an equally shaped input's buffer is safe (in-place steps).
// Inner loops are cloned per instruction set (VectorMath.h), so they vectorize as wide as the
// CPU allows.
//
//===----------------------------------------------------------------------===//
#include "kernels/IntegerArithmetic.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/StridedLayout.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <cmath>

namespace memc::kernels {

namespace {

struct Add {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapAdd(a, b);
    else
      return a + b;
  }
};
struct Sub {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapSub(a, b);
    else
      return a - b;
  }
};
struct Mul {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapMul(a, b);
    else
      return a * b;
  }
};
struct Div {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return divideTruncating(a, b);
    else
      return a / b;
  }
};
struct Pow {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>)
      return wrapPow(a, b);
    else
      return std::pow(a, b);
  }
};
/// max and min propagate NaN from either side, as torch.maximum/minimum do.
struct Max {
  template <typename C> C operator()(C a, C b) const { return a > b || a != a ? a : b; }
};
struct Min {
  template <typename C> C operator()(C a, C b) const { return a < b || a != a ? a : b; }
};
/// a < 0 ? slope * a : a, the slope b.
struct PRelu {
  template <typename C> C operator()(C a, C b) const { return a < C(0) ? Mul()(b, a) : a; }
};
/// pow with a scalar exponent of 2: x * x, the correctly rounded square (as PyTorch computes
/// it), without powf's cost.
struct Square {
  template <typename C> C operator()(C a, C) const { return Mul()(a, a); }
};
struct Equal {
  template <typename C> bool operator()(C a, C b) const { return a == b; }
};
struct Less {
  template <typename C> bool operator()(C a, C b) const { return a < b; }
};
struct Greater {
  template <typename C> bool operator()(C a, C b) const { return a > b; }
};
struct GreaterEqual {
  template <typename C> bool operator()(C a, C b) const { return a >= b; }
};
struct LessEqual {
  template <typename C> bool operator()(C a, C b) const { return a <= b; }
};

/// y[i] = op(a[i * strideA], b[i * strideB]) for i < count, with the common stride patterns
/// (both contiguous, one operand a scalar) as separate loops the compiler can vectorize.
template <typename T, typename Out, typename Op>
MEMC_VECTOR_CLONES void binaryRun(const T *a, int64_t strideA, const T *b, int64_t strideB, Out *y,
                                  int64_t count, Op op) {
  auto compute = [&](T x, T z) {
    return Element<Out>::store(op(Element<T>::load(x), Element<T>::load(z)));
  };
  if (strideA == 1 && strideB == 1) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = compute(a[i], b[i]);
  } else if (strideA == 1 && strideB == 0) {
    T scalar = *b;
    for (int64_t i = 0; i < count; ++i)
      y[i] = compute(a[i], scalar);
  } else if (strideA == 0 && strideB == 1) {
    T scalar = *a;
    for (int64_t i = 0; i < count; ++i)
      y[i] = compute(scalar, b[i]);
  } else {
    for (int64_t i = 0; i < count; ++i)
      y[i] = compute(a[i * strideA], b[i * strideB]);
  }
}

/// output = op(lhs, rhs) broadcast, over threads.
template <typename T, typename Out, typename Op>
void broadcastBinary(const TensorView &lhs, const TensorView &rhs, const TensorView &output,
                     int64_t grain, Op op) {
  StridedLayout<2> layout = broadcastLayout<2>(output.shape, {&lhs.shape, &rhs.shape});
  const T *a = lhs.as<T>();
  const T *b = rhs.as<T>();
  Out *y = output.as<Out>();
  parallelFor(0, layout.numElements(), grain, [&](int64_t begin, int64_t end) {
    layout.forEachRun(begin, end, [&](int64_t out, const auto &offsets, int64_t count) {
      binaryRun(a + offsets[0], layout.innerStride(0), b + offsets[1], layout.innerStride(1),
                y + out, count, op);
    });
  });
}

/// Whether rhs is one float element equal to 2 (x^2, as RMS norms write it).
template <typename T> bool isScalarTwo(const TensorView &rhs) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else
    return rhs.numElements() == 1 && Element<T>::load(ScalarOperand<T>(rhs).get()) == 2.0f;
}

template <typename Op> bool runArithmetic(KernelContext &, const KernelCall &call) {
  visitNumeric(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<Op, Pow>) {
      if (isScalarTwo<T>(call.inputs[1])) {
        broadcastBinary<T, T>(call.inputs[0], call.inputs[1], call.outputs[0], kElementwiseGrain,
                              Square());
        return;
      }
    }
    int64_t grain = std::is_same_v<Op, Pow> ? kExpensiveGrain : kElementwiseGrain;
    broadcastBinary<T, T>(call.inputs[0], call.inputs[1], call.outputs[0], grain, Op());
  });
  return true;
}

template <typename Op> bool runComparison(KernelContext &, const KernelCall &call) {
  visitAny(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    broadcastBinary<T, BoolByte>(call.inputs[0], call.inputs[1], call.outputs[0], kElementwiseGrain,
                                 Op());
  });
  return true;
}

/// y[i] = c[i * sc] ? t[i * st] : f[i * sf], with the stride patterns of a mask over scores
/// (condition and one side contiguous, the other contiguous or a scalar) as loops that
/// vectorize.
template <typename T>
MEMC_VECTOR_CLONES void selectRun(const BoolByte *c, int64_t sc, const T *t, int64_t st,
                                  const T *f, int64_t sf, T *y, int64_t count) {
  if (sc == 1 && st == 1 && sf == 1) {
    for (int64_t i = 0; i < count; ++i)
      y[i] = c[i] ? t[i] : f[i];
  } else if (sc == 1 && st == 1 && sf == 0) {
    T scalar = *f;
    for (int64_t i = 0; i < count; ++i)
      y[i] = c[i] ? t[i] : scalar;
  } else if (sc == 1 && st == 0 && sf == 1) {
    T scalar = *t;
    for (int64_t i = 0; i < count; ++i)
      y[i] = c[i] ? scalar : f[i];
  } else {
    for (int64_t i = 0; i < count; ++i)
      y[i] = c[i * sc] ? t[i * st] : f[i * sf];
  }
}

bool runWhere(KernelContext &, const KernelCall &call) {
  const TensorView &output = call.outputs[0];
  StridedLayout<3> layout = broadcastLayout<3>(
      output.shape, {&call.inputs[0].shape, &call.inputs[1].shape, &call.inputs[2].shape});
  const BoolByte *condition = call.inputs[0].as<BoolByte>();
  // Selection moves values unchanged, so any element type is its bits (bool bytes included:
  // a selected bool keeps its byte).
  visitBits(output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *onTrue = call.inputs[1].as<T>();
    const T *onFalse = call.inputs[2].as<T>();
    T *y = output.as<T>();
    int64_t sc = layout.innerStride(0), st = layout.innerStride(1), sf = layout.innerStride(2);
    parallelFor(0, layout.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      layout.forEachRun(begin, end,
                        [&](int64_t out, const std::array<int64_t, 3> &offsets, int64_t count) {
                          selectRun(condition + offsets[0], sc, onTrue + offsets[1], st,
                                    onFalse + offsets[2], sf, y + out, count);
                        });
    });
  });
  return true;
}

} // namespace

void addBinaryKernels(KernelRuns &table) {
  table["add"] = &runArithmetic<Add>;
  table["sub"] = &runArithmetic<Sub>;
  table["mul"] = &runArithmetic<Mul>;
  table["div"] = &runArithmetic<Div>;
  table["pow"] = &runArithmetic<Pow>;
  table["max"] = &runArithmetic<Max>;
  table["min"] = &runArithmetic<Min>;
  table["prelu"] = &runArithmetic<PRelu>;
  table["equal"] = &runComparison<Equal>;
  table["less"] = &runComparison<Less>;
  table["greater"] = &runComparison<Greater>;
  table["greater_equal"] = &runComparison<GreaterEqual>;
  table["less_equal"] = &runComparison<LessEqual>;
  table["where"] = &runWhere;
}

} // namespace memc::kernels
