//===- KernelTestSupport.h - tensors and kernel calls for tests -*- C++ -*-===//
#ifndef MEMC_TEST_KERNELS_KERNELTESTSUPPORT_H
#define MEMC_TEST_KERNELS_KERNELTESTSUPPORT_H

#include "kernels/Float16.h"
#include "kernels/Kernel.h"
#include "kernels/cpu/CpuKernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace memc::kernels::testing {

using Shape = std::vector<int64_t>;

/// A tensor that owns its bytes.
struct OwnedTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;

  OwnedTensor() = default;
  OwnedTensor(DType dtype, Shape shape) : dtype(dtype), shape(std::move(shape)) {
    bytes.assign(view().sizeBytes(), 0);
  }
  TensorView view() const { return TensorView{const_cast<uint8_t *>(bytes.data()), dtype, shape}; }
  int64_t numElements() const { return view().numElements(); }
  template <typename T> T *as() { return reinterpret_cast<T *>(bytes.data()); }
  template <typename T> const T *as() const { return reinterpret_cast<const T *>(bytes.data()); }

  /// Element i as a double (f16/bf16 decoded, bool 0/1).
  double at(int64_t i) const {
    switch (dtype) {
    case DType::F32:
      return as<float>()[i];
    case DType::F16:
      return halfToFloat(as<uint16_t>()[i]);
    case DType::BF16:
      return bfloat16ToFloat(as<uint16_t>()[i]);
    case DType::I64:
      return static_cast<double>(as<int64_t>()[i]);
    case DType::I32:
      return as<int32_t>()[i];
    case DType::Bool:
      return as<uint8_t>()[i] != 0;
    case DType::U8: // max_pool_with_argmax's window taps
      return as<uint8_t>()[i];
    default: // storage-only types: no kernel computes them
      return 0;
    }
  }
  std::vector<double> values() const {
    std::vector<double> result;
    for (int64_t i = 0; i < numElements(); ++i)
      result.push_back(at(i));
    return result;
  }
};

/// A tensor of the given type from doubles (rounded to f16/bf16 through f32).
inline OwnedTensor tensor(DType dtype, Shape shape, const std::vector<double> &values) {
  OwnedTensor t(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.numElements(); ++i) {
    switch (dtype) {
    case DType::F32:
      t.as<float>()[i] = static_cast<float>(values[i]);
      break;
    case DType::F16:
      t.as<uint16_t>()[i] = floatToHalf(static_cast<float>(values[i]));
      break;
    case DType::BF16:
      t.as<uint16_t>()[i] = floatToBFloat16(static_cast<float>(values[i]));
      break;
    case DType::I64:
      t.as<int64_t>()[i] = static_cast<int64_t>(values[i]);
      break;
    case DType::I32:
      t.as<int32_t>()[i] = static_cast<int32_t>(values[i]);
      break;
    case DType::Bool:
      t.as<uint8_t>()[i] = values[i] != 0;
      break;
    case DType::U8:
      t.as<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
      break;
    default: // storage-only types: no kernel computes them
      break;
    }
  }
  return t;
}

inline OwnedTensor f32(Shape shape, const std::vector<double> &values) {
  return tensor(DType::F32, std::move(shape), values);
}
inline OwnedTensor i64(Shape shape, const std::vector<double> &values) {
  return tensor(DType::I64, std::move(shape), values);
}

inline const Kernel &kernelNamed(const std::string &name) {
  static const Kernel missing{nullptr, nullptr};
  auto it = cpuKernels().find(name);
  EXPECT_NE(it, cpuKernels().end()) << "no CPU kernel " << name;
  return it == cpuKernels().end() ? missing : it->second;
}

/// A call viewing the tensors' buffers (which must outlive it: temporaries do not compile).
inline KernelCall makeCall(const std::vector<OwnedTensor> &inputs,
                           const std::vector<OwnedTensor> &outputs, const Attributes &attributes) {
  KernelCall call;
  for (const OwnedTensor &t : inputs)
    call.inputs.push_back(t.view());
  for (const OwnedTensor &t : outputs)
    call.outputs.push_back(t.view());
  call.attributes = &attributes;
  return call;
}

KernelCall makeCall(std::vector<OwnedTensor> &&, const std::vector<OwnedTensor> &,
                    const Attributes &) = delete;
KernelCall makeCall(const std::vector<OwnedTensor> &, std::vector<OwnedTensor> &&,
                    const Attributes &) = delete;

/// An f32 tensor of normally distributed values (mean 0, standard deviation `scale`).
inline OwnedTensor randomF32(Shape shape, uint32_t seed, double scale = 1.0) {
  OwnedTensor t(DType::F32, std::move(shape));
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.as<float>()[i] = normal(random);
  return t;
}

/// Attributes from name-value pairs: attrs({{"axis", int64_t{1}}}).
inline Attributes attrs(std::initializer_list<std::pair<const char *, AttributeValue>> values) {
  Attributes result;
  for (const auto &[name, value] : values)
    result.set(name, value);
  return result;
}

/// check()'s verdict on a call of these types and shapes (no data: check must not read any).
inline std::string checkError(const std::string &kernel,
                              const std::vector<std::pair<DType, Shape>> &inputs,
                              const std::vector<std::pair<DType, Shape>> &outputs,
                              const Attributes &attributes = Attributes()) {
  KernelCall call;
  for (const auto &[dtype, shape] : inputs)
    call.inputs.push_back(TensorView{nullptr, dtype, shape});
  for (const auto &[dtype, shape] : outputs)
    call.outputs.push_back(TensorView{nullptr, dtype, shape});
  call.attributes = &attributes;
  std::string error;
  const Kernel &k = kernelNamed(kernel);
  if (!k.check)
    return "no kernel";
  bool ok = k.check(call, error);
  EXPECT_EQ(ok, error.empty()) << "check's verdict and message disagree: " << error;
  return ok ? std::string() : (error.empty() ? "<no message>" : error);
}

/// Expects check() to reject the call with a message containing `fragment`.
#define EXPECT_REJECTED(fragment, ...)                                                             \
  do {                                                                                             \
    std::string error = checkError(__VA_ARGS__);                                                   \
    EXPECT_NE(error.find(fragment), std::string::npos)                                             \
        << "expected a rejection mentioning '" << (fragment) << "', got '" << error << "'";        \
  } while (0)

/// Expects check() to accept the call.
#define EXPECT_ACCEPTED(...) EXPECT_EQ(checkError(__VA_ARGS__), "")

/// Runs the call in a fresh CPU context: false with the message the kernel recorded.
inline bool runInContext(const Kernel &kernel, const KernelCall &call, std::string &error) {
  KernelContext context;
  bool ok = kernel.run(context, call);
  context.errors.take(error);
  return ok;
}

/// Runs the call as the runtime does: with workspace(call) bytes of 64-byte-aligned scratch,
/// filled with garbage so that a kernel relying on zeroed scratch fails.
inline bool runWithWorkspace(const Kernel &kernel, KernelCall call, std::string &error) {
  uint64_t bytes = workspaceBytes(kernel, call);
  std::vector<uint8_t> storage(bytes + kWorkspaceAlignment, 0xA5);
  uintptr_t address = reinterpret_cast<uintptr_t>(storage.data());
  address = (address + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  call.workspace = bytes == 0 ? nullptr : reinterpret_cast<void *>(address);
  call.workspaceBytes = bytes;
  return runInContext(kernel, call, error);
}

/// Runs the call with one byte less than workspace(call): false with the kernel's message,
/// which `error` receives (a kernel must refuse a plan that carved too little, not overrun it).
inline bool runWithTooLittleWorkspace(const Kernel &kernel, KernelCall call, std::string &error) {
  uint64_t bytes = workspaceBytes(kernel, call);
  std::vector<uint8_t> storage(bytes + kWorkspaceAlignment);
  uintptr_t address = reinterpret_cast<uintptr_t>(storage.data());
  address = (address + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  call.workspace = reinterpret_cast<void *>(address);
  call.workspaceBytes = bytes - 1;
  return runInContext(kernel, call, error);
}

/// Checks and runs `kernel`, returning outputs of the given types and shapes.
inline std::vector<OwnedTensor> runKernel(const std::string &kernel,
                                          const std::vector<OwnedTensor> &inputs,
                                          const std::vector<std::pair<DType, Shape>> &outputTypes,
                                          const Attributes &attributes = Attributes()) {
  std::vector<OwnedTensor> outputs;
  for (const auto &[dtype, shape] : outputTypes)
    outputs.emplace_back(dtype, shape);
  KernelCall call = makeCall(inputs, outputs, attributes);
  const Kernel &k = kernelNamed(kernel);
  std::string error;
  if (!k.check || !k.check(call, error)) {
    ADD_FAILURE() << kernel << " check failed: " << error;
    return outputs;
  }
  if (!runWithWorkspace(k, call, error))
    ADD_FAILURE() << kernel << " run failed: " << error;
  return outputs;
}

/// Elementwise comparison; NaN matches NaN, infinities match exactly.
inline ::testing::AssertionResult closeTo(const std::vector<double> &actual,
                                          const std::vector<double> &expected, double rtol,
                                          double atol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure()
           << "size " << actual.size() << " != expected " << expected.size();
  int failures = 0;
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    bool ok = std::isnan(e)   ? std::isnan(a)
              : std::isinf(e) ? a == e
                              : std::abs(a - e) <= atol + rtol * std::abs(e);
    if (!ok && failures++ < 8) {
      if (failures == 1)
        result = ::testing::AssertionFailure();
      result << "\n  [" << i << "] got " << a << ", expected " << e;
    }
  }
  if (failures > 8)
    result << "\n  ... " << failures << " mismatches in all";
  return result;
}

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_KERNELTESTSUPPORT_H
