//===- Optimizers.cpp - sgd_update and adamw_update -----------------------===//
//
// One optimizer step for one parameter, elementwise and in place: the plan writes the new
// parameter and state over the old ones; with the gate off, nothing changes. The arithmetic follows torch.optim's single-tensor
// implementations operation by operation (in f32), so losses track PyTorch's step for step.
//
//===----------------------------------------------------------------------===//
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

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

bool runAdamW(KernelContext &context, const KernelCall &call) {
  if (gatedOff(call, 6, {0, 2, 3}))
    return true;
  const Attributes &attributes = attributesOf(call);
  double beta1 = attributes.floatOr("beta1", 0.9), beta2 = attributes.floatOr("beta2", 0.999);
  float eps = attributes.floatOr("eps", 1e-8), decay = attributes.floatOr("weight_decay", 0);
  // The step is a device tensor (the graph counts it): the bias corrections come from it here,
  // in the kernel body, as in torch's capturable AdamW.
  double lr = ScalarOperand<float>(call.inputs[4]).get();
  double step = ScalarOperand<float>(call.inputs[5]).get();
  if (!(step >= 1))
    return context.fail("adamw_update: the step number must be at least 1, got " +
                        std::to_string(step));
  // torch: step_size = lr / (1 - beta1^t); denom = sqrt(v) / sqrt(1 - beta2^t) + eps.
  float stepSize = static_cast<float>(lr / (1.0 - std::pow(beta1, step)));
  float correction2Sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, step)));
  float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  float shrink = static_cast<float>(1.0 - lr * decay);
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *param = call.inputs[0].as<T>(), *grad = call.inputs[1].as<T>();
    const float *m = call.inputs[2].as<float>(), *v = call.inputs[3].as<float>();
    T *newParam = call.outputs[0].as<T>();
    float *newM = call.outputs[1].as<float>(), *newV = call.outputs[2].as<float>();
    parallelFor(0, call.inputs[0].numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float p = Element<T>::load(param[i]) * shrink;
        float g = Element<T>::load(grad[i]);
        float first = m[i] * b1 + (1.0f - b1) * g;
        float second = v[i] * b2 + (1.0f - b2) * g * g;
        newM[i] = first;
        newV[i] = second;
        float denominator = std::sqrt(second) / correction2Sqrt + eps;
        newParam[i] = Element<T>::store(p - stepSize * (first / denominator));
      }
    });
  });
  return true;
}

} // namespace

void addOptimizerKernels(KernelRuns &table) {
  table["sgd_update"] = &runSgd;
  table["adamw_update"] = &runAdamW;
}

} // namespace memc::kernels
