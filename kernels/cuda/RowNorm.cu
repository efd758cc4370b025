//===- RowNorm.cu - layer_norm, add_layer_norm, rms_norm and gradients on CUDA ===//
//
// The input is [rows, width] around the axis; a block shares each row.
//  - Forward: the mean (layer_norm), the biased variance from a second pass about it, then
//    x^ * scale + bias (RowMath.h). add_layer_norm first writes the residual sum, rounded to
//    the type as an add's result is, and normalizes what it wrote (each thread rereads only
//    the elements it wrote itself).
//  - Backward, with PyTorch's formulas (RowMath.h), in four launches: each row's mean and
//    rstd into the workspace; the parameter gradients' partial sums, a thread per column and
//    chunk of rows (RowChunks); their totals, a thread per column adding the chunks in order;
//    then dx, a block per row. dx comes last so that it may share the grad's or the input's
//    buffer, which the parameter sums read.
// Statistics, row sums and the parameter gradients' sums are f64 (mean and rstd stay f64 in the
// workspace), as the CPU kernels': a chunk adds up to ~1e3 rows, too many for f32.
// The scale, bias and parameter gradients may have a float type of their own (FloatVector).
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/RowKernels.cuh"
#include "kernels/cuda/RowWorkspace.h"

namespace memc::kernels::cuda::rows {
namespace {

//===----------------------------------------------------------------------===//
// layer_norm, add_layer_norm, rms_norm
//===----------------------------------------------------------------------===//

/// layer_norm (`Centered`) or rms_norm of each row of x into y; with `Residual`, of the rows
/// of x + addend, which it writes to `sum` first.
template <typename T, bool Centered, bool Residual>
__global__ void __launch_bounds__(kMaxRowThreads)
    normalizeRows(const T *x, const T *addend, T *sum, T *y, FloatVector scale, FloatVector bias,
                  int64_t rows, int64_t n, double epsilon) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *in = x + row * n;
    if constexpr (Residual) {
      T *added = sum + row * n;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
        added[j] = residualSum(in[j], addend[row * n + j]);
      in = added;
    }
    RowOf<const T> values{in, 1};
    RowOf<T> out{y + row * n, 1};
    RowStatistics statistics = blockRowStatistics<Centered>(values, n, epsilon);
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      out.store(j, normalizedOutput(values.load(j), statistics, scale.load(j), bias.load(j)));
  }
}

/// layer_norm (`Centered`: scale, optional bias) or rms_norm (scale); with `Residual`,
/// add_layer_norm (lhs, rhs, scale[, bias]) -> (sum, output).
template <bool Centered, bool Residual = false>
bool runRowNorm(KernelContext &context, const KernelCall &call) {
  constexpr size_t kScale = Residual ? 2 : 1;
  const TensorView &input = call.inputs[0];
  if (input.numElements() == 0)
    return true;
  const Attributes &attributes = attributesOf(call);
  int64_t axis = attributes.intOr("axis", 0);
  int64_t rows = extent(input.shape, 0, axis), width = extent(input.shape, axis, input.rank());
  double epsilon = attributes.floatOr("epsilon", 0.0);
  FloatVector scale = floatVector(call.inputs[kScale]);
  FloatVector bias =
      Centered ? optionalFloatVector(call, kScale + 1) : FloatVector{nullptr, DType::F32};
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *addend = Residual ? call.inputs[1].as<T>() : nullptr;
    T *sum = Residual ? call.outputs[0].as<T>() : nullptr;
    T *y = call.outputs[Residual ? 1 : 0].as<T>();
    normalizeRows<T, Centered, Residual>
        <<<blocksFor(rows), rowThreads(width), 0, streamOf(context)>>>(
            input.as<T>(), addend, sum, y, scale, bias, rows, width, epsilon);
  });
  return launched(context, Residual ? "add_layer_norm" : Centered ? "layer_norm" : "rms_norm");
}

//===----------------------------------------------------------------------===//
// layer_norm_grad, rms_norm_grad
//===----------------------------------------------------------------------===//

template <typename T, bool Centered>
__global__ void __launch_bounds__(kMaxRowThreads)
    rowStatisticsOf(const T *x, int64_t rows, int64_t n, double epsilon,
                    RowStatistics *statistics) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    RowStatistics s = blockRowStatistics<Centered>(RowOf<const T>{x + row * n, 1}, n, epsilon);
    if (threadIdx.x == 0)
      statistics[row] = s;
  }
}

/// partials[chunk][j] = sum over the chunk's rows of dy * x^ and, `WithBias`,
/// partials[chunks + chunk][j] = sum of dy.
template <typename T, bool WithBias>
__global__ void parameterGradPartials(const T *dy, const T *x, const RowStatistics *statistics,
                                      RowChunks split, double *partials) {
  int64_t items = split.chunks * split.width;
  for (int64_t i = gridThreadIndex(); i < items; i += gridThreads()) {
    int64_t chunk = i / split.width, j = i % split.width;
    int64_t end = std::min(split.rows, (chunk + 1) * split.rowsPerChunk);
    double scaleSum = 0.0, biasSum = 0.0;
    for (int64_t row = chunk * split.rowsPerChunk; row < end; ++row) {
      float grad = Element<T>::load(dy[row * split.width + j]);
      scaleSum += scaleGradTerm(grad, Element<T>::load(x[row * split.width + j]), statistics[row]);
      biasSum += grad;
    }
    partials[i] = scaleSum;
    if constexpr (WithBias)
      partials[items + i] = biasSum;
  }
}

/// Each gradient's column totals over the chunks, in chunk order (zeros without rows).
__global__ void parameterGradTotals(const double *partials, int64_t chunks, int64_t width,
                                    MutableFloatVector scaleGrad, MutableFloatVector biasGrad) {
  for (int64_t j = gridThreadIndex(); j < width; j += gridThreads()) {
    double scaleTotal = 0.0, biasTotal = 0.0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      scaleTotal += partials[chunk * width + j];
      if (biasGrad.data)
        biasTotal += partials[(chunks + chunk) * width + j];
    }
    scaleGrad.store(j, static_cast<float>(scaleTotal));
    if (biasGrad.data)
      biasGrad.store(j, static_cast<float>(biasTotal));
  }
}

template <typename T, bool Centered>
__global__ void __launch_bounds__(kMaxRowThreads)
    normGradRows(const T *dy, const T *x, T *dx, const RowStatistics *statistics, FloatVector scale,
                 int64_t rows, int64_t n) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    RowOf<const T> grad{dy + row * n, 1}, in{x + row * n, 1};
    RowOf<T> out{dx + row * n, 1};
    RowStatistics s = statistics[row];
    NormGradSums sums = {0.0, 0.0};
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sums = sums + normGradTerms(grad.load(j), in.load(j), scale.load(j), s);
    sums = blockAllReduce(sums, Add{});
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      out.store(j, normGradInput<Centered>(grad.load(j), in.load(j), scale.load(j), s, sums, n));
  }
}

/// The four launches of a normalization's gradient on T rows (the parameter sums before dx).
template <typename T, bool Centered>
bool launchRowNormGrad(KernelContext &context, const KernelCall &call, const RowChunks &split,
                       const RowNormGradScratch &scratch, const char *name) {
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  const T *dy = call.inputs[0].as<T>(), *x = call.inputs[1].as<T>();
  MutableFloatVector biasGrad =
      Centered ? mutableFloatVector(call.outputs[2]) : MutableFloatVector{nullptr, DType::F32};
  cudaStream_t stream = streamOf(context);
  int threads = rowThreads(split.width);
  if (split.rows > 0) {
    rowStatisticsOf<T, Centered><<<blocksFor(split.rows), threads, 0, stream>>>(
        x, split.rows, split.width, epsilon, scratch.statistics);
    if (!launched(context, name))
      return false;
    parameterGradPartials<T, Centered>
        <<<gridFor(split.chunks * split.width), kBlockThreads, 0, stream>>>(
            dy, x, scratch.statistics, split, scratch.partials);
    if (!launched(context, name))
      return false;
  }
  parameterGradTotals<<<gridFor(split.width), kBlockThreads, 0, stream>>>(
      scratch.partials, split.chunks, split.width, mutableFloatVector(call.outputs[1]), biasGrad);
  if (!launched(context, name))
    return false;
  if (split.rows == 0)
    return true;
  normGradRows<T, Centered><<<blocksFor(split.rows), threads, 0, stream>>>(
      dy, x, call.outputs[0].as<T>(), scratch.statistics, floatVector(call.inputs[2]), split.rows,
      split.width);
  return launched(context, name);
}

/// layer_norm_grad (`Centered`: input_grad, scale_grad, bias_grad) or rms_norm_grad
/// (input_grad, scale_grad), from (grad, input, scale).
template <bool Centered> bool runRowNormGrad(KernelContext &context, const KernelCall &call) {
  RowChunks split(call);
  if (split.width == 0)
    return true;
  WorkspaceCarver carver(call);
  RowNormGradScratch scratch = carveRowNormGrad(call, carver);
  if (!carver.fits(context))
    return false;
  return visitFloat(call.inputs[1].dtype, [&](auto tag) {
    return launchRowNormGrad<typename decltype(tag)::type, Centered>(
        context, call, split, scratch, Centered ? "layer_norm_grad" : "rms_norm_grad");
  });
}

} // namespace

void addRowNormCudaKernels(CudaKernelRuns &runs) {
  runs["layer_norm"] = &runRowNorm<true>;
  runs["add_layer_norm"] = &runRowNorm<true, true>;
  runs["rms_norm"] = &runRowNorm<false>;
  runs["layer_norm_grad"] = &runRowNormGrad<true>;
  runs["rms_norm_grad"] = &runRowNormGrad<false>;
}

} // namespace memc::kernels::cuda::rows
