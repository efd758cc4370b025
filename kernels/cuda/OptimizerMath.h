//===- OptimizerMath.h - the CUDA optimizers' arithmetic, per element -*- C++ -*-===//
//
// sgd_update's, adamw_update's and adamw8bit_update's arithmetic for one element, shared by the
// CUDA kernels (Optimizers.cu) and the host test that holds it to the CPU kernels
// (kernels/cpu/Optimizers.cpp): the same operations in the same order, so that a step on the
// GPU gives the CPU's parameters and moments to the bit (up to the device's pow, which
// rounds the double bias corrections within 2 ulp before they are rounded to f32).
//
// AdamW's bias corrections come from the step operand read in the kernel body (torch's
// capturable AdamW); the other constants are attributes, read on the host.
//
// adamw8bit_update's moments use the CPU's dynamic codes and blocks (DynamicQuantization.h). A
// kernel cannot hold a DynamicCode (its search table is 64 KiB), so it carries the 256 code
// values of each code and finds the nearest by binary search (nearestCodeIndex), which gives
// quantizeNearest's index for every value that is not NaN.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_OPTIMIZERMATH_H
#define MEMC_KERNELS_CUDA_OPTIMIZERMATH_H

#include "kernels/DynamicQuantization.h"
#include "kernels/HostDevice.h"
#include "kernels/Kernel.h"

#include <cmath>
#include <cstdint>

namespace memc::kernels::cuda {

/// a * b rounded on its own. The CPU kernels are built for baseline x86-64, without FMA, so
/// each product rounds before it is added; nvcc would fuse a * b + c into one rounding.
MEMC_HOST_DEVICE inline float separateProduct(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

MEMC_HOST_DEVICE inline double separateProduct(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

/// The gate operand (null: none) lets the update through: above 0.5, as the CPU kernel reads it.
MEMC_HOST_DEVICE inline bool gateIsOn(const float *gate) { return !gate || *gate > 0.5f; }

/// sgd_update's attributes, rounded to f32 as the CPU kernel rounds them.
struct SgdSettings {
  float momentum, decay;
  bool nesterov;
};

inline SgdSettings sgdSettings(const Attributes &attributes) {
  return SgdSettings{static_cast<float>(attributes.floatOr("momentum", 0)),
                     static_cast<float>(attributes.floatOr("weight_decay", 0)),
                     attributes.intOr("nesterov", 0) != 0};
}

/// torch.optim.SGD's step for one element: the new parameter; `velocity` becomes the new one.
MEMC_HOST_DEVICE inline float sgdUpdate(const SgdSettings &settings, float lr, float param,
                                        float grad, float &velocity) {
  float d = grad;
  if (settings.decay != 0)
    d += separateProduct(settings.decay, param);
  velocity = separateProduct(settings.momentum, velocity) + d;
  float step = settings.nesterov ? d + separateProduct(settings.momentum, velocity) : velocity;
  return param - separateProduct(lr, step);
}

/// adamw_update's and adamw8bit_update's attributes, as the CPU kernel reads them.
struct AdamWSettings {
  double beta1, beta2;
  float eps, decay;
};

inline AdamWSettings adamWSettings(const Attributes &attributes) {
  return AdamWSettings{attributes.floatOr("beta1", 0.9), attributes.floatOr("beta2", 0.999),
                       static_cast<float>(attributes.floatOr("eps", 1e-8)),
                       static_cast<float>(attributes.floatOr("weight_decay", 0))};
}

/// Whether `step` (the step operand) is a step number AdamW can take: at least 1 (not NaN).
MEMC_HOST_DEVICE inline bool adamWStepIsValid(float step) { return static_cast<double>(step) >= 1; }

/// The constants of one AdamW step, from its settings, lr and a valid step number.
struct AdamWStep {
  float stepSize, correction2Sqrt, beta1, beta2, shrink, eps;
};

MEMC_HOST_DEVICE inline AdamWStep adamWStep(const AdamWSettings &settings, float lrOperand,
                                            float stepOperand) {
  double lr = lrOperand, step = stepOperand;
  // torch: step_size = lr / (1 - beta1^t); denom = sqrt(v) / sqrt(1 - beta2^t) + eps.
  AdamWStep constants;
  constants.stepSize = static_cast<float>(lr / (1.0 - pow(settings.beta1, step)));
  constants.correction2Sqrt = static_cast<float>(sqrt(1.0 - pow(settings.beta2, step)));
  constants.beta1 = static_cast<float>(settings.beta1);
  constants.beta2 = static_cast<float>(settings.beta2);
  constants.shrink = static_cast<float>(1.0 - separateProduct(lr, double(settings.decay)));
  constants.eps = settings.eps;
  return constants;
}

/// torch.optim.AdamW's step for one element: the new parameter; `m` and `v` become the new
/// moments.
MEMC_HOST_DEVICE inline float adamWUpdate(const AdamWStep &c, float param, float grad, float &m,
                                          float &v) {
  float p = separateProduct(param, c.shrink);
  m = separateProduct(m, c.beta1) + separateProduct(1.0f - c.beta1, grad);
  v = separateProduct(v, c.beta2) + separateProduct(separateProduct(1.0f - c.beta2, grad), grad);
  float denominator = sqrtf(v) / c.correction2Sqrt + c.eps;
  return p - separateProduct(c.stepSize, m / denominator);
}

/// The values of adamw8bit_update's two codes (signed for the first moment, unsigned for the
/// second), small enough to pass to a kernel as an argument.
struct MomentCodes {
  float first[256], second[256];
};

/// The codes of DynamicQuantization.h, made once.
inline const MomentCodes &momentCodes() {
  static const MomentCodes codes = [] {
    MomentCodes made;
    for (int i = 0; i < 256; ++i) {
      made.first[i] = dynamicCode(true).values[i];
      made.second[i] = dynamicCode(false).values[i];
    }
    return made;
  }();
  return codes;
}

/// The value code index `index` stands for in a block of `absmax` (dequantize's).
MEMC_HOST_DEVICE inline float codeValue(const float *code, uint8_t index, float absmax) {
  return separateProduct(code[index], absmax);
}

/// The index of the value of `code` (256 ascending) nearest to `normalized`, ties to the lower:
/// quantizeNearest's for every value but a signaling NaN, which no arithmetic makes (the kernel
/// quantizes products; a NaN among them gets quantizeNearest's 1). The last value
/// at or below `normalized` (or 0) by binary search (low + step stays at most 255), then the
/// nearer of it and the next.
MEMC_HOST_DEVICE inline uint8_t nearestCodeIndex(const float *code, float normalized) {
  int low = 0;
  for (int step = 128; step > 0; step >>= 1)
    if (code[low + step] <= normalized)
      low += step;
  int high = low < 255 ? low + 1 : 255;
  return static_cast<uint8_t>(normalized - code[low] <= code[high] - normalized ? low : high);
}

/// The code index of `value` in a block of `absmax` (quantizeWithAbsmax's).
MEMC_HOST_DEVICE inline uint8_t codeIndex(const float *code, float value, float absmax) {
  const float inverse = absmax > 0 ? 1.0f / absmax : 0.0f;
  return nearestCodeIndex(code, separateProduct(value, inverse));
}

/// max(running, value) as std::max takes it, so a NaN value leaves the running absmax alone.
MEMC_HOST_DEVICE inline float absmaxWith(float running, float value) {
  return running < value ? value : running;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_OPTIMIZERMATH_H
