//===- MatMulNf4.cu - products with an NF4 weight on CUDA -----------------===//
//
// matmul_nf4 a panel of output columns at a time (MatMulWorkspaces.h): the panel of op(W) is
// dequantized into workspace in the lhs's type (NormalFloat4.h's arithmetic, one element per
// thread), then one cuBLASLt product writes the panel's output columns. A double-quantized
// absmax reads the signed dynamic code from a table the call first fills in its workspace
// (MatMulMath.h) and its offset from the device scalar. The weight is never whole in a float
// type. Unlike the CPU kernel, which multiplies an f32 panel, a 16-bit lhs meets a panel
// rounded to its own type, as cuBLASLt takes one type for both operands.
//
//===----------------------------------------------------------------------===//
#include "kernels/NormalFloat4.h"
#include "kernels/cuda/CublasLtGemm.h"
#include "kernels/cuda/MatMulKernels.cuh"
#include "kernels/cuda/MatMulMath.h"
#include "kernels/cuda/MatMulWorkspaces.h"

namespace memc::kernels::cuda {
namespace {

__global__ void fillSignedDynamicCode(float *values) {
  if (threadIdx.x < 256)
    values[threadIdx.x] = signedDynamicCodeValue(static_cast<int>(threadIdx.x));
}

/// The weight's absmax operands as the kernel reads them; `codes` null for plain f32 absmax.
struct Nf4AbsmaxOperands {
  const float *plain = nullptr;
  const uint8_t *codes = nullptr;
  const float *scales = nullptr;
  const float *offset = nullptr;
  const float *dynamicCode = nullptr;
};

template <typename T>
__global__ void dequantizePanel(const uint8_t *packed, Nf4AbsmaxOperands operands, int64_t column0,
                                int64_t count, int64_t depth, int64_t columns, bool transposeRhs,
                                T *panel) {
  const Nf4Absmax absmax{operands.plain, operands.codes, operands.scales,
                         operands.codes ? *operands.offset : 0.0f, operands.dynamicCode};
  const int64_t total = count * depth;
  for (int64_t e = gridThreadIndex(); e < total; e += gridThreads()) {
    const int64_t source = nf4PanelSource(e, column0, count, depth, columns, transposeRhs);
    storeFloat(panel, e, nf4Value(nf4Index(packed, source)) * absmax[source / kNf4Block]);
  }
}

bool runMatMulNf4(KernelContext &context, const KernelCall &call) {
  const TensorView &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  MatMulNf4Scratch scratch = carveMatMulNf4(call, carver);
  if (!carver.fits(context))
    return false;
  const Nf4Problem problem(call);
  Nf4AbsmaxOperands absmax;
  if (call.inputs.size() == 3) {
    absmax.plain = call.inputs[2].as<float>();
  } else {
    absmax.codes = call.inputs[2].as<uint8_t>();
    absmax.scales = call.inputs[3].as<float>();
    absmax.offset = call.inputs[4].as<float>();
    absmax.dynamicCode = scratch.dynamicCode;
    fillSignedDynamicCode<<<1, 256, 0, streamOf(context)>>>(scratch.dynamicCode);
    if (!launched(context, "matmul_nf4"))
      return false;
  }
  const size_t element = dtypeSize(output.dtype);
  RowMajorGemm gemm;
  gemm.tf32 = allowsTf32(call);
  gemm.m = problem.rows;
  gemm.k = problem.depth;
  gemm.inputType = gemm.outputType = output.dtype;
  gemm.a = {call.inputs[0].data, problem.depth, 0, false};
  gemm.ldd = problem.columns;
  for (int64_t column0 = 0; column0 < problem.columns; column0 += scratch.panelColumns) {
    const int64_t count = std::min(scratch.panelColumns, problem.columns - column0);
    bool ok = visitFloat(output.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      dequantizePanel<T><<<gridFor(count * problem.depth), kBlockThreads, 0, streamOf(context)>>>(
          call.inputs[1].as<uint8_t>(), absmax, column0, count, problem.depth, problem.columns,
          problem.transposeRhs, static_cast<T *>(scratch.panel));
      return launched(context, "matmul_nf4");
    });
    if (!ok)
      return false;
    // The panel is [count, K] read transposed, or [K, count].
    gemm.n = count;
    gemm.b = {scratch.panel, problem.transposeRhs ? problem.depth : count, 0, problem.transposeRhs};
    gemm.d = output.as<char>() + column0 * element;
    if (!runGemm(context, gemm, scratch.gemm, "matmul_nf4"))
      return false;
  }
  return true;
}

} // namespace

void addMatMulNf4CudaKernels(CudaKernelRuns &runs) { runs["matmul_nf4"] = &runMatMulNf4; }

} // namespace memc::kernels::cuda
