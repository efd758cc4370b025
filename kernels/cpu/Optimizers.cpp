//===- Optimizers.cpp - sgd_update, adamw_update, adamw8bit_update -------===//
//
// One optimizer step for one parameter, elementwise and in place: the plan writes the new
// parameter and state over the old ones; with the gate off, nothing changes. The arithmetic
// follows torch.optim's single-tensor implementations operation by operation (in f32), so
// losses track PyTorch's step for step.
//
//===----------------------------------------------------------------------===//
#include "kernels/DynamicQuantization.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace memc::kernels {
namespace {

/// The update's gate (input `at`, when present) is off: each output keeps its input (`kept[i]`),
/// copied where the plan did not place them together.
bool gatedOff(const KernelCall &call, size_t at, std::initializer_list<size_t> kept) {
  if (call.inputs.size() <= at || ScalarOperand<float>(call.inputs[at]).get() > 0.5f)
    return false;
  size_t output = 0;
  for (size_t input : kept) {
    const TensorView &from = call.inputs[input], &to = call.outputs[output++];
    if (to.data != from.data)
      std::memcpy(to.data, from.data, from.sizeBytes());
  }
  return true;
}

bool runSgd(KernelContext &, const KernelCall &call) {
  if (gatedOff(call, 4, {0, 2}))
    return true;
  const Attributes &attributes = attributesOf(call);
  float momentum = attributes.floatOr("momentum", 0), decay = attributes.floatOr("weight_decay", 0);
  bool nesterov = attributes.intOr("nesterov", 0) != 0;
  float lr = ScalarOperand<float>(call.inputs[3]).get();
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *param = call.inputs[0].as<T>(), *grad = call.inputs[1].as<T>(),
            *velocity = call.inputs[2].as<T>();
    T *newParam = call.outputs[0].as<T>(), *newVelocity = call.outputs[1].as<T>();
    parallelFor(0, call.inputs[0].numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float p = Element<T>::load(param[i]);
        float d = Element<T>::load(grad[i]);
        if (decay != 0)
          d += decay * p;
        float v = momentum * Element<T>::load(velocity[i]) + d;
        float step = nesterov ? d + momentum * v : v;
        newVelocity[i] = Element<T>::store(v);
        newParam[i] = Element<T>::store(p - lr * step);
      }
    });
  });
  return true;
}

/// torch.optim.AdamW's step for one element, in its order of operations, with the constants of
/// one call: adamw_update's and adamw8bit_update's arithmetic.
class AdamWStep {
public:
  /// False with the context's message for a step number below 1.
  bool prepare(KernelContext &context, const KernelCall &call, size_t lrInput, const char *name) {
    const Attributes &attributes = attributesOf(call);
    double beta1 = attributes.floatOr("beta1", 0.9), beta2 = attributes.floatOr("beta2", 0.999);
    eps = attributes.floatOr("eps", 1e-8);
    float decay = attributes.floatOr("weight_decay", 0);
    // The step is a device tensor (the graph counts it): the bias corrections come from it
    // here, in the kernel body, as in torch's capturable AdamW.
    double lr = ScalarOperand<float>(call.inputs[lrInput]).get();
    double step = ScalarOperand<float>(call.inputs[lrInput + 1]).get();
    if (!(step >= 1))
      return context.fail(std::string(name) + ": the step number must be at least 1, got " +
                          std::to_string(step));
    // torch: step_size = lr / (1 - beta1^t); denom = sqrt(v) / sqrt(1 - beta2^t) + eps.
    stepSize = static_cast<float>(lr / (1.0 - std::pow(beta1, step)));
    correction2Sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, step)));
    b1 = static_cast<float>(beta1);
    b2 = static_cast<float>(beta2);
    shrink = static_cast<float>(1.0 - lr * decay);
    return true;
  }

  /// The new parameter; `m` and `v` become the new moments.
  float operator()(float param, float grad, float &m, float &v) const {
    float p = param * shrink;
    m = m * b1 + (1.0f - b1) * grad;
    v = v * b2 + (1.0f - b2) * grad * grad;
    float denominator = std::sqrt(v) / correction2Sqrt + eps;
    return p - stepSize * (m / denominator);
  }

private:
  float stepSize = 0, correction2Sqrt = 1, b1 = 0, b2 = 0, shrink = 1, eps = 0;
};

bool runAdamW(KernelContext &context, const KernelCall &call) {
  if (gatedOff(call, 6, {0, 2, 3}))
    return true;
  AdamWStep adamw;
  if (!adamw.prepare(context, call, 4, "adamw_update"))
    return false;
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *param = call.inputs[0].as<T>(), *grad = call.inputs[1].as<T>();
    const float *m = call.inputs[2].as<float>(), *v = call.inputs[3].as<float>();
    T *newParam = call.outputs[0].as<T>();
    float *newM = call.outputs[1].as<float>(), *newV = call.outputs[2].as<float>();
    parallelFor(0, call.inputs[0].numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float first = m[i], second = v[i];
        float updated =
            adamw(Element<T>::load(param[i]), Element<T>::load(grad[i]), first, second);
        newM[i] = first;
        newV[i] = second;
        newParam[i] = Element<T>::store(updated);
      }
    });
  });
  return true;
}

/// bitsandbytes' AdamW8bit: per block of kQuantizationBlock, the moments dequantized, updated
/// as adamw_update, and quantized with the block's new absmax.
bool runAdamW8bit(KernelContext &context, const KernelCall &call) {
  if (gatedOff(call, 8, {0, 2, 3, 4, 5}))
    return true;
  AdamWStep adamw;
  if (!adamw.prepare(context, call, 6, "adamw8bit_update"))
    return false;
  const DynamicCode &signedCode = dynamicCode(true), &unsignedCode = dynamicCode(false);
  const int64_t elements = call.inputs[0].numElements();
  const int64_t blocks = (elements + kQuantizationBlock - 1) / kQuantizationBlock;
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *param = call.inputs[0].as<T>(), *grad = call.inputs[1].as<T>();
    const uint8_t *m = call.inputs[2].as<uint8_t>(), *v = call.inputs[3].as<uint8_t>();
    const float *mAbsmax = call.inputs[4].as<float>(), *vAbsmax = call.inputs[5].as<float>();
    T *newParam = call.outputs[0].as<T>();
    uint8_t *newM = call.outputs[1].as<uint8_t>(), *newV = call.outputs[2].as<uint8_t>();
    float *newMAbsmax = call.outputs[3].as<float>(), *newVAbsmax = call.outputs[4].as<float>();
    parallelFor(0, blocks, 1, [&](int64_t firstBlock, int64_t endBlock) {
      float first[kQuantizationBlock], second[kQuantizationBlock];
      for (int64_t block = firstBlock; block < endBlock; ++block) {
        const int64_t begin = block * kQuantizationBlock;
        const int64_t count = std::min(kQuantizationBlock, elements - begin);
        float firstMax = 0, secondMax = 0; // the new absmax, tracked as the moments are made
        for (int64_t j = 0; j < count; ++j) {
          const int64_t i = begin + j;
          first[j] = dequantize(signedCode, m[i], mAbsmax[block]);
          second[j] = dequantize(unsignedCode, v[i], vAbsmax[block]);
          newParam[i] = Element<T>::store(
              adamw(Element<T>::load(param[i]), Element<T>::load(grad[i]), first[j], second[j]));
          firstMax = std::max(firstMax, std::fabs(first[j]));
          secondMax = std::max(secondMax, second[j]);
        }
        quantizeWithAbsmax(signedCode, first, count, firstMax, newM + begin);
        quantizeWithAbsmax(unsignedCode, second, count, secondMax, newV + begin);
        newMAbsmax[block] = firstMax;
        newVAbsmax[block] = secondMax;
      }
    });
  });
  return true;
}

} // namespace

void addOptimizerKernels(KernelRuns &table) {
  table["sgd_update"] = &runSgd;
  table["adamw_update"] = &runAdamW;
  table["adamw8bit_update"] = &runAdamW8bit;
}

} // namespace memc::kernels
