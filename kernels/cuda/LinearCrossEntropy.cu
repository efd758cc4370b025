//===- LinearCrossEntropy.cu - the fused loss on CUDA ---------------------===//
//
// cross_entropy(hidden @ op(weight) [+ bias], labels) without the whole logits: a chunk of rows
// at a time (MatMulWorkspaces.h), every class at once.
//   forward:  per chunk, the f32 logits by cuBLASLt, then one block per row: its maximum, its
//             f64 sum of exponentials, logsumexp and loss (LinearCrossEntropyMath.h); a last
//             block sums the losses in f64 and divides by the counted rows.
//   backward: the counted rows first (the gradient scale, grad / counted, stays on the
//             device); per chunk, the logits again, turned in place into their gradient
//             scale * (softmax - onehot), then dH[chunk] = dlogits @ op(W)^T straight into
//             the result, dW += the chunk's contribution (in the result for f32, in an f32
//             accumulator otherwise) and the bias's column sums.
// 16-bit operands give f32 logits (cuBLASLt sums them in f32), and their gradient enters the
// two backward products rounded to the operands' type, as cuBLASLt takes one type for both;
// every sum over chunks stays f32 and is rounded once. Labels outside the classes are
// recorded as kLabelOutOfRange and their rows ignored, so nothing reads out of bounds.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CublasLtGemm.h"
#include "kernels/cuda/LinearCrossEntropyMath.h"
#include "kernels/cuda/MatMulKernels.cuh"
#include "kernels/cuda/MatMulWorkspaces.h"

namespace memc::kernels::cuda {
namespace {

// cross_entropy's row pieces (RowMath.h), which the fused loss shares.
using rows::Add;
using rows::crossEntropyGradScale;
using rows::crossEntropyMean;
using rows::kLabelOutsideClasses;
using rows::MaxSkippingNaN;
using rows::targetOf;

/// Threads of the row and reduction blocks.
constexpr int kRowThreads = 256;
constexpr int kReduceThreads = 1024;

/// The block's combination of every thread's `value` by `combine`, in a fixed order, returned
/// to every thread.
template <typename V, typename Combine> __device__ V blockCombine(V value, Combine combine) {
  __shared__ V partials[32];
  for (int offset = 16; offset > 0; offset /= 2)
    value = combine(value, __shfl_down_sync(0xffffffffu, value, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    partials[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < static_cast<int>((blockDim.x + 31) / 32); ++w)
      value = combine(value, partials[w]);
    partials[0] = value;
  }
  __syncthreads();
  value = partials[0];
  __syncthreads();
  return value;
}

/// One block per row of the chunk: logsumexp[row] and the row's loss.
template <typename T, typename I>
__global__ void rowLosses(const float *logits, const T *bias, const I *labels, int64_t ignoreIndex,
                          int64_t firstRow, int64_t classes, float *logSumExp, double *losses,
                          DeviceErrorRecord *errors, uint32_t step) {
  const float *row = logits + blockIdx.x * classes;
  const int64_t r = firstRow + blockIdx.x;
  const float max =
      blockCombine(partialMax(row, bias, classes, threadIdx.x, blockDim.x), MaxSkippingNaN());
  const double sum =
      blockCombine(partialSumExp(row, bias, classes, threadIdx.x, blockDim.x, max), Add());
  if (threadIdx.x != 0)
    return;
  const int64_t target = targetOf(static_cast<int64_t>(labels[r]), classes, ignoreIndex);
  if (target == kLabelOutsideClasses)
    recordDeviceError(errors, step, kLabelOutOfRange, static_cast<int64_t>(labels[r]), r, classes);
  const double lse = rowLogSumExp(sum, max);
  logSumExp[r] = static_cast<float>(lse);
  losses[r] = rowLoss(lse, target >= 0 ? biasedLogit(row, bias, target) : 0.0f, target);
}

/// The labels' count of counted rows (neither ignored nor out of range).
template <typename I>
__device__ int64_t countedRows(const I *labels, int64_t rows, int64_t ignoreIndex,
                               int64_t classes) {
  int64_t counted = 0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x)
    counted += targetOf(static_cast<int64_t>(labels[r]), classes, ignoreIndex) >= 0;
  return blockCombine(counted, Add());
}

/// One block: the loss, the mean of the rows' losses over the counted rows.
template <typename I>
__global__ void meanOfLosses(const double *losses, const I *labels, int64_t rows,
                             int64_t ignoreIndex, int64_t classes, float *loss) {
  double total = 0.0;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x)
    total += losses[r];
  total = blockCombine(total, Add());
  const int64_t counted = countedRows(labels, rows, ignoreIndex, classes);
  if (threadIdx.x == 0)
    *loss = crossEntropyMean(total, counted);
}

/// One block: the counted rows, recording the first label outside the classes.
template <typename I>
__global__ void countRows(const I *labels, int64_t rows, int64_t ignoreIndex, int64_t classes,
                          int64_t *counted, DeviceErrorRecord *errors, uint32_t step) {
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x)
    if (targetOf(static_cast<int64_t>(labels[r]), classes, ignoreIndex) == kLabelOutsideClasses)
      recordDeviceError(errors, step, kLabelOutOfRange, static_cast<int64_t>(labels[r]), r,
                        classes);
  const int64_t total = countedRows(labels, rows, ignoreIndex, classes);
  if (threadIdx.x == 0)
    *counted = total;
}

/// The chunk's logits turned in place into their gradient, and copied in T when `copy` is set.
template <typename T, typename I>
__global__ void logitGradients(float *logits, T *copy, const T *bias, const I *labels,
                               int64_t ignoreIndex, int64_t firstRow, int64_t chunkRows,
                               int64_t classes, const float *logSumExp, const float *grad,
                               const int64_t *counted) {
  const float scale = crossEntropyGradScale(*grad, *counted);
  const int64_t total = chunkRows * classes;
  for (int64_t e = gridThreadIndex(); e < total; e += gridThreads()) {
    const int64_t r = firstRow + e / classes, c = e % classes;
    // A label outside the classes is recorded by countRows; its row's gradient is 0.
    const int64_t target = targetOf(static_cast<int64_t>(labels[r]), classes, ignoreIndex);
    const float value =
        logitGradient(biasedLogit(logits + (e - c), bias, c), logSumExp[r], scale, c, target);
    logits[e] = value;
    if (copy)
      storeFloat(copy, e, value);
  }
}

/// sums[c] (+)= the column sums of the chunk's gradient: the bias's gradient, in f32.
__global__ void columnSums(const float *gradient, int64_t chunkRows, int64_t classes,
                           bool accumulate, float *sums) {
  for (int64_t c = gridThreadIndex(); c < classes; c += gridThreads()) {
    float sum = accumulate ? sums[c] : 0.0f;
    for (int64_t r = 0; r < chunkRows; ++r)
      sum += gradient[r * classes + c];
    sums[c] = sum;
  }
}

/// The logits of rows [firstRow, firstRow + count) into scratch.logits: hidden rows @ op(W).
bool chunkLogits(KernelContext &context, const LinearCrossEntropyProblem &p,
                 const TensorView &hidden, const TensorView &weight,
                 const LinearCrossEntropyScratch &scratch, int64_t firstRow, int64_t count,
                 const char *kernel) {
  RowMajorGemm gemm;
  gemm.tf32 = p.tf32;
  gemm.m = count;
  gemm.n = p.classes;
  gemm.k = p.depth;
  gemm.inputType = p.dtype;
  gemm.outputType = DType::F32;
  gemm.a = {hidden.as<char>() + firstRow * p.depth * dtypeSize(p.dtype), p.depth, 0, false};
  gemm.b = {weight.data, p.transposeWeight ? p.depth : p.classes, 0, p.transposeWeight};
  gemm.d = scratch.logits;
  gemm.ldd = p.classes;
  return runGemm(context, gemm, scratch.gemm, kernel);
}

template <typename T, typename I>
bool linearCrossEntropy(KernelContext &context, const KernelCall &call,
                        const LinearCrossEntropyProblem &p,
                        const LinearCrossEntropyScratch &scratch) {
  const char *kernel = "linear_cross_entropy";
  const T *bias = p.bias ? call.inputs[3].as<T>() : nullptr;
  const I *labels = call.inputs[2].as<I>();
  const int64_t ignoreIndex = attributesOf(call).intOr("ignore_index", -100);
  for (int64_t first = 0; first < p.rows; first += p.chunkRows) {
    const int64_t count = std::min(p.chunkRows, p.rows - first);
    if (!chunkLogits(context, p, call.inputs[0], call.inputs[1], scratch, first, count, kernel))
      return false;
    rowLosses<T, I><<<static_cast<unsigned>(count), kRowThreads, 0, streamOf(context)>>>(
        scratch.logits, bias, labels, ignoreIndex, first, p.classes, call.outputs[1].as<float>(),
        scratch.losses, context.deviceErrors, context.step);
    if (!launched(context, kernel))
      return false;
  }
  meanOfLosses<I><<<1, kReduceThreads, 0, streamOf(context)>>>(
      scratch.losses, labels, p.rows, ignoreIndex, p.classes, call.outputs[0].as<float>());
  return launched(context, kernel);
}

/// The products of the chunk of `count` rows from `first`, from its logits' gradient:
/// dH[chunk] = dlogits @ op(W)^T into the result, and dW (+)= H[chunk]^T @ dlogits ([D, V]) or
/// dlogits^T @ H[chunk] ([V, D]), summed over the chunks in the f32 result or the f32
/// accumulator (a 16-bit result of one chunk takes the sum directly).
bool chunkGradientProducts(KernelContext &context, const KernelCall &call,
                           const LinearCrossEntropyProblem &p,
                           const LinearCrossEntropyScratch &scratch, int64_t first, int64_t count,
                           const char *kernel) {
  const size_t element = dtypeSize(p.dtype);
  // The gradient as the products read it: in the operands' type.
  const void *gradient = p.widens() ? scratch.logitsGrad : scratch.logits;
  RowMajorGemm inputGrad;
  inputGrad.tf32 = p.tf32;
  inputGrad.m = count;
  inputGrad.n = p.depth;
  inputGrad.k = p.classes;
  inputGrad.inputType = inputGrad.outputType = p.dtype;
  inputGrad.a = {gradient, p.classes, 0, false};
  inputGrad.b = {call.inputs[2].data, p.transposeWeight ? p.depth : p.classes, 0,
                 !p.transposeWeight};
  inputGrad.d = call.outputs[0].as<char>() + first * p.depth * element;
  inputGrad.ldd = p.depth;
  RowMajorGemm weightGrad;
  weightGrad.tf32 = p.tf32;
  weightGrad.m = p.transposeWeight ? p.classes : p.depth;
  weightGrad.n = p.transposeWeight ? p.depth : p.classes;
  weightGrad.k = count;
  weightGrad.inputType = p.dtype;
  weightGrad.outputType = scratch.weightSums ? DType::F32 : p.dtype;
  const GemmOperand gradientRows{gradient, p.classes, 0, false};
  const GemmOperand hiddenRows{call.inputs[1].as<char>() + first * p.depth * element, p.depth, 0,
                               false};
  weightGrad.a = p.transposeWeight ? gradientRows : hiddenRows;
  weightGrad.a.transposed = true;
  weightGrad.b = p.transposeWeight ? hiddenRows : gradientRows;
  weightGrad.d =
      scratch.weightSums ? static_cast<void *>(scratch.weightSums) : call.outputs[1].data;
  weightGrad.ldd = weightGrad.n;
  weightGrad.beta = first > 0 ? 1.0f : 0.0f;
  return runGemm(context, inputGrad, scratch.gemm, kernel) &&
         runGemm(context, weightGrad, scratch.gemm, kernel);
}

template <typename T, typename I>
bool linearCrossEntropyGrad(KernelContext &context, const KernelCall &call,
                            const LinearCrossEntropyProblem &p,
                            const LinearCrossEntropyScratch &scratch) {
  const char *kernel = "linear_cross_entropy_grad";
  const TensorView &weightGrad = call.outputs[1];
  const T *bias = p.bias ? call.inputs[5].as<T>() : nullptr;
  const I *labels = call.inputs[3].as<I>();
  const int64_t ignoreIndex = attributesOf(call).intOr("ignore_index", -100);
  if (p.rows == 0)
    return zeroBytes(context, weightGrad.data, weightGrad.sizeBytes(), kernel) &&
           (!p.bias ||
            zeroBytes(context, call.outputs[2].data, call.outputs[2].sizeBytes(), kernel));
  // The bias's gradient sums over chunks in the f32 result or the f32 accumulator.
  float *biasSum = !p.bias ? nullptr : p.widens() ? scratch.biasSums : call.outputs[2].as<float>();
  countRows<I><<<1, kReduceThreads, 0, streamOf(context)>>>(
      labels, p.rows, ignoreIndex, p.classes, scratch.counted, context.deviceErrors, context.step);
  if (!launched(context, kernel))
    return false;
  for (int64_t first = 0; first < p.rows; first += p.chunkRows) {
    const int64_t count = std::min(p.chunkRows, p.rows - first);
    if (!chunkLogits(context, p, call.inputs[1], call.inputs[2], scratch, first, count, kernel))
      return false;
    logitGradients<T, I><<<gridFor(count * p.classes), kBlockThreads, 0, streamOf(context)>>>(
        scratch.logits, static_cast<T *>(scratch.logitsGrad), bias, labels, ignoreIndex, first,
        count, p.classes, call.inputs[4].as<float>(), call.inputs[0].as<float>(), scratch.counted);
    if (!launched(context, kernel) ||
        !chunkGradientProducts(context, call, p, scratch, first, count, kernel))
      return false;
    if (biasSum) {
      columnSums<<<gridFor(p.classes), kBlockThreads, 0, streamOf(context)>>>(
          scratch.logits, count, p.classes, first > 0, biasSum);
      if (!launched(context, kernel))
        return false;
    }
  }
  return (!scratch.weightSums ||
          launchStoreRounded(context, scratch.weightSums, weightGrad.numElements(), p.dtype,
                             weightGrad.data, kernel)) &&
         (!scratch.biasSums || launchStoreRounded(context, scratch.biasSums, p.classes, p.dtype,
                                                  call.outputs[2].data, kernel));
}

/// Runs body<T, I>() for the hidden's float type T and the labels' index type I.
template <template <typename, typename> class Body>
bool dispatch(KernelContext &context, const KernelCall &call, const TensorView &labels,
              const LinearCrossEntropyProblem &p, const LinearCrossEntropyScratch &scratch) {
  return visitFloat(p.dtype, [&](auto tag) {
    return visitIndex(labels.dtype, [&](auto labelTag) {
      using T = typename decltype(tag)::type;
      using I = typename decltype(labelTag)::type;
      return Body<T, I>::run(context, call, p, scratch);
    });
  });
}

template <typename T, typename I> struct Forward {
  static bool run(KernelContext &context, const KernelCall &call,
                  const LinearCrossEntropyProblem &p, const LinearCrossEntropyScratch &scratch) {
    return linearCrossEntropy<T, I>(context, call, p, scratch);
  }
};
template <typename T, typename I> struct Backward {
  static bool run(KernelContext &context, const KernelCall &call,
                  const LinearCrossEntropyProblem &p, const LinearCrossEntropyScratch &scratch) {
    return linearCrossEntropyGrad<T, I>(context, call, p, scratch);
  }
};

bool runLinearCrossEntropy(KernelContext &context, const KernelCall &call) {
  WorkspaceCarver carver(call);
  LinearCrossEntropyScratch scratch = carveLinearCrossEntropy(call, carver);
  if (!carver.fits(context))
    return false;
  return dispatch<Forward>(context, call, call.inputs[2], LinearCrossEntropyProblem(call, 0, 3),
                           scratch);
}

bool runLinearCrossEntropyGrad(KernelContext &context, const KernelCall &call) {
  WorkspaceCarver carver(call);
  LinearCrossEntropyScratch scratch = carveLinearCrossEntropyGrad(call, carver);
  if (!carver.fits(context))
    return false;
  return dispatch<Backward>(context, call, call.inputs[3], LinearCrossEntropyProblem(call, 1, 5),
                            scratch);
}

} // namespace

void addLinearCrossEntropyCudaKernels(CudaKernelRuns &runs) {
  runs["linear_cross_entropy"] = &runLinearCrossEntropy;
  runs["linear_cross_entropy_grad"] = &runLinearCrossEntropyGrad;
}

} // namespace memc::kernels::cuda
