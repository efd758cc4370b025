//===- MatMul.cu - the CUDA matmul kernels ---------------------------------===//
//
// matmul on cuBLASLt (CublasLtGemm.h): f32, f16 and bf16, summed in f32 and rounded once.
// A batch whose right-hand matrix is shared by an unbroadcast left-hand batch (x @ W) is one
// tall product of the stacked rows; any other batch is strided batches, an operand that
// broadcasts read with stride 0, over the innermost batch dims that merge, and a loop of
// launches over the others (MatMulMath.h). Also registers the group's other files.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CublasLtGemm.h"
#include "kernels/cuda/MatMulKernels.cuh"
#include "kernels/cuda/MatMulMath.h"
#include "kernels/cuda/MatMulWorkspaces.h"

namespace memc::kernels {
namespace cuda {
namespace {

bool runMatMul(KernelContext &context, const KernelCall &call) {
  const TensorView &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  MatMulScratch scratch = carveMatMul(call, carver);
  if (!carver.fits(context))
    return false;
  MatMulProblem problem(call);
  RowMajorGemm gemm;
  gemm.tf32 = allowsTf32(call);
  gemm.m = problem.m;
  gemm.n = problem.n;
  gemm.k = problem.k;
  gemm.inputType = gemm.outputType = output.dtype;
  gemm.a = {call.inputs[0].data, problem.lda(), 0, problem.transposeLhs};
  gemm.b = {call.inputs[1].data, problem.ldb(), 0, problem.transposeRhs};
  gemm.d = output.data;
  gemm.ldd = problem.n;
  if (problem.stacksRows()) {
    gemm.m = problem.batchCount * problem.m;
    return runGemm(context, gemm, scratch.gemm, "matmul");
  }
  const MatMulLaunches launches = matmulLaunches(problem);
  const int64_t lhsMatrix = problem.m * problem.k, rhsMatrix = problem.k * problem.n;
  const int64_t outMatrix = problem.m * problem.n;
  const size_t element = dtypeSize(output.dtype);
  gemm.batch = launches.count;
  gemm.a.batchStride = launches.lhsStride * lhsMatrix;
  gemm.b.batchStride = launches.rhsStride * rhsMatrix;
  gemm.batchStrideD = outMatrix;
  for (int64_t launch = 0; launch < launches.launches(); ++launch) {
    int64_t lhs0, rhs0, out0;
    launches.start(launch, lhs0, rhs0, out0);
    RowMajorGemm part = gemm;
    part.a.data = call.inputs[0].as<char>() + lhs0 * lhsMatrix * element;
    part.b.data = call.inputs[1].as<char>() + rhs0 * rhsMatrix * element;
    part.d = output.as<char>() + out0 * outMatrix * element;
    if (!runGemm(context, part, scratch.gemm, "matmul"))
      return false;
  }
  return true;
}

} // namespace
} // namespace cuda

void addMatMulCudaKernels(CudaKernelRuns &runs) {
  runs["matmul"] = &cuda::runMatMul;
  cuda::addMatMulNf4CudaKernels(runs);
  cuda::addLinearCrossEntropyCudaKernels(runs);
  cuda::addConvolutionCudaKernels(runs);
}

} // namespace memc::kernels
