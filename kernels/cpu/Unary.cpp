//===- Unary.cpp - elementwise kernels of one operand ---------------------===//
//
// neg exp log sqrt reciprocal erf tanh sigmoid relu not abs sin cos softplus hard_swish, gelu,
// bias_gelu, leaky_relu elu hard_sigmoid clip trilu cast refresh_copy dropout. f16/bf16
// compute in f32; integer arithmetic wraps (two's complement), as PyTorch's does. Every kernel
// reads element i before writing element i and nothing else, so the output may be the input's
// buffer (in-place steps).
//
// Float maps run as f32 array loops cloned per instruction set (VectorMath.h), f16/bf16 through
// f32 chunks, and exp, tanh, erf, sigmoid and gelu use VectorMath's functions instead of libm's
// (at most 2.4 ulp off), so they all vectorize.
//
//===----------------------------------------------------------------------===//
#include "kernels/Clip.h"
#include "kernels/DropoutMask.h"
#include "kernels/IntegerArithmetic.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/BiasedRows.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace memc::kernels {

namespace {

/// y[i] = op(x[i]) on f32 arrays (y may be x).
template <typename Op>
MEMC_VECTOR_CLONES void mapFloats(const float *x, float *y, int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = op(x[i]);
}

/// f16/bf16 elements go through f32 chunks of this many, so that the math runs in mapFloats.
constexpr int64_t kFloatChunk = 512;

/// y[i] = op(x[i]) in the compute type, over threads.
template <typename T, typename Op>
void mapElements(const TensorView &input, const TensorView &output, int64_t grain, Op op) {
  const T *x = input.as<T>();
  T *y = output.as<T>();
  parallelFor(0, input.numElements(), grain, [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float>) {
      mapFloats(x + begin, y + begin, end - begin, op);
    } else if constexpr (std::is_same_v<ComputeOf<T>, float>) {
      float chunk[kFloatChunk];
      for (int64_t start = begin; start < end; start += kFloatChunk) {
        int64_t count = std::min(kFloatChunk, end - start);
        for (int64_t i = 0; i < count; ++i)
          chunk[i] = Element<T>::load(x[start + i]);
        mapFloats(chunk, chunk, count, op);
        for (int64_t i = 0; i < count; ++i)
          y[start + i] = Element<T>::store(chunk[i]);
      }
    } else {
      for (int64_t i = begin; i < end; ++i)
        y[i] = Element<T>::store(op(Element<T>::load(x[i])));
    }
  });
}

//===----------------------------------------------------------------------===//
// Attribute-free elementwise functions
//===----------------------------------------------------------------------===//

struct Neg {
  static constexpr TypeClass types = TypeClass::Numeric;
  static constexpr int64_t grain = kElementwiseGrain;
  template <typename C> C operator()(C x) const { return wrapNegate(x); }
};
struct Exp {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return vectormath::exp(x); }
};
struct Log {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return std::log(x); }
};
struct Sqrt {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kElementwiseGrain;
  float operator()(float x) const { return std::sqrt(x); }
};
struct Reciprocal {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kElementwiseGrain;
  float operator()(float x) const { return 1.0f / x; }
};
struct Erf {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return vectormath::erf(x); }
};
struct Tanh {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return vectormath::tanh(x); }
};
struct Sigmoid {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return vectormath::sigmoid(x); }
};
struct Relu {
  static constexpr TypeClass types = TypeClass::Numeric;
  static constexpr int64_t grain = kElementwiseGrain;
  // Written so that NaN passes through, as torch.relu does.
  template <typename C> C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct Not {
  static constexpr TypeClass types = TypeClass::Bool;
  static constexpr int64_t grain = kElementwiseGrain;
  bool operator()(bool x) const { return !x; }
};

struct Abs {
  static constexpr TypeClass types = TypeClass::Numeric;
  static constexpr int64_t grain = kElementwiseGrain;
  // Integers wrap (|INT_MIN| is INT_MIN), as torch.abs.
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_integral_v<C>)
      return x < C(0) ? wrapNegate(x) : x;
    else
      return std::fabs(x);
  }
};
struct Sin {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return std::sin(x); }
};
struct Cos {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  float operator()(float x) const { return std::cos(x); }
};
struct Softplus {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kExpensiveGrain;
  // max(x, 0) + log1p(exp(-|x|)): log(1 + exp(x)) without overflow for large x.
  float operator()(float x) const {
    return std::max(x, 0.0f) + std::log1p(vectormath::exp(-std::fabs(x)));
  }
};
struct HardSwish {
  static constexpr TypeClass types = TypeClass::Float;
  static constexpr int64_t grain = kElementwiseGrain;
  // torch's formula, x * min(max(x + 3, 0), 6) / 6, so results round as torch's do.
  float operator()(float x) const { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
};

template <typename Op> bool runUnary(KernelContext &, const KernelCall &call) {
  visitClass<Op::types>(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    mapElements<T>(call.inputs[0], call.outputs[0], Op::grain, Op());
  });
  return true;
}

//===----------------------------------------------------------------------===//
// gelu
//===----------------------------------------------------------------------===//

/// x Phi(x) with the normal CDF from erf.
struct GeluErf {
  float operator()(float x) const {
    return x * 0.5f * (1.0f + vectormath::erf(x * static_cast<float>(M_SQRT1_2)));
  }
};

/// PyTorch's tanh approximation 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed
/// as the equal x / (1 + e^-2u): one exp, and no cancellation in 1 + tanh(u) for negative x.
struct GeluTanh {
  float operator()(float x) const {
    constexpr auto kBeta = static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5);
    float u = kBeta * (x + 0.044715f * x * x * x);
    return x / (1.0f + vectormath::exp(-2.0f * u));
  }
};

bool runGelu(KernelContext &, const KernelCall &call) {
  std::string approximate = "none";
  attributesOf(call).getString("approximate", approximate);
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (approximate == "tanh")
      mapElements<T>(call.inputs[0], call.outputs[0], kExpensiveGrain, GeluTanh());
    else
      mapElements<T>(call.inputs[0], call.outputs[0], kExpensiveGrain, GeluErf());
  });
  return true;
}

/// y[i] = gelu(x[i] + bias[i]) over one row, the sum in f32 (y may be x).
template <typename T, typename B, typename Gelu>
MEMC_VECTOR_CLONES void biasedGeluRow(const T *x, const B *bias, T *y, int64_t n, Gelu gelu) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = Element<T>::store(gelu(Element<T>::load(x[i]) + Element<B>::load(bias[i])));
}

bool runBiasGelu(KernelContext &, const KernelCall &call) {
  std::string approximate = "none";
  attributesOf(call).getString("approximate", approximate);
  const TensorView &input = call.inputs[0], &bias = call.inputs[1];
  visitDataAndBias(input.dtype, bias.dtype, [&](auto dataTag, auto biasTag) {
    using T = typename decltype(dataTag)::type;
    using B = typename decltype(biasTag)::type;
    const T *x = input.as<T>();
    const B *b = bias.as<B>();
    T *y = call.outputs[0].as<T>();
    int64_t width = bias.numElements();
    parallelForRows(input.numElements(), width, kExpensiveGrain, [&](int64_t offset) {
      if (approximate == "tanh")
        biasedGeluRow(x + offset, b, y + offset, width, GeluTanh());
      else
        biasedGeluRow(x + offset, b, y + offset, width, GeluErf());
    });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// leaky_relu, elu, hard_sigmoid: activations with scalar coefficients
//===----------------------------------------------------------------------===//

bool runLeakyRelu(KernelContext &, const KernelCall &call) {
  auto alpha = static_cast<float>(attributesOf(call).floatOr("alpha", 0.01));
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    mapElements<T>(call.inputs[0], call.outputs[0], kElementwiseGrain,
                   [=](float x) { return x < 0.0f ? alpha * x : x; });
  });
  return true;
}

bool runElu(KernelContext &, const KernelCall &call) {
  auto alpha = static_cast<float>(attributesOf(call).floatOr("alpha", 1.0));
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // expm1 keeps the small negative values exact, as torch's elu does.
    mapElements<T>(call.inputs[0], call.outputs[0], kExpensiveGrain,
                   [=](float x) { return x > 0.0f ? x : alpha * std::expm1(x); });
  });
  return true;
}

bool runHardSigmoid(KernelContext &, const KernelCall &call) {
  auto alpha = static_cast<float>(attributesOf(call).floatOr("alpha", 0.2));
  auto beta = static_cast<float>(attributesOf(call).floatOr("beta", 0.5));
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Written so that NaN passes through.
    mapElements<T>(call.inputs[0], call.outputs[0], kElementwiseGrain, [=](float x) {
      float y = alpha * x + beta;
      if (y < 0.0f)
        y = 0.0f;
      if (y > 1.0f)
        y = 1.0f;
      return y;
    });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// clip
//===----------------------------------------------------------------------===//

bool runClip(KernelContext &, const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  double minBound = -std::numeric_limits<double>::infinity();
  double maxBound = std::numeric_limits<double>::infinity();
  attributes.getFloat("min", minBound);
  attributes.getFloat("max", maxBound);
  visitNumeric(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    mapElements<T>(call.inputs[0], call.outputs[0], kElementwiseGrain,
                   clipFor<ComputeOf<T>>(minBound, maxBound));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// trilu
//===----------------------------------------------------------------------===//

bool runTrilu(KernelContext &, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  int64_t k = 0;
  attributesOf(call).getInt("k", k);
  bool upper = attributesOf(call).intOr("upper", 0) == 1;
  int64_t rows = input.shape[input.rank() - 2], cols = input.shape[input.rank() - 1];
  if (input.numElements() == 0)
    return true;
  int64_t totalRows = input.numElements() / cols;
  visitBits(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = output.as<T>();
    parallelFor(0, totalRows, std::max<int64_t>(1, kElementwiseGrain / cols),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    int64_t i = r % rows;
                    for (int64_t j = 0; j < cols; ++j) {
                      // j - i is small; k is compared, never added, so any k is safe.
                      bool keep = upper ? j - i >= k : j - i <= k;
                      y[r * cols + j] = keep ? x[r * cols + j] : T(0);
                    }
                  }
                });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

bool runCast(KernelContext &, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  if (input.dtype == output.dtype) {
    if (input.data != output.data)
      std::memcpy(output.data, input.data, input.sizeBytes());
    return true;
  }
  visitAny(input.dtype, [&](auto fromTag) {
    visitAny(output.dtype, [&](auto toTag) {
      using From = typename decltype(fromTag)::type;
      using To = typename decltype(toTag)::type;
      const From *x = input.as<From>();
      To *y = output.as<To>();
      parallelFor(0, input.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          y[i] = convertElement<From, To>(x[i]);
      });
    });
  });
  return true;
}

/// Inputs: refresh, source, copy. A cast of `source` where refresh is nonzero; otherwise the
/// copy as it is (nothing to do when the plan writes the result over it, as it does).
bool runRefreshCopy(KernelContext &context, const KernelCall &call) {
  const TensorView &copy = call.inputs[2], &output = call.outputs[0];
  if (ScalarOperand<float>(call.inputs[0]).get() != 0) {
    KernelCall cast = call;
    cast.inputs = {call.inputs[1]};
    return runCast(context, cast);
  }
  if (copy.data != output.data)
    std::memcpy(output.data, copy.data, copy.sizeBytes());
  return true;
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

bool runDropout(KernelContext &, const KernelCall &call) {
  // The mask is a pure function of (seed, salt, i) (DropoutMask.h), so forward, backward and
  // recomputation see the same mask and any thread split gives the same result.
  std::optional<int64_t> salt;
  if (call.inputs.size() == 2)
    salt = ScalarOperand<int64_t>(call.inputs[1]).get();
  DropoutMask mask(attributesOf(call).floatOr("ratio", 0.0), attributesOf(call).intOr("seed", 0),
                   salt);
  float scale = mask.keptScale();
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = call.inputs[0].as<T>();
    T *y = call.outputs[0].as<T>();
    parallelFor(
        0, call.inputs[0].numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            float value = mask.keeps(i) ? Element<T>::load(x[i]) * scale : 0.0f;
            y[i] = Element<T>::store(value);
          }
        });
  });
  return true;
}

} // namespace

void addUnaryKernels(KernelRuns &table) {
  table["neg"] = &runUnary<Neg>;
  table["exp"] = &runUnary<Exp>;
  table["log"] = &runUnary<Log>;
  table["sqrt"] = &runUnary<Sqrt>;
  table["reciprocal"] = &runUnary<Reciprocal>;
  table["erf"] = &runUnary<Erf>;
  table["tanh"] = &runUnary<Tanh>;
  table["sigmoid"] = &runUnary<Sigmoid>;
  table["relu"] = &runUnary<Relu>;
  table["not"] = &runUnary<Not>;
  table["abs"] = &runUnary<Abs>;
  table["sin"] = &runUnary<Sin>;
  table["cos"] = &runUnary<Cos>;
  table["softplus"] = &runUnary<Softplus>;
  table["hard_swish"] = &runUnary<HardSwish>;
  table["leaky_relu"] = &runLeakyRelu;
  table["elu"] = &runElu;
  table["hard_sigmoid"] = &runHardSigmoid;
  table["gelu"] = &runGelu;
  table["bias_gelu"] = &runBiasGelu;
  table["clip"] = &runClip;
  table["trilu"] = &runTrilu;
  table["cast"] = &runCast;
  table["refresh_copy"] = &runRefreshCopy;
  table["dropout"] = &runDropout;
}

} // namespace memc::kernels
