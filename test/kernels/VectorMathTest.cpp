//===- VectorMathTest.cpp - VectorMath's functions against f64 libm -------===//
//
// Sweeps f32 inputs through exp, tanh, erf and sigmoid, compiled for each instruction set the
// kernels' clones pick from that this CPU runs (baseline x86-64, x86-64-v3, x86-64-v4), and
// bounds the error in ulps of the exact result (libm's f64 function); then the special values.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/VectorMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace memc::kernels {
namespace {

enum class Function { Exp, Tanh, Erf, Sigmoid };

template <Function F> float apply(float x) {
  if constexpr (F == Function::Exp)
    return vectormath::exp(x);
  else if constexpr (F == Function::Tanh)
    return vectormath::tanh(x);
  else if constexpr (F == Function::Erf)
    return vectormath::erf(x);
  else
    return vectormath::sigmoid(x);
}

double exact(Function f, double x) {
  switch (f) {
  case Function::Exp:
    return std::exp(x);
  case Function::Tanh:
    return std::tanh(x);
  case Function::Erf:
    return std::erf(x);
  case Function::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  }
  return 0.0;
}

// The same loop compiled for each instruction set, as the kernels' clones are.
template <Function F> void applyBaseline(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = apply<F>(x[i]);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
template <Function F>
__attribute__((target("arch=x86-64-v3"))) void applyV3(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = apply<F>(x[i]);
}

template <Function F>
__attribute__((target("arch=x86-64-v4"))) void applyV4(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = apply<F>(x[i]);
}
#endif

using ArrayFunction = std::function<void(const float *, float *, int64_t)>;

/// The variants of F this CPU runs, by name.
template <Function F> std::vector<std::pair<std::string, ArrayFunction>> variants() {
  std::vector<std::pair<std::string, ArrayFunction>> result{{"x86-64", &applyBaseline<F>}};
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v3"))
    result.emplace_back("x86-64-v3", &applyV3<F>);
  if (__builtin_cpu_supports("x86-64-v4"))
    result.emplace_back("x86-64-v4", &applyV4<F>);
#endif
  return result;
}

/// |got - want| in units in the last place of want as an f32 (subnormal spacing below
/// 2^-126). Infinities and NaN must match exactly.
double ulpError(float got, double want) {
  if (std::isnan(want))
    return std::isnan(got) ? 0.0 : INFINITY;
  auto rounded = static_cast<float>(want);
  if (std::isinf(rounded) || std::isinf(got))
    return got == rounded ? 0.0 : INFINITY;
  int exponent = std::max(std::ilogb(want), -126); // ilogb(0) is below any f32 exponent
  return std::abs(static_cast<double>(got) - want) / std::ldexp(1.0, exponent - 23);
}

/// Every 1021st f32 bit pattern (4.2 million inputs of every sign and exponent).
std::vector<float> sweepInputs() {
  std::vector<float> inputs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 1021)
    inputs.push_back(vectormath::floatOf(static_cast<uint32_t>(bits)));
  return inputs;
}

template <Function F> void expectWithinUlps(double bound) {
  static const std::vector<float> inputs = sweepInputs();
  std::vector<float> outputs(inputs.size());
  for (const auto &[name, function] : variants<F>()) {
    function(inputs.data(), outputs.data(), static_cast<int64_t>(inputs.size()));
    double worst = 0.0;
    float worstInput = 0.0f;
    for (size_t i = 0; i < inputs.size(); ++i) {
      double error = ulpError(outputs[i], exact(F, inputs[i]));
      if (error > worst) {
        worst = error;
        worstInput = inputs[i];
      }
    }
    EXPECT_LE(worst, bound) << name << ": worst at x = " << worstInput;
  }
}

// Every f32 input was checked once: 1.004 ulp at most (with FMA), hence the bound's slack.
TEST(VectorMath, ExpWithinOneUlp) { expectWithinUlps<Function::Exp>(1.01); }
TEST(VectorMath, TanhWithinTwoUlps) { expectWithinUlps<Function::Tanh>(2.0); }
TEST(VectorMath, ErfWithinTwoUlps) { expectWithinUlps<Function::Erf>(2.0); }
TEST(VectorMath, SigmoidWithinTwoAndAHalfUlps) { expectWithinUlps<Function::Sigmoid>(2.5); }

/// Bit-exact expectation (tells -0 from +0 and compares NaN with NaN).
void expectSame(float got, float want, const char *what) {
  EXPECT_EQ(vectormath::bitsOf(got), vectormath::bitsOf(want))
      << what << ": got " << got << ", want " << want;
}

TEST(VectorMath, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expectSame(vectormath::exp(0.0f), 1.0f, "exp(0)");
  expectSame(vectormath::exp(-inf), 0.0f, "exp(-inf)");
  expectSame(vectormath::exp(inf), inf, "exp(inf)");
  expectSame(vectormath::exp(88.8f), inf, "exp overflow");
  expectSame(vectormath::exp(-104.0f), 0.0f, "exp underflow");
  EXPECT_TRUE(std::isnan(vectormath::exp(nan)));
  EXPECT_TRUE(std::isfinite(vectormath::exp(88.7228f))) << "the largest finite results";

  expectSame(vectormath::tanh(0.0f), 0.0f, "tanh(0)");
  expectSame(vectormath::tanh(-0.0f), -0.0f, "tanh(-0)");
  expectSame(vectormath::tanh(inf), 1.0f, "tanh(inf)");
  expectSame(vectormath::tanh(-inf), -1.0f, "tanh(-inf)");
  expectSame(vectormath::tanh(-20.0f), -1.0f, "tanh(-20)");
  EXPECT_TRUE(std::isnan(vectormath::tanh(nan)));

  expectSame(vectormath::erf(0.0f), 0.0f, "erf(0)");
  expectSame(vectormath::erf(-0.0f), -0.0f, "erf(-0)");
  expectSame(vectormath::erf(inf), 1.0f, "erf(inf)");
  expectSame(vectormath::erf(-inf), -1.0f, "erf(-inf)");
  expectSame(vectormath::erf(5.0f), 1.0f, "erf(5)");
  EXPECT_TRUE(std::isnan(vectormath::erf(nan)));

  expectSame(vectormath::sigmoid(0.0f), 0.5f, "sigmoid(0)");
  expectSame(vectormath::sigmoid(inf), 1.0f, "sigmoid(inf)");
  expectSame(vectormath::sigmoid(-inf), 0.0f, "sigmoid(-inf)");
  EXPECT_GT(vectormath::sigmoid(-100.0f), 0.0f) << "subnormal results, not 1 / (1 + inf)";
  EXPECT_TRUE(std::isnan(vectormath::sigmoid(nan)));
}

} // namespace
} // namespace memc::kernels
