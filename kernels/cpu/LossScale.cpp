//===- LossScale.cpp - non_finite_check and loss_scale_update -------------===//
//
// torch.cuda.amp.GradScaler's two device-side pieces: the found_inf test over every gradient
// (_amp_foreach_non_finite_check_and_unscale_'s check; the unscale is a plain mul in the plan)
// and the scale's update (_amp_update_scale_). Both stay in the plan so the step that skips an
// update never waits on the host.
//
//===----------------------------------------------------------------------===//
#include "kernels/ScalarOperand.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <atomic>
#include <cmath>

namespace memc::kernels {
namespace {

bool runNonFiniteCheck(KernelContext &, const KernelCall &call) {
  std::atomic<bool> found{false};
  for (const TensorView &grad : call.inputs)
    visitFloat(grad.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T *values = grad.as<T>();
      parallelFor(0, grad.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
        if (found.load(std::memory_order_relaxed))
          return;
        for (int64_t i = begin; i < end; ++i)
          if (!std::isfinite(Element<T>::load(values[i]))) {
            found.store(true, std::memory_order_relaxed);
            return;
          }
      });
    });
  *call.outputs[0].as<float>() = found.load() ? 1.0f : 0.0f;
  return true;
}

bool runLossScaleUpdate(KernelContext &, const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  auto window = static_cast<float>(attributes.intOr("window", 2000));
  bool dynamic = attributes.intOr("dynamic", 1) != 0;
  float exponent = ScalarOperand<float>(call.inputs[0]).get();
  float growth = ScalarOperand<float>(call.inputs[1]).get();
  float skipped = ScalarOperand<float>(call.inputs[2]).get();
  bool foundInf = ScalarOperand<float>(call.inputs[3]).get() != 0;
  if (foundInf) {
    skipped += 1;
    if (dynamic) {
      exponent -= 1; // backoff 0.5
      growth = 0;
    }
  } else if (dynamic) {
    growth += 1;
    if (growth >= window) { // growth factor 2 after `window` finite steps in a row
      exponent += 1;
      growth = 0;
    }
  }
  *call.outputs[0].as<float>() = exponent;
  *call.outputs[1].as<float>() = growth;
  *call.outputs[2].as<float>() = skipped;
  return true;
}

} // namespace

void addLossScaleKernels(KernelRuns &table) {
  table["non_finite_check"] = &runNonFiniteCheck;
  table["loss_scale_update"] = &runLossScaleUpdate;
}

} // namespace memc::kernels
