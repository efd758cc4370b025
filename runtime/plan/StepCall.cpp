//===- StepCall.cpp - a plan step as a kernel call without data -----------===//
#include "runtime/plan/StepCall.h"

#include "runtime/plan/Plan.pb.h"
#include "runtime/support/DTypes.h"

namespace memc::runtime {

bool convertStepAttributes(const plan::Step &step, kernels::Attributes &attributes,
                           std::string &error) {
  for (const plan::Attribute &attribute : step.attributes()) {
    if (attribute.name().empty() || attributes.has(attribute.name())) {
      error = "attribute '" + attribute.name() + "'" +
              (attribute.name().empty() ? " has no name" : " appears twice");
      return false;
    }
    switch (attribute.value_case()) {
    case plan::Attribute::kI:
      attributes.set(attribute.name(), attribute.i());
      break;
    case plan::Attribute::kF:
      attributes.set(attribute.name(), attribute.f());
      break;
    case plan::Attribute::kInts:
      attributes.set(attribute.name(), std::vector<int64_t>(attribute.ints().values().begin(),
                                                            attribute.ints().values().end()));
      break;
    case plan::Attribute::kS:
      attributes.set(attribute.name(), attribute.s());
      break;
    case plan::Attribute::VALUE_NOT_SET:
      error = "attribute '" + attribute.name() + "' has no value";
      return false;
    }
  }
  return true;
}

bool describeStepCall(const plan::Plan &plan, const plan::Step &step,
                      const kernels::Attributes &attributes, kernels::KernelCall &call,
                      std::string &error) {
  auto describe = [&](uint32_t index, const char *role, std::vector<kernels::TensorView> &views) {
    if (index >= static_cast<uint32_t>(plan.buffers_size())) {
      error = std::string(role) + " buffer " + std::to_string(index) +
              " does not exist (the plan has " + std::to_string(plan.buffers_size()) + ")";
      return false;
    }
    const plan::Buffer &buffer = plan.buffers(static_cast<int>(index));
    DType dtype;
    if (!dtypeFromValue(buffer.dtype(), dtype)) {
      error = std::string(role) + " buffer " + std::to_string(index) + " has unknown dtype " +
              std::to_string(buffer.dtype());
      return false;
    }
    views.push_back({nullptr, dtype, std::vector<int64_t>(buffer.shape().begin(),
                                                          buffer.shape().end())});
    return true;
  };
  call = kernels::KernelCall();
  for (uint32_t input : step.inputs())
    if (!describe(input, "input", call.inputs))
      return false;
  for (uint32_t output : step.outputs())
    if (!describe(output, "output", call.outputs))
      return false;
  call.attributes = &attributes;
  return true;
}

} // namespace memc::runtime
