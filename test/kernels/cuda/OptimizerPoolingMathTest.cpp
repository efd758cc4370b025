//===- OptimizerPoolingMathTest.cpp - the CUDA optimizers' and pools' arithmetic ===//
//
// The CUDA optimizer and pooling kernels do OptimizerMath.h's and PoolingMath.h's arithmetic
// per element or window; here those functions run on the host, as the kernels run them, over
// random inputs, and must give the CPU kernels' outputs to the bit (both compute the same f32
// operations in the same order: the device differs only where its pow rounds a bias
// correction's double differently).
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "kernels/DeviceError.h"
#include "kernels/DynamicQuantization.h"
#include "kernels/KernelTargets.h"
#include "kernels/ShapeRules.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cuda/OptimizerMath.h"
#include "kernels/cuda/PoolingMath.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace memc::kernels::testing {
namespace {

using namespace cuda;

/// The bits element i of `t` is stored as (f32: 32 bits, f16/bf16: 16).
uint32_t storedBits(const OwnedTensor &t, int64_t i) {
  if (t.dtype == DType::F32)
    return floatBits(t.as<float>()[i]);
  return t.as<uint16_t>()[i];
}

/// The bits `value` is stored as in a tensor of `dtype`, rounded as the kernels store it.
uint32_t bitsAs(DType dtype, float value) {
  if (dtype == DType::F16)
    return floatToHalf(value);
  if (dtype == DType::BF16)
    return floatToBFloat16(value);
  return floatBits(value);
}

/// Expects `actual` (a CPU kernel's output) to hold `expected`'s values stored as its dtype.
void expectSameBits(const OwnedTensor &actual, const std::vector<float> &expected,
                    const std::string &what) {
  ASSERT_EQ(actual.numElements(), static_cast<int64_t>(expected.size())) << what;
  int mismatches = 0;
  for (int64_t i = 0; i < actual.numElements(); ++i)
    if (storedBits(actual, i) != bitsAs(actual.dtype, expected[i]) && mismatches++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: CPU " << actual.at(i) << ", CUDA math "
                    << expected[i];
  EXPECT_EQ(mismatches, 0) << what;
}

/// A tensor of `dtype` with normal values of standard deviation `scale`.
OwnedTensor randomTensor(DType dtype, Shape shape, uint32_t seed, double scale = 1.0) {
  OwnedTensor values = randomF32(shape, seed, scale);
  return tensor(dtype, std::move(shape), values.values());
}

const DType kFloatDTypes[] = {DType::F32, DType::F16, DType::BF16};

TEST(OptimizerMath, SgdIsTheCpuKernelToTheBit) {
  const int64_t n = 777;
  const Attributes settingsCases[] = {
      attrs({{"momentum", 0.9}, {"weight_decay", 0.01}, {"nesterov", int64_t{1}}}),
      attrs({{"momentum", 0.0}, {"weight_decay", 0.0}, {"nesterov", int64_t{0}}}),
      attrs({{"momentum", 0.5}, {"weight_decay", 0.0}, {"nesterov", int64_t{0}}})};
  for (DType dtype : kFloatDTypes)
    for (const Attributes &attributes : settingsCases) {
      OwnedTensor param = randomTensor(dtype, {n}, 1), grad = randomTensor(dtype, {n}, 2, 0.1);
      OwnedTensor velocity = randomTensor(dtype, {n}, 3, 0.1), lr = f32({}, {0.05});
      std::vector<OwnedTensor> cpu = runKernel("sgd_update", {param, grad, velocity, lr},
                                               {{dtype, {n}}, {dtype, {n}}}, attributes);
      const SgdSettings settings = sgdSettings(attributes);
      std::vector<float> newParam(n), newVelocity(n);
      for (int64_t i = 0; i < n; ++i) {
        float v = static_cast<float>(velocity.at(i));
        newParam[i] = sgdUpdate(settings, 0.05f, static_cast<float>(param.at(i)),
                                static_cast<float>(grad.at(i)), v);
        newVelocity[i] = v;
      }
      expectSameBits(cpu[0], newParam, "sgd param");
      expectSameBits(cpu[1], newVelocity, "sgd velocity");
    }
}

TEST(OptimizerMath, AdamWIsTheCpuKernelToTheBit) {
  const int64_t n = 1000;
  for (DType dtype : kFloatDTypes)
    for (double decay : {0.0, 0.1})
      for (float step : {1.0f, 2.0f, 7.0f, 1000.0f}) {
        Attributes attributes =
            attrs({{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", decay}});
        OwnedTensor param = randomTensor(dtype, {n}, 4), grad = randomTensor(dtype, {n}, 5, 0.1);
        OwnedTensor m = randomF32({n}, 6, 0.01), v = randomF32({n}, 7, 1e-3);
        for (int64_t i = 0; i < n; ++i)
          v.as<float>()[i] = std::fabs(v.as<float>()[i]);
        OwnedTensor lr = f32({}, {1e-3}), stepOperand = f32({}, {step});
        std::vector<OwnedTensor> cpu =
            runKernel("adamw_update", {param, grad, m, v, lr, stepOperand},
                      {{dtype, {n}}, {DType::F32, {n}}, {DType::F32, {n}}}, attributes);
        ASSERT_TRUE(adamWStepIsValid(step));
        const AdamWStep constants = adamWStep(adamWSettings(attributes), 1e-3f, step);
        std::vector<float> newParam(n), newM(n), newV(n);
        for (int64_t i = 0; i < n; ++i) {
          newM[i] = m.as<float>()[i];
          newV[i] = v.as<float>()[i];
          newParam[i] = adamWUpdate(constants, static_cast<float>(param.at(i)),
                                    static_cast<float>(grad.at(i)), newM[i], newV[i]);
        }
        expectSameBits(cpu[0], newParam, "adamw param");
        expectSameBits(cpu[1], newM, "adamw exp_avg");
        expectSameBits(cpu[2], newV, "adamw exp_avg_sq");
      }
}

TEST(OptimizerMath, AStepBelowOneIsRefusedWithTheCpuKernelsMessage) {
  for (float step : {0.0f, 0.5f, -3.0f, std::numeric_limits<float>::quiet_NaN()})
    EXPECT_FALSE(adamWStepIsValid(step)) << step;
  EXPECT_TRUE(adamWStepIsValid(1.0f));
  // The kernel records the step's double by its bits; the host's message is the CPU kernel's
  // (which names the kernel, as the executor does before a device's message).
  OwnedTensor param = f32({2}, {1, 2}), grad = f32({2}, {0.1, 0.2}), m = f32({2}, {0, 0});
  OwnedTensor v = f32({2}, {0, 0}), lr = f32({}, {0.1}), step = f32({}, {0.5});
  std::vector<OwnedTensor> outputs(3, OwnedTensor(DType::F32, {2}));
  Attributes attributes =
      attrs({{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0.0}});
  std::vector<OwnedTensor> inputs = {param, grad, m, v, lr, step};
  KernelCall call = makeCall(inputs, outputs, attributes);
  std::string cpuMessage;
  EXPECT_FALSE(runInContext(kernelNamed("adamw_update"), call, cpuMessage));
  DeviceErrorRecord record;
  record.code = kStepBelowOne;
  double recorded = 0.5f;
  std::memcpy(&record.values[0], &recorded, sizeof recorded);
  EXPECT_EQ("adamw_update: " + describeDeviceError(record), cpuMessage);
}

TEST(OptimizerMath, NearestCodeIndexIsQuantizeNearest) {
  for (bool isSigned : {true, false}) {
    const DynamicCode &code = dynamicCode(isSigned);
    const float *values = isSigned ? momentCodes().first : momentCodes().second;
    auto expectSame = [&](float x) {
      ASSERT_EQ(nearestCodeIndex(values, x), quantizeNearest(code, x))
          << "at " << x << " (bits " << std::hex << floatBits(x) << ")";
    };
    // The code values, the midpoints between neighbours, and the floats right beside them.
    for (int i = 0; i < 256; ++i) {
      float points[] = {values[i], i < 255 ? (values[i] + values[i + 1]) / 2 : 2.0f};
      for (float point : points)
        for (float x : {point, std::nextafter(point, -3.0f), std::nextafter(point, 3.0f)})
          expectSame(x);
    }
    // The whole float line, every 251st pattern but the signaling NaNs, and the specials.
    for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 251) {
      float x = floatFromBits(static_cast<uint32_t>(bits));
      if (!std::isnan(x) || (floatBits(x) & 0x400000u))
        expectSame(x);
    }
    for (float x :
         {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
          -std::numeric_limits<float>::quiet_NaN()})
      expectSame(x);
  }
}

TEST(OptimizerMath, AdamW8bitIsTheCpuKernelToTheBit) {
  // Three whole quantization blocks and a partial one, random codes and absmax (one block's 0),
  // a NaN gradient (its moments NaN, their absmax the rest's): the kernel's block, emulated
  // thread by thread with its arithmetic and its max reduction.
  const int64_t n = 3 * kQuantizationBlock + 100, blocks = 4;
  for (DType dtype : {DType::F32, DType::BF16}) {
    OwnedTensor param = randomTensor(dtype, {n}, 8), grad = randomTensor(dtype, {n}, 9, 0.1);
    if (dtype == DType::F32)
      grad.as<float>()[300] = std::numeric_limits<float>::quiet_NaN();
    OwnedTensor m(DType::U8, {n}), v(DType::U8, {n});
    std::mt19937 random(10);
    for (int64_t i = 0; i < n; ++i) {
      m.as<uint8_t>()[i] = static_cast<uint8_t>(random());
      v.as<uint8_t>()[i] = static_cast<uint8_t>(random());
    }
    OwnedTensor mAbsmax = f32({blocks}, {0.02, 0.0, 0.5, 1e-4});
    OwnedTensor vAbsmax = f32({blocks}, {1e-3, 0.0, 2e-2, 1e-6});
    OwnedTensor lr = f32({}, {1e-3}), step = f32({}, {5});
    Attributes attributes =
        attrs({{"beta1", 0.9}, {"beta2", 0.999}, {"eps", 1e-8}, {"weight_decay", 0.01}});
    std::vector<OwnedTensor> cpu =
        runKernel("adamw8bit_update", {param, grad, m, v, mAbsmax, vAbsmax, lr, step},
                  {{dtype, {n}},
                   {DType::U8, {n}},
                   {DType::U8, {n}},
                   {DType::F32, {blocks}},
                   {DType::F32, {blocks}}},
                  attributes);
    const AdamWStep constants = adamWStep(adamWSettings(attributes), 1e-3f, 5.0f);
    const MomentCodes &codes = momentCodes();
    std::vector<float> newParam(n);
    for (int64_t block = 0; block < blocks; ++block) {
      const int64_t begin = block * kQuantizationBlock;
      std::vector<float> first(kQuantizationBlock, 0.0f), second(kQuantizationBlock, 0.0f);
      float firstMax = 0, secondMax = 0;
      for (int64_t j = 0; j < kQuantizationBlock; ++j) {
        const int64_t i = begin + j;
        if (i < n) {
          first[j] = codeValue(codes.first, m.as<uint8_t>()[i], mAbsmax.as<float>()[block]);
          second[j] = codeValue(codes.second, v.as<uint8_t>()[i], vAbsmax.as<float>()[block]);
          newParam[i] = adamWUpdate(constants, static_cast<float>(param.at(i)),
                                    static_cast<float>(grad.at(i)), first[j], second[j]);
        }
        firstMax = std::fmax(firstMax, absmaxWith(0.0f, std::fabs(first[j])));
        secondMax = std::fmax(secondMax, absmaxWith(0.0f, second[j]));
      }
      EXPECT_EQ(floatBits(cpu[3].as<float>()[block]), floatBits(firstMax)) << "block " << block;
      EXPECT_EQ(floatBits(cpu[4].as<float>()[block]), floatBits(secondMax)) << "block " << block;
      for (int64_t j = 0; j < kQuantizationBlock && begin + j < n; ++j) {
        EXPECT_EQ(cpu[1].as<uint8_t>()[begin + j], codeIndex(codes.first, first[j], firstMax))
            << "exp_avg code " << begin + j;
        EXPECT_EQ(cpu[2].as<uint8_t>()[begin + j], codeIndex(codes.second, second[j], secondMax))
            << "exp_avg_sq code " << begin + j;
      }
    }
    expectSameBits(cpu[0], newParam, "adamw8bit param");
  }
}

/// One pooling call's input shape and window attributes.
struct PoolCase {
  Shape input;
  std::vector<int64_t> kernel, strides, pads, dilations;
  int64_t ceilMode, countIncludePad;

  Attributes attributes() const {
    return attrs({{"kernel_shape", kernel},
                  {"strides", strides},
                  {"pads", pads},
                  {"dilations", dilations},
                  {"ceil_mode", ceilMode},
                  {"count_include_pad", countIncludePad}});
  }
  Shape output() const {
    Shape shape;
    std::string error;
    EXPECT_TRUE(
        windowShape(input, input[1], kernel, strides, pads, dilations, ceilMode == 1, shape, error))
        << error;
    return shape;
  }
};

const PoolCase kPoolCases[] = {
    {{2, 3, 9, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 0, 1},  // ResNet's stem pool
    {{1, 2, 10, 7}, {3, 2}, {2, 3}, {0, 1, 1, 0}, {1, 1}, 1, 0},  // ceil_mode, uneven pads
    {{1, 2, 10, 7}, {3, 2}, {2, 3}, {0, 1, 1, 0}, {1, 1}, 1, 1},  // and counting them
    {{1, 2, 12, 12}, {3, 3}, {1, 2}, {2, 2, 2, 2}, {2, 3}, 0, 0}, // dilated
    {{1, 2, 6, 6}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 0},   // overlapping windows
    {{1, 1, 4, 4}, {2, 2}, {1, 1}, {3, 3, 3, 3}, {1, 1}, 0, 1},   // windows all padding
    {{2, 4, 7, 7}, {7, 7}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 0, 0},   // global
    {{2, 3, 17}, {4}, {3}, {2, 1}, {1}, 1, 1},                    // 1-D
    {{1, 2, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {1, 0, 1, 1, 1, 0}, {1, 2, 1}, 0, 0}, // 3-D
};

/// Values on a coarse grid (so windows hold ties), with -inf and NaN here and there.
OwnedTensor poolInput(DType dtype, const Shape &shape, uint32_t seed) {
  OwnedTensor values = randomF32(shape, seed);
  std::vector<double> grid;
  for (int64_t i = 0; i < values.numElements(); ++i)
    grid.push_back(i % 23 == 5   ? -std::numeric_limits<double>::infinity()
                   : i % 41 == 7 ? std::numeric_limits<double>::quiet_NaN()
                                 : std::round(values.at(i) * 2) / 2);
  return tensor(dtype, shape, grid);
}

template <typename T> const T *elements(const OwnedTensor &t) { return t.as<T>(); }

/// Every output's maximum tap, as max_pool_with_argmax's kernel (and max_pool_grad's first pass)
/// finds it.
std::vector<WindowArgmax> argmaxes(const PoolGeometry &g, const OwnedTensor &input) {
  std::vector<WindowArgmax> result;
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t plane = 0; plane < g.planes; ++plane)
      for (int64_t p = 0; p < g.outPlane; ++p)
        result.push_back(windowArgmax(g, elements<T>(input) + plane * g.inPlane, p));
  });
  return result;
}

TEST(PoolingMath, ForwardPoolsAreTheCpuKernelsToTheBit) {
  for (const PoolCase &pool : kPoolCases)
    for (DType dtype : kFloatDTypes) {
      SCOPED_TRACE(formatShape(pool.input) + " kernel " + formatShape(pool.kernel));
      Attributes attributes = pool.attributes();
      Shape output = pool.output();
      OwnedTensor input = poolInput(dtype, pool.input, 11);
      const PoolGeometry g = poolGeometry(pool.input, output, attributes);
      std::vector<WindowArgmax> best = argmaxes(g, input);

      std::vector<float> maxima, averages;
      std::vector<uint8_t> taps;
      visitFloat(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t plane = 0; plane < g.planes; ++plane)
          for (int64_t p = 0; p < g.outPlane; ++p) {
            const T *in = elements<T>(input) + plane * g.inPlane;
            const WindowArgmax &window = best[plane * g.outPlane + p];
            maxima.push_back(window.offset < 0 ? -std::numeric_limits<float>::infinity()
                                               : loadFloat(in, window.offset));
            taps.push_back(static_cast<uint8_t>(window.tap));
            averages.push_back(windowAverage(g, in, p));
          }
      });
      expectSameBits(runKernel("max_pool", {input}, {{dtype, output}}, attributes)[0], maxima,
                     "max_pool");
      expectSameBits(runKernel("avg_pool", {input}, {{dtype, output}}, attributes)[0], averages,
                     "avg_pool");
      std::vector<OwnedTensor> withArgmax = runKernel(
          "max_pool_with_argmax", {input}, {{dtype, output}, {DType::U8, output}}, attributes);
      expectSameBits(withArgmax[0], maxima, "max_pool_with_argmax");
      for (size_t i = 0; i < taps.size(); ++i)
        ASSERT_EQ(withArgmax[1].as<uint8_t>()[i], taps[i]) << "tap index " << i;
    }
}

/// result[i] = at(plane, x) for every input-plane element x of every plane.
template <typename At> std::vector<float> gathered(const PoolGeometry &g, At &&at) {
  std::vector<float> result;
  for (int64_t plane = 0; plane < g.planes; ++plane)
    for (int64_t x = 0; x < g.inPlane; ++x)
      result.push_back(at(plane, x));
  return result;
}

TEST(PoolingMath, GradientsGatherTheCpuKernelsScatterToTheBit) {
  const std::pair<DType, DType> types[] = {{DType::F32, DType::F32},
                                           {DType::BF16, DType::BF16},
                                           {DType::F16, DType::F32}, // input, grad
                                           {DType::F32, DType::BF16}};
  for (const PoolCase &pool : kPoolCases)
    for (auto [dtype, gradType] : types) {
      SCOPED_TRACE(formatShape(pool.input) + " kernel " + formatShape(pool.kernel));
      Attributes attributes = pool.attributes();
      Shape output = pool.output();
      OwnedTensor input = poolInput(dtype, pool.input, 12);
      OwnedTensor grad = randomTensor(gradType, output, 13);
      OwnedTensor sameTypeGrad = randomTensor(dtype, output, 14);
      OwnedTensor savedTaps(DType::U8, output);
      std::mt19937 random(15);
      for (int64_t i = 0; i < savedTaps.numElements(); ++i) // any byte: read modulo the taps
        savedTaps.as<uint8_t>()[i] = static_cast<uint8_t>(random());
      const PoolGeometry g = poolGeometry(pool.input, output, attributes);
      std::vector<int32_t> firstPass;
      for (const WindowArgmax &window : argmaxes(g, input))
        firstPass.push_back(static_cast<int32_t>(window.tap));

      std::vector<float> maxGrad, argmaxGrad, avgGrad;
      visitFloat(gradType, [&](auto tag) {
        using G = typename decltype(tag)::type;
        const G *dy = elements<G>(grad);
        const uint8_t *saved = savedTaps.as<uint8_t>();
        maxGrad = gathered(g, [&](int64_t plane, int64_t x) {
          const int64_t at = plane * g.outPlane;
          return maxPoolGradAt(g, dy + at, firstPass.data() + at, x);
        });
        argmaxGrad = gathered(g, [&](int64_t plane, int64_t x) {
          const int64_t at = plane * g.outPlane;
          return maxPoolGradAt(g, dy + at, saved + at, x);
        });
      });
      visitFloat(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        avgGrad = gathered(g, [&](int64_t plane, int64_t x) {
          return avgPoolGradAt(g, elements<T>(sameTypeGrad) + plane * g.outPlane, x);
        });
      });
      expectSameBits(
          runKernel("max_pool_grad", {grad, input}, {{dtype, pool.input}}, attributes)[0], maxGrad,
          "max_pool_grad");
      expectSameBits(runKernel("max_pool_grad_argmax", {grad, savedTaps}, {{dtype, pool.input}},
                               attributes)[0],
                     argmaxGrad, "max_pool_grad_argmax");
      expectSameBits(
          runKernel("avg_pool_grad", {sameTypeGrad}, {{dtype, pool.input}}, attributes)[0], avgGrad,
          "avg_pool_grad");
    }
}

TEST(OptimizerPoolingTarget, ListsTheGroupsOpsWithTheirLimitsAndWorkspace) {
  const KernelTable &cuda = *targetContracts(kCudaTarget);
  for (const char *op :
       {"sgd_update", "adamw_update", "adamw8bit_update", "max_pool", "max_pool_with_argmax",
        "avg_pool", "max_pool_grad", "max_pool_grad_argmax", "avg_pool_grad"})
    EXPECT_TRUE(cuda.count(op)) << op;

  const PoolCase &stem = kPoolCases[0];
  Attributes attributes = stem.attributes();
  KernelCall grad;
  grad.inputs = {TensorView{nullptr, DType::F32, stem.output()},
                 TensorView{nullptr, DType::BF16, stem.input}};
  grad.outputs = {TensorView{nullptr, DType::BF16, stem.input}};
  grad.attributes = &attributes;
  std::string error;
  EXPECT_TRUE(checkKernelCall(cuda.at("max_pool_grad"), grad, error)) << error;
  EXPECT_EQ(workspaceBytes(cuda.at("max_pool_grad"), grad),
            alignedToWorkspace(grad.inputs[0].numElements() * sizeof(int32_t)));

  // Four spatial dimensions: the op's check takes them, the CUDA target does not.
  Attributes fourD = attrs({{"kernel_shape", std::vector<int64_t>{2, 2, 2, 2}},
                            {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                            {"pads", std::vector<int64_t>(8, 0)},
                            {"dilations", std::vector<int64_t>{1, 1, 1, 1}},
                            {"ceil_mode", int64_t{0}}});
  KernelCall pool;
  pool.inputs = {TensorView{nullptr, DType::F32, {1, 1, 3, 3, 3, 3}}};
  pool.outputs = {TensorView{nullptr, DType::F32, {1, 1, 2, 2, 2, 2}}};
  pool.attributes = &fourD;
  ASSERT_TRUE(kernelNamed("max_pool").check(pool, error)) << error;
  EXPECT_FALSE(checkKernelCall(cuda.at("max_pool"), pool, error));
  EXPECT_NE(error.find("max_pool: the CUDA target pools over 1 to 3 spatial dimensions"),
            std::string::npos)
      << error;
}

} // namespace
} // namespace memc::kernels::testing
