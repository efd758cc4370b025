//===- TestKernels.cpp - a tiny f32 kernel table for runtime tests --------===//
#include "TestKernels.h"

#include "runtime/device/cpu/CpuDevice.h"

namespace memc::testing {
namespace {

using kernels::KernelCall;

int64_t count(const kernels::TensorView &tensor) {
  int64_t n = 1;
  for (int64_t dim : tensor.shape)
    n *= dim;
  return n;
}

/// `inputs` f32 inputs and one f32 output, all of the output's shape.
bool checkElementwise(const KernelCall &call, size_t inputs, std::string &error) {
  if (call.inputs.size() != inputs || call.outputs.size() != 1) {
    error = "expects " + std::to_string(inputs) + " inputs and 1 output";
    return false;
  }
  for (const auto *list : {&call.inputs, &call.outputs})
    for (const kernels::TensorView &tensor : *list)
      if (tensor.dtype != kernels::DType::F32 || tensor.shape != call.outputs[0].shape) {
        error = "expects f32 tensors of one shape";
        return false;
      }
  return true;
}

bool checkUnary(const KernelCall &call, std::string &error) {
  return checkElementwise(call, 1, error);
}

bool checkAdd(const KernelCall &call, std::string &error) {
  return checkElementwise(call, 2, error);
}

/// The "factor" attribute, read through all() so the tests need no kernels library.
const double *factorOf(const KernelCall &call) {
  if (!call.attributes)
    return nullptr;
  auto found = call.attributes->all().find("factor");
  return found == call.attributes->all().end() ? nullptr : std::get_if<double>(&found->second);
}

bool checkScale(const KernelCall &call, std::string &error) {
  if (!factorOf(call)) {
    error = "needs the float attribute 'factor'";
    return false;
  }
  return checkElementwise(call, 1, error);
}

bool runAdd(kernels::KernelContext &, const KernelCall &call) {
  const float *a = call.inputs[0].as<float>(), *b = call.inputs[1].as<float>();
  float *out = call.outputs[0].as<float>();
  for (int64_t i = 0; i < count(call.outputs[0]); ++i)
    out[i] = a[i] + b[i];
  return true;
}

bool runRelu(kernels::KernelContext &, const KernelCall &call) {
  const float *in = call.inputs[0].as<float>();
  float *out = call.outputs[0].as<float>();
  for (int64_t i = 0; i < count(call.outputs[0]); ++i)
    out[i] = in[i] > 0 ? in[i] : 0;
  return true;
}

bool runCopy(kernels::KernelContext &, const KernelCall &call) {
  const float *in = call.inputs[0].as<float>();
  float *out = call.outputs[0].as<float>();
  for (int64_t i = 0; i < count(call.outputs[0]); ++i)
    out[i] = in[i];
  return true;
}

bool runScale(kernels::KernelContext &, const KernelCall &call) {
  float factor = static_cast<float>(*factorOf(call));
  const float *in = call.inputs[0].as<float>();
  float *out = call.outputs[0].as<float>();
  for (int64_t i = 0; i < count(call.outputs[0]); ++i)
    out[i] = in[i] * factor;
  return true;
}

bool runPositive(kernels::KernelContext &context, const KernelCall &call) {
  const float *in = call.inputs[0].as<float>();
  for (int64_t i = 0; i < count(call.outputs[0]); ++i) {
    if (in[i] < 0)
      return context.fail("element " + std::to_string(i) + " is negative");
    call.outputs[0].as<float>()[i] = in[i];
  }
  return true;
}

/// gated_copy(x, gate): x where the gate, an f32 scalar, is above 0.5, else zeros; the gate is
/// read from its host copy (TensorView::hostData), as a GPU's gated collective reads it.
bool checkGatedCopy(const KernelCall &call, std::string &error) {
  if (call.inputs.size() != 2 || call.outputs.size() != 1 ||
      call.inputs[1].dtype != kernels::DType::F32 || !call.inputs[1].shape.empty()) {
    error = "expects x and an f32 scalar gate";
    return false;
  }
  return true;
}

bool runGatedCopy(kernels::KernelContext &context, const KernelCall &call) {
  const void *gate = call.inputs[1].hostData;
  if (!gate)
    return context.fail("the gate's value is not known on the host");
  const bool open = *static_cast<const float *>(gate) > 0.5f;
  for (int64_t i = 0; i < count(call.outputs[0]); ++i)
    call.outputs[0].as<float>()[i] = open ? call.inputs[0].as<float>()[i] : 0.0f;
  return true;
}

// staged_copy copies through its workspace, one float per element: the workspace must be there.
uint64_t stagedCopyWorkspace(const KernelCall &call) {
  return static_cast<uint64_t>(count(call.inputs[0])) * sizeof(float);
}

bool runStagedCopy(kernels::KernelContext &context, const KernelCall &call) {
  if (call.workspaceBytes < stagedCopyWorkspace(call) || (count(call.inputs[0]) && !call.workspace))
    return context.fail("no workspace");
  float *stage = static_cast<float *>(call.workspace);
  for (int64_t i = 0; i < count(call.inputs[0]); ++i)
    stage[i] = call.inputs[0].as<float>()[i];
  for (int64_t i = 0; i < count(call.outputs[0]); ++i)
    call.outputs[0].as<float>()[i] = stage[i];
  return true;
}

} // namespace

const kernels::KernelTable &testKernels() {
  static const kernels::KernelTable table = {
      {"add", {checkAdd, runAdd}},
      {"relu", {checkUnary, runRelu}},
      {"copy", {checkUnary, runCopy}},
      {"scale", {checkScale, runScale}},
      {"positive", {checkUnary, runPositive}},
      {"staged_copy", {checkUnary, runStagedCopy, stagedCopyWorkspace}},
      {"gated_copy", {checkGatedCopy, runGatedCopy}},
  };
  return table;
}

runtime::Device &testDevice() {
  static runtime::CpuDevice device(testKernels());
  return device;
}

} // namespace memc::testing
