//===- MergedAdapters.cpp - a LoRA program's weights as one model ---------===//
#include "runtime/train/MergedAdapters.h"

#include "kernels/NormalFloat4.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/support/DTypes.h"
#include "runtime/support/FloatConversion.h"

#include <cstring>
#include <memory>

namespace memc::runtime {

namespace {

/// The parts of one saved weight: its packed NF4 bytes and scales, or its own values; and its
/// adapters.
struct WeightParts {
  const PlanBinding *values = nullptr;
  const PlanBinding *absmax = nullptr, *nestedAbsmax = nullptr, *nestedOffset = nullptr;
  const PlanBinding *loraA = nullptr, *loraB = nullptr;
  bool fanInFanOut = false;
};

const PlanBinding *bindingNamed(const LoadedPlan &plan, const std::string &name) {
  for (const PlanBinding &binding : plan.parameters)
    if (binding.name == name)
      return &binding;
  return nullptr;
}

/// A parameter's whole shape (a ZeRO stage 3 binding's buffer is its shard).
const std::vector<int64_t> &wholeShape(const LoadedPlan &plan, const PlanBinding &binding) {
  return binding.shardOf.empty() ? plan.buffers[binding.buffer].shape : binding.shardOf;
}

bool isNf4(const LoadedPlan &plan, const WeightParts &parts) {
  return parts.values && plan.buffers[parts.values->buffer].dtype == DType::U8 && parts.absmax;
}

WeightParts partsOf(const plan::Training &training, const LoadedPlan &plan,
                    const std::string &name) {
  WeightParts parts;
  parts.values = bindingNamed(plan, name);
  parts.absmax = bindingNamed(plan, name + ".absmax");
  parts.nestedAbsmax = bindingNamed(plan, name + ".nested_absmax");
  parts.nestedOffset = bindingNamed(plan, name + ".nested_offset");
  const plan::LoraAdapters &lora = training.lora();
  for (int i = 0; i < lora.target_modules_size(); ++i)
    if (lora.target_modules(i) + ".weight" == name) {
      parts.loraA = bindingNamed(plan, lora.target_modules(i) + ".lora_A.weight");
      parts.loraB = bindingNamed(plan, lora.target_modules(i) + ".lora_B.weight");
      parts.fanInFanOut = i < lora.fan_in_fan_out_size() && lora.fan_in_fan_out(i);
    }
  return parts;
}

/// The binding's values as f32 (parameters are in binding order in `parameters`).
std::vector<float> floatsOf(const LoadedPlan &plan, const NamedArrays &parameters,
                            const PlanBinding &binding) {
  const HostArray &array = parameters[&binding - plan.parameters.data()].second;
  const uint64_t count = array.bytes.size() / elementSize(array.dtype);
  std::vector<uint8_t> bytes = array.dtype == DType::F32
                                   ? array.bytes
                                   : convertFloats(array.dtype, array.bytes.data(), count,
                                                   DType::F32);
  std::vector<float> values(count);
  std::memcpy(values.data(), bytes.data(), count * sizeof(float));
  return values;
}

} // namespace

bool isMergedWeight(const plan::Training &training, const LoadedPlan &plan,
                    const plan::OnnxInitializer &initializer, std::string &error) {
  error.clear();
  if (!training.has_lora())
    return false;
  WeightParts parts = partsOf(training, plan, initializer.name());
  if (!isNf4(plan, parts) && !parts.loraA)
    return false;
  std::vector<int64_t> dims(initializer.dims().begin(), initializer.dims().end());
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  const std::string label = "the saved weight '" + initializer.name() + "' " + shapeString(dims);
  if (isNf4(plan, parts) &&
      plan.buffers[parts.values->buffer].size != static_cast<uint64_t>((count + 1) / 2)) {
    error = label + " does not match its NF4 bytes";
    return true;
  }
  if (parts.loraA) {
    if (!parts.loraB || dims.size() != 2) {
      error = label + ": its adapters are incomplete or it is not a matrix";
      return true;
    }
    const std::vector<int64_t> &a = wholeShape(plan, *parts.loraA);
    const std::vector<int64_t> &b = wholeShape(plan, *parts.loraB);
    const int64_t out = parts.fanInFanOut ? dims[1] : dims[0];
    const int64_t in = parts.fanInFanOut ? dims[0] : dims[1];
    if (a.size() != 2 || b.size() != 2 || a[1] != in || b[0] != out || a[0] != b[1]) {
      error = label + " does not match its adapters A " + shapeString(a) + " and B " +
              shapeString(b);
      return true;
    }
  }
  return true;
}

bool mergedWeight(const plan::Training &training, const LoadedPlan &plan,
                  const plan::OnnxInitializer &initializer, const NamedArrays &parameters,
                  HostArray &out, std::string &error) {
  if (!isMergedWeight(training, plan, initializer, error) || !error.empty())
    return false;
  WeightParts parts = partsOf(training, plan, initializer.name());
  out.dtype = DType::F32;
  out.shape.assign(initializer.dims().begin(), initializer.dims().end());
  int64_t count = 1;
  for (int64_t dim : out.shape)
    count *= dim;
  out.bytes.assign(static_cast<size_t>(count) * sizeof(float), 0);
  float *weight = out.as<float>();
  if (isNf4(plan, parts)) {
    auto array = [&](const PlanBinding *binding) -> const HostArray & {
      return parameters[binding - plan.parameters.data()].second;
    };
    kernels::Nf4Absmax absmax;
    if (parts.nestedAbsmax && parts.nestedOffset)
      absmax = kernels::doubleQuantizedAbsmax(array(parts.absmax).as<uint8_t>(),
                                              array(parts.nestedAbsmax).as<float>(),
                                              *array(parts.nestedOffset).as<float>());
    else
      absmax = kernels::Nf4Absmax{array(parts.absmax).as<float>()};
    kernels::dequantizeNf4(array(parts.values).as<uint8_t>(), absmax, 0, count, weight);
  } else {
    std::vector<float> values = floatsOf(plan, parameters, *parts.values);
    std::memcpy(weight, values.data(), out.bytes.size());
  }
  if (!parts.loraA)
    return true;
  // W [out, in] += s B [out, r] A [r, in]; stored [in, out], its transpose.
  const std::vector<float> a = floatsOf(plan, parameters, *parts.loraA);
  const std::vector<float> b = floatsOf(plan, parameters, *parts.loraB);
  const int64_t rank = wholeShape(plan, *parts.loraA)[0];
  const int64_t in = wholeShape(plan, *parts.loraA)[1];
  const int64_t outputs = wholeShape(plan, *parts.loraB)[0];
  const float scale = static_cast<float>(training.lora().alpha() / training.lora().rank());
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t k = 0; k < rank; ++k) {
      const float factor = scale * b[o * rank + k];
      const float *row = a.data() + k * in;
      if (parts.fanInFanOut)
        for (int64_t i = 0; i < in; ++i)
          weight[i * outputs + o] += factor * row[i];
      else
        for (int64_t i = 0; i < in; ++i)
          weight[o * in + i] += factor * row[i];
    }
  return true;
}

} // namespace memc::runtime
