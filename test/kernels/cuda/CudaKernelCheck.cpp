//===- CudaKernelCheck.cpp - every CUDA kernel against PyTorch, on a GPU --===//
//
// memc-cuda-kernel-check runs the PyTorch reference cases (references.txt, written by
// make_references.py) through the CUDA kernel table as KernelReferenceTest runs them through
// the CPU's: each tensor in a device buffer of its own (compute-sanitizer then sees a kernel
// that steps past one), the call checked as the loader checks it (the op's check, then the
// CUDA target's limits), the planned workspace, one launch on a stream, the stream
// synchronized and its error slot read, the outputs compared with PyTorch's. The in-place
// kernels run each case again with the output in an input's buffer.
//
// Outputs and workspace start as 0xFF bytes (NaN in every float type, -1 in the integers), so
// an element a kernel leaves unwritten, or scratch it assumes zeroed, fails the comparison.
//
// Without a GPU every case fails with the CUDA runtime's reason: the tool is for GPU hosts
// (tools/gpu-check.sh, after tools/gpu-prepare.sh), not ctest. The references are the file
// $MEMC_KERNEL_REFERENCES names, by default the source tree's.
//
//===----------------------------------------------------------------------===//
#include "KernelTestSupport.h"
#include "ReferenceCases.h"

#include "kernels/cuda/AttentionCall.h"
#include "kernels/cuda/CudaKernels.h"
#include "kernels/ops/OpContracts.h"
#include "runtime/device/AvailableDevices.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

namespace memc::kernels::testing {
namespace {

using runtime::Device;
using runtime::DeviceMemory;
using runtime::Stream;

/// Cases the CUDA target refuses by design, with the reason: not run, and checked to be
/// refused still (CudaKernelCoverage.StillRefusesTheListedCases). A plan with such a call is
/// refused when memc builds it for --target cuda, so no CUDA program meets one.
const std::map<std::string, std::string> kRefusedByDesign = [] {
  const std::string integerMatMul =
      "integer matmul stays on the CPU: the CUDA matmul is cuBLASLt's, which computes f32, f16 "
      "and bf16 (kernels/cuda/MatMulTarget.cpp)";
  return std::map<std::string, std::string>{{"matmul_i32", integerMatMul},
                                            {"matmul_i64", integerMatMul},
                                            {"matmul_transposed_i64", integerMatMul}};
}();

/// Whether case `c`'s CUDA kernel rounds f32 operands to its 16-bit element type before a
/// product: the tensor-core attention rounds P and dS as FlashAttention does
/// (kernels/cuda/AttentionCall.h picks that path), and matmul_nf4 hands cuBLASLt the weight's
/// dequantized panel in the lhs's type (kernels/cuda/MatMulNf4.cu).
bool roundsOperandsToHalf(const ReferenceCase &c) {
  KernelCall call = makeCall(c.inputs, c.outputs, c.attributes);
  if (c.kernel == "flash_attention" || c.kernel == "flash_attention_grad") {
    size_t query = c.kernel == "flash_attention" ? 0 : 1;
    return cuda::usesTensorCores(c.inputs[query].dtype, cuda::attentionDims(call, query));
  }
  return c.kernel == "matmul_nf4" && c.inputs[0].dtype != DType::F32;
}

/// KernelReferenceTest's tolerance, widened for f32 where CUDA's arithmetic departs from
/// PyTorch's further than the CPU kernels' does:
///  - nvcc contracts a * b + c into one FMA (its default, --fmad=true), which the CPU kernels'
///    C++ (built for plain x86-64) cannot, and the kernels sum in other orders (block trees,
///    warp shuffles, f32 atomics in gather_grad, cuBLASLt's split of K, the online softmax of
///    attention);
///  - CUDA's expf, erff, tanhf, sinf and cosf are within 2 ulp and powf within 4 (the CUDA
///    Math API's error table), against about 1 ulp in PyTorch's (Sleef's).
/// Each moves a result by a few ulp of its largest intermediate, not of the result itself,
/// which matters where the result cancels (gelu of a negative x, a gradient that subtracts a
/// row's mean). The CPU kernels use up to 36% of their own tolerance on these cases, so f32
/// gets twice the relative and four times the absolute tolerance (or the case's own, if wider):
/// 2.4e-5 on a result of 1, far below what a wrong index, a dropped term or an f16
/// accumulator costs.
/// f16 and bf16 are not widened where the kernels compute in f32 and round once, as on the CPU:
/// an f32 difference of a few ulp moves a result by at most one unit of the half type, within
/// the two the CPU's tolerance allows. Two kernels round f32 operands to the half type before
/// products, which neither the CPU kernels nor the references do (roundsOperandsToHalf); their
/// half outputs get AttentionMathTest's tolerances, 4e-3 for f16 and 2e-2 for bf16, relative and
/// absolute: a unit or two in the last place plus the operands' rounding. That rounding,
/// emulated in f64 on the reference cases' inputs, uses at most 26% of them (the default half
/// tolerances it exceeds up to 90 times).
void cudaTolerance(const ReferenceCase &c, DType dtype, double &rtol, double &atol) {
  referenceTolerance(c, dtype, rtol, atol);
  if (dtype == DType::F32)
    rtol = std::max(rtol, 2e-5), atol = std::max(atol, 4e-6);
  if ((dtype == DType::F16 || dtype == DType::BF16) && roundsOperandsToHalf(c)) {
    double widened = dtype == DType::BF16 ? 2e-2 : 4e-3;
    rtol = std::max(rtol, widened), atol = std::max(atol, widened);
  }
}

void expectOutputsMatch(const ReferenceCase &c, const std::vector<OwnedTensor> &actual,
                        const std::string &run) {
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    double rtol, atol;
    cudaTolerance(c, c.outputs[i].dtype, rtol, atol);
    EXPECT_TRUE(closeTo(actual[i].values(), c.outputs[i].values(), rtol, atol))
        << "output " << i << " of " << c.name << run << " (rtol " << rtol << ", atol " << atol
        << ")";
  }
}

/// The GPU the cases run on: the "cuda" device and one stream, made once. Where there is none,
/// every case fails with the device's reason. A failed stream (a kernel's illegal address or
/// trap) may leave CUDA's context unusable for the rest of the process; the cases after it
/// then fail naming the case that broke it, so that the next run can leave that one out.
class Gpu {
public:
  static Gpu &get() {
    static Gpu gpu;
    return gpu;
  }

  /// The device and stream, or false with why there are none.
  bool ready(std::string &error) const {
    if (!lostIn.empty())
      error = "the GPU's context was lost in " + lostIn + " (" + reason +
              "): run again with --gtest_filter=-*/" + lostIn + " to check the other cases";
    else if (!stream)
      error = reason;
    return lostIn.empty() && stream;
  }

  /// After `caseName`'s stream failed with `message`: a fresh stream if CUDA still works.
  void recover(const std::string &caseName, const std::string &message) {
    stream.reset();
    std::string error;
    DeviceMemory probe;
    std::unique_ptr<Stream> fresh = device->createStream(error);
    if (fresh && probe.allocate(*device, 1, 1, "probe", error) &&
        device->fillZero(probe.data(), 1, *fresh, error) && fresh->synchronize(error)) {
      stream = std::move(fresh);
      return;
    }
    lostIn = caseName;
    reason = message;
  }

  std::unique_ptr<Device> device;
  std::unique_ptr<Stream> stream;

private:
  Gpu() {
    runtime::registerAvailableDevices(registry);
    device = registry.create("cuda", reason);
    if (device)
      stream = device->createStream(reason);
    if (device && stream)
      std::cout << "memc-cuda-kernel-check on " << device->properties().description << "\n";
  }

  runtime::DeviceRegistry registry;
  std::string reason;
  std::string lostIn;
};

/// cudaMalloc's own alignment, which the 16-byte vector paths of the kernels may take.
constexpr uint64_t kBufferAlignment = 256;

/// Waits for the stream and reads its error slot: false with the failure.
bool finish(Gpu &gpu, const std::string &caseName, std::string &error) {
  if (!gpu.stream->synchronize(error)) {
    gpu.recover(caseName, error);
    return false;
  }
  std::string failure;
  if (gpu.stream->kernelContext().errors.take(failure)) {
    error = "the kernel failed: " + failure;
    return false;
  }
  return true;
}

/// One run's device buffers and the host memory its copies read, which outlive the stream's
/// work: a run that stops early still waits for what it enqueued.
struct GpuRun {
  explicit GpuRun(Gpu &gpu) : gpu(gpu) {}
  ~GpuRun() {
    std::string ignored;
    if (gpu.stream)
      gpu.stream->synchronize(ignored);
  }
  Gpu &gpu;
  std::vector<DeviceMemory> inputs, outputs;
  DeviceMemory workspace;
  std::vector<uint8_t> garbage;
};

/// Runs case `c` on the GPU into `results` (its outputs' types and shapes). `aliased`: the
/// input whose buffer the first output shares (the in-place run), or -1.
bool runOnGpu(const ReferenceCase &c, int aliased, std::vector<OwnedTensor> &results,
              std::string &error) {
  Gpu &gpu = Gpu::get();
  if (!gpu.ready(error))
    return false;
  Device &device = *gpu.device;
  Stream &stream = *gpu.stream;
  const Kernel &kernel = device.kernels().at(c.kernel);
  GpuRun run(gpu);

  KernelCall call;
  call.attributes = &c.attributes;
  run.inputs.resize(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const OwnedTensor &input = c.inputs[i];
    DeviceMemory &memory = run.inputs[i];
    if (!memory.allocate(device, input.bytes.size(), kBufferAlignment, "input", error) ||
        !device.copyToDevice(memory.data(), input.bytes.data(), input.bytes.size(), stream, error))
      return false;
    call.inputs.push_back(TensorView{memory.data(), input.dtype, input.shape});
  }
  run.outputs.resize(c.outputs.size());
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    const OwnedTensor &output = c.outputs[i];
    DeviceMemory &memory = run.outputs[i];
    bool shared = aliased >= 0 && i == 0;
    if (!shared && !memory.allocate(device, output.bytes.size(), kBufferAlignment, "output", error))
      return false;
    call.outputs.push_back(TensorView{shared ? run.inputs[aliased].data() : memory.data(),
                                      output.dtype, output.shape});
  }
  if (!checkKernelCall(kernel, call, error)) {
    error = "the CUDA target refuses the call: " + error;
    return false;
  }
  call.workspaceBytes = workspaceBytes(kernel, call);
  if (!run.workspace.allocate(device, call.workspaceBytes, kWorkspaceAlignment, "workspace", error))
    return false;
  call.workspace = run.workspace.data();

  uint64_t largest = run.workspace.size();
  for (const DeviceMemory &memory : run.outputs)
    largest = std::max(largest, memory.size());
  run.garbage.assign(largest, 0xFF);
  auto fill = [&](const DeviceMemory &memory) {
    return device.copyToDevice(memory.data(), run.garbage.data(), memory.size(), stream, error);
  };
  if (!std::all_of(run.outputs.begin(), run.outputs.end(), fill) || !fill(run.workspace))
    return false;

  if (!device.launch(kernel, call, stream, error))
    return false;
  std::string failure;
  if (stream.kernelContext().errors.take(failure)) {
    error = "the launch failed: " + failure;
    return false;
  }
  results.clear();
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    results.emplace_back(c.outputs[i].dtype, c.outputs[i].shape);
    if (!device.copyToHost(results[i].bytes.data(), call.outputs[i].data, results[i].bytes.size(),
                           stream, error))
      return false;
  }
  return finish(gpu, c.name, error);
}

/// The reference cases of `cases` that the CUDA table runs.
std::vector<ReferenceCase> runnable(const std::vector<ReferenceCase> &cases) {
  std::vector<ReferenceCase> result;
  for (const ReferenceCase &c : cases)
    if (cudaKernels().count(c.kernel) && !kRefusedByDesign.count(c.name))
      result.push_back(c);
  return result;
}

class CudaKernel : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(CudaKernel, MatchesPyTorch) {
  const ReferenceCase &c = GetParam();
  std::vector<OwnedTensor> results;
  std::string error;
  ASSERT_TRUE(runOnGpu(c, -1, results, error)) << c.name << ": " << error;
  expectOutputsMatch(c, results, "");
}

class CudaKernelInPlace : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(CudaKernelInPlace, MatchesPyTorch) {
  const ReferenceCase &c = GetParam();
  for (size_t j = 0; j < c.inputs.size(); ++j) {
    if (!canAlias(c.inputs[j], c.outputs[0]))
      continue;
    const std::string run = " with input " + std::to_string(j) + "'s buffer as output 0";
    std::vector<OwnedTensor> results;
    std::string error;
    ASSERT_TRUE(runOnGpu(c, static_cast<int>(j), results, error)) << c.name << run << ": " << error;
    expectOutputsMatch(c, results, run);
  }
}

auto caseName = [](const ::testing::TestParamInfo<ReferenceCase> &info) { return info.param.name; };

INSTANTIATE_TEST_SUITE_P(Torch, CudaKernel, ::testing::ValuesIn(runnable(references())), caseName);
INSTANTIATE_TEST_SUITE_P(Torch, CudaKernelInPlace, ::testing::ValuesIn(runnable(inPlaceCases())),
                         caseName);

TEST(CudaKernelCoverage, RunsEveryOp) {
  // The collectives' communication is NCCL's (memc-nccl-check runs it); none of their results
  // is a reference case (CollectiveKernelsTest checks the CPU's), and one process has no ranks.
  std::vector<std::string> lacking, uncheckedCases;
  for (const auto &[name, check] : opChecks())
    if (!cudaKernels().count(name))
      lacking.push_back(name);
  EXPECT_TRUE(lacking.empty()) << ::testing::PrintToString(lacking);
  for (const ReferenceCase &c : references())
    if (!cudaKernels().count(c.kernel))
      uncheckedCases.push_back(c.name);
  EXPECT_TRUE(uncheckedCases.empty()) << "reference cases of kernels the CUDA target lacks: "
                                      << ::testing::PrintToString(uncheckedCases);
}

TEST(CudaKernelCoverage, StillRefusesTheListedCases) {
  for (const auto &[name, reason] : kRefusedByDesign) {
    auto c = std::find_if(references().begin(), references().end(),
                          [&](const ReferenceCase &r) { return r.name == name; });
    ASSERT_NE(c, references().end()) << "kRefusedByDesign lists " << name << ", not a case";
    KernelCall call = makeCall(c->inputs, c->outputs, c->attributes);
    std::string error;
    EXPECT_FALSE(checkKernelCall(cudaKernels().at(c->kernel), call, error))
        << name << " is listed as refused (" << reason
        << ") but the CUDA target takes it now: take it out of kRefusedByDesign";
  }
}

} // namespace
} // namespace memc::kernels::testing
