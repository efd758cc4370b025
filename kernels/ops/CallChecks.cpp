//===- CallChecks.cpp - building blocks of the ops' checks ----------------===//
#include "kernels/ops/CallChecks.h"

#include <algorithm>
#include <cmath>

namespace memc::kernels {

namespace {

bool checkTensor(const TensorView &tensor, const std::string &role, DTypeSet storageTypes,
                 std::string &error) {
  const DTypeInfo *row = findDType(tensor.dtype);
  if (!row) {
    error = role + " has an unknown element type " + std::to_string(static_cast<int>(tensor.dtype));
    return false;
  }
  if (!row->computed &&
      std::find(storageTypes.begin(), storageTypes.end(), tensor.dtype) == storageTypes.end()) {
    error = role + " is " + row->name + ", a storage-only element type no kernel computes";
    return false;
  }
  int64_t count;
  if (!checkedNumElements(tensor.shape, count) ||
      count > kMaxElements / static_cast<int64_t>(dtypeSize(tensor.dtype))) {
    error = role + " has an invalid shape " + formatShape(tensor.shape);
    return false;
  }
  return true;
}

const char *kindName(const AttributeValue &value) {
  switch (value.index()) {
  case 0:
    return "an integer";
  case 1:
    return "a float";
  case 2:
    return "an integer list";
  default:
    return "a string";
  }
}

/// The message for a missing attribute or one of the wrong kind.
bool attributeError(const Attributes &attributes, const std::string &name, const char *expected,
                    std::string &error) {
  auto it = attributes.all().find(name);
  if (it == attributes.all().end())
    error = "missing attribute '" + name + "' (" + expected + ")";
  else
    error = "attribute '" + name + "' must be " + expected + ", got " + kindName(it->second);
  return false;
}

} // namespace

std::string describe(const TensorView &tensor) {
  return std::string(dtypeName(tensor.dtype)) + formatShape(tensor.shape);
}

bool checkCall(const KernelCall &call, size_t minInputs, size_t maxInputs, size_t outputs,
               std::string &error, DTypeSet storageTypes) {
  if (call.inputs.size() < minInputs || call.inputs.size() > maxInputs) {
    error = "expected " + std::to_string(minInputs) +
            (maxInputs != minInputs ? " to " + std::to_string(maxInputs) : "") + " inputs, got " +
            std::to_string(call.inputs.size());
    return false;
  }
  if (call.outputs.size() != outputs) {
    error = "expected " + std::to_string(outputs) + " outputs, got " +
            std::to_string(call.outputs.size());
    return false;
  }
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (!checkTensor(call.inputs[i], "input " + std::to_string(i), storageTypes, error))
      return false;
  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (!checkTensor(call.outputs[i], "output " + std::to_string(i), storageTypes, error))
      return false;
  return true;
}

bool checkDType(const TensorView &tensor, DTypeSet allowed, const std::string &role,
                std::string &error) {
  if (std::find(allowed.begin(), allowed.end(), tensor.dtype) != allowed.end())
    return true;
  error = role + " has element type " + dtypeName(tensor.dtype) + ", expected one of";
  for (DType dtype : allowed)
    error += std::string(" ") + dtypeName(dtype);
  return false;
}

bool checkSameDType(const TensorView &tensor, const TensorView &reference, const std::string &role,
                    const std::string &referenceRole, std::string &error) {
  if (tensor.dtype == reference.dtype)
    return true;
  error = role + " has element type " + dtypeName(tensor.dtype) + " but " + referenceRole +
          " has " + dtypeName(reference.dtype);
  return false;
}

bool checkShape(const TensorView &tensor, const Shape &expected, const std::string &role,
                std::string &error) {
  if (tensor.shape == expected)
    return true;
  error = role + " has shape " + formatShape(tensor.shape) + ", expected " + formatShape(expected);
  return false;
}

bool checkRankAtLeast(const TensorView &tensor, int64_t rank, const std::string &role,
                      std::string &error) {
  if (tensor.rank() >= rank)
    return true;
  error =
      role + " must have rank >= " + std::to_string(rank) + ", got " + formatShape(tensor.shape);
  return false;
}

bool requireInt(const Attributes &attributes, const std::string &name, int64_t &value,
                std::string &error) {
  return attributes.getInt(name, value) || attributeError(attributes, name, "an integer", error);
}

bool requireBool(const Attributes &attributes, const std::string &name, bool &value,
                 std::string &error) {
  int64_t raw;
  if (!attributes.getInt(name, raw))
    return attributeError(attributes, name, "a boolean integer 0 or 1", error);
  if (raw != 0 && raw != 1) {
    error = "attribute '" + name + "' must be 0 or 1, got " + std::to_string(raw);
    return false;
  }
  value = raw == 1;
  return true;
}

bool requireFloat(const Attributes &attributes, const std::string &name, double &value,
                  std::string &error) {
  return attributes.getFloat(name, value) || attributeError(attributes, name, "a float", error);
}

bool checkAxisInRange(int64_t axis, const TensorView &tensor, std::string &error) {
  if (axis >= 0 && axis < tensor.rank())
    return true;
  error = "axis " + std::to_string(axis) + " out of range for " + formatShape(tensor.shape);
  return false;
}

bool checkGeluApproximate(const Attributes &attributes, std::string &error) {
  std::string approximate = "none";
  if (!optionalString(attributes, "approximate", approximate, error))
    return false;
  if (approximate != "none" && approximate != "tanh") {
    error = "attribute 'approximate' must be \"none\" or \"tanh\", got \"" + approximate + "\"";
    return false;
  }
  return true;
}

bool checkEpsilon(const Attributes &attributes, std::string &error) {
  double epsilon;
  if (!requireFloat(attributes, "epsilon", epsilon, error))
    return false;
  if (!(epsilon >= 0.0) || std::isinf(epsilon)) {
    error = "epsilon must be finite and non-negative, got " + std::to_string(epsilon);
    return false;
  }
  return true;
}

bool requireInts(const Attributes &attributes, const std::string &name,
                 std::vector<int64_t> &values, std::string &error) {
  return attributes.getInts(name, values) ||
         attributeError(attributes, name, "an integer list", error);
}

bool optionalFloat(const Attributes &attributes, const std::string &name, bool &present,
                   double &value, std::string &error) {
  present = attributes.has(name);
  return !present || requireFloat(attributes, name, value, error);
}

bool optionalString(const Attributes &attributes, const std::string &name, std::string &value,
                    std::string &error) {
  return !attributes.has(name) || attributes.getString(name, value) ||
         attributeError(attributes, name, "a string", error);
}

AttentionOptionals attentionOptionals(const KernelCall &call, size_t maskIndex) {
  AttentionOptionals optionals;
  size_t end = call.inputs.size();
  if (end > maskIndex && call.inputs[end - 1].dtype == DType::I64)
    optionals.salt = --end;
  if (end > maskIndex)
    optionals.mask = maskIndex;
  return optionals;
}

/// The dropout attributes of an attention call and its salt, if any.
bool checkAttentionDropout(const KernelCall &call, std::optional<size_t> salt,
                           std::string &error) {
  if (salt && !checkShape(call.inputs[*salt], {}, "salt", error))
    return false;
  bool present;
  double ratio = 0.0;
  if (!optionalFloat(attributesOf(call), "dropout_ratio", present, ratio, error))
    return false;
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    error = "dropout_ratio must be in [0, 1), got " + std::to_string(ratio);
    return false;
  }
  int64_t seed;
  return ratio == 0.0 || requireInt(attributesOf(call), "seed", seed, error);
}

bool checkAttentionOperands(const KernelCall &call, size_t first, size_t maskIndex, Shape &output,
                            Shape &logsumexp, std::string &error) {
  const TensorView &query = call.inputs[first], &key = call.inputs[first + 1],
                   &value = call.inputs[first + 2];
  AttentionOptionals optionals = attentionOptionals(call, maskIndex);
  size_t optionalCount = call.inputs.size() - std::min(call.inputs.size(), maskIndex);
  if (optionalCount > 2 || (optionalCount == 2 && !optionals.salt)) {
    error = "flash_attention takes at most a mask and then an i64 salt after its tensors";
    return false;
  }
  if (!checkDType(query, kFloatTypes, "query", error) ||
      !checkSameDType(key, query, "key", "query", error) ||
      !checkSameDType(value, query, "value", "query", error) ||
      (optionals.mask && !checkDType(call.inputs[*optionals.mask], kFloatTypes, "mask", error)) ||
      !checkAttentionDropout(call, optionals.salt, error))
    return false;
  if (!attentionShapes(query.shape, key.shape, value.shape,
                       optionals.mask ? &call.inputs[*optionals.mask].shape : nullptr, output,
                       logsumexp, error))
    return false;
  if (query.shape[3] > kMaxMatrixDimension || value.shape[3] > kMaxMatrixDimension) {
    error =
        "flash_attention head dimensions must be at most " + std::to_string(kMaxMatrixDimension);
    return false;
  }
  bool causal;
  double scale;
  if (!requireBool(attributesOf(call), "causal", causal, error) ||
      !requireFloat(attributesOf(call), "scale", scale, error))
    return false;
  if (!(scale > 0.0) || std::isinf(scale)) {
    error = "scale must be finite and positive, got " + std::to_string(scale);
    return false;
  }
  return true;
}

} // namespace memc::kernels
