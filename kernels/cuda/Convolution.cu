//===- Convolution.cu - conv and its gradients on CUDA by im2col ----------===//
//
// The CPU's im2col products (kernels/cpu/Convolution.cpp, ConvolutionBackward.cpp), a chunk of
// images at a time (MatMulWorkspaces.h), on cuBLASLt; g indexes groups, R = C/group * taps,
// Mg = M/group, P the output positions:
//  - conv: columns[n, g] (im2col), then Y[n, g] = W_g[Mg, R] @ columns[R, P]; the bias is
//    added in f32 before a 16-bit output is rounded;
//  - conv_grad_input: columns[n, g] = W_g^T[R, Mg] @ dY[n, g][Mg, P] in f32, then col2im:
//    each input element gathers the column elements that read it (no atomics);
//  - conv_grad_weight: the chunk's columns laid out [g, R, image, P] and its gradient copied
//    [M, image, P], then dW_g[Mg, R] (+)= dY_g[Mg, images * P] @ columns_g^T, one product per
//    group summing over the chunk's images and positions; over chunks in the result for f32, in
//    an f32 accumulator rounded once for 16-bit.
// The products of a chunk are one strided batch over its images or over the groups, looping
// over the other (the shorter). A 1x1 convolution with unit strides and no padding reads the
// image as its own column matrix (forward and conv_grad_input). The index arithmetic is
// ConvolutionMath.h's. cuDNN, which would spare the column matrices, is a later step.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/ConvolutionMath.h"
#include "kernels/cuda/CublasLtGemm.h"
#include "kernels/cuda/MatMulKernels.cuh"
#include "kernels/cuda/MatMulWorkspaces.h"

namespace memc::kernels::cuda {
namespace {

/// Where im2col puts the column element (image n, group g, row r, position p): at
/// n * image + g * group + r * row + p.
struct ColumnStrides {
  int64_t image, group, row;
};

/// The column matrices of `images` images (from the first of `x`).
template <typename T>
__global__ void im2col(const T *x, ConvWindow w, int64_t channels, int64_t groupChannels,
                       int64_t group, int64_t columnRows, int64_t images, ColumnStrides to,
                       T *columns) {
  const int64_t total = images * group * columnRows * w.outSize;
  for (int64_t e = gridThreadIndex(); e < total; e += gridThreads()) {
    const int64_t position = e % w.outSize, matrix = e / w.outSize;
    const int64_t row = matrix % columnRows, imageGroup = matrix / columnRows;
    const int64_t n = imageGroup / group, g = imageGroup % group;
    const int64_t source = im2colSource(w, row, position);
    columns[n * to.image + g * to.group + row * to.row + position] =
        source < 0 ? T{} : x[(n * channels + g * groupChannels) * w.inSize + source];
  }
}

/// The gradient of `images` images [image, M, P] copied [M, image, P].
template <typename T>
__global__ void imagesInnerCopy(const T *dy, int64_t images, int64_t channels, int64_t positions,
                                T *out) {
  const int64_t total = images * channels * positions;
  for (int64_t e = gridThreadIndex(); e < total; e += gridThreads()) {
    const int64_t position = e % positions, plane = e / positions;
    const int64_t c = plane % channels, n = plane / channels;
    out[(c * images + n) * positions + position] = dy[e];
  }
}

/// The input gradient of `images` images from their f32 column matrices: each element sums,
/// tap by tap, the column elements read from it.
template <typename T>
__global__ void col2im(const float *columns, ConvWindow w, int64_t channels, int64_t groupChannels,
                       int64_t group, int64_t columnRows, int64_t images, T *dx) {
  const int64_t total = images * channels * w.inSize;
  for (int64_t e = gridThreadIndex(); e < total; e += gridThreads()) {
    const int64_t input = e % w.inSize, plane = e / w.inSize;
    const int64_t c = plane % channels, n = plane / channels;
    const int64_t g = c / groupChannels, channelRow = (c % groupChannels) * w.taps;
    const float *matrix = columns + ((n * group + g) * columnRows + channelRow) * w.outSize;
    float sum = 0.0f;
    for (int64_t tap = 0; tap < w.taps; ++tap) {
      const int64_t position = col2imPosition(w, tap, input);
      if (position >= 0)
        sum += matrix[tap * w.outSize + position];
    }
    storeFloat(dx, e, sum);
  }
}

/// out[e] = (sums ? sums[e] : out[e]) + bias[channel of e], rounded once to T.
template <typename T, typename B>
__global__ void addBias(const float *sums, const B *bias, int64_t count, int64_t positions,
                        int64_t channels, T *out) {
  for (int64_t e = gridThreadIndex(); e < count; e += gridThreads()) {
    const float value = sums ? sums[e] : loadFloat(out, e);
    storeFloat(out, e, value + loadFloat(bias, (e / positions) % channels));
  }
}

/// An operand's element strides from one image to the next and from one group to the next.
struct Steps {
  int64_t image, group;
};

/// `gemm` (its pointers at image 0, group 0) for every image and group: a strided batch over
/// the longer of the two, a loop over the shorter.
bool runImageGroupProducts(KernelContext &context, RowMajorGemm gemm, int64_t images,
                           int64_t groups, Steps a, Steps b, Steps d,
                           const GemmWorkspace &workspace, const char *kernel) {
  const bool batchGroups = groups > images;
  const int64_t loops = batchGroups ? images : groups;
  gemm.batch = batchGroups ? groups : images;
  gemm.a.batchStride = batchGroups ? a.group : a.image;
  gemm.b.batchStride = batchGroups ? b.group : b.image;
  gemm.batchStrideD = batchGroups ? d.group : d.image;
  const size_t input = dtypeSize(gemm.inputType), output = dtypeSize(gemm.outputType);
  for (int64_t i = 0; i < loops; ++i) {
    RowMajorGemm part = gemm;
    part.a.data =
        static_cast<const char *>(gemm.a.data) + i * (batchGroups ? a.image : a.group) * input;
    part.b.data =
        static_cast<const char *>(gemm.b.data) + i * (batchGroups ? b.image : b.group) * input;
    part.d = static_cast<char *>(gemm.d) + i * (batchGroups ? d.image : d.group) * output;
    if (!runGemm(context, part, workspace, kernel))
      return false;
  }
  return true;
}

/// Launches im2col for images [first, first + count) of `x` into `columns`, laid out
/// [image, group, R, P], or [group, R, image, P] with `imagesInner`.
template <typename T>
bool buildColumns(KernelContext &context, const ConvProblem &p, const T *x, int64_t first,
                  int64_t count, bool imagesInner, T *columns, const char *kernel) {
  const ConvGeometry &g = p.g;
  const int64_t rows = g.columnRows, positions = g.outSize;
  const ColumnStrides to =
      imagesInner ? ColumnStrides{positions, rows * count * positions, count * positions}
                  : ColumnStrides{g.group * rows * positions, rows * positions, positions};
  const int64_t total = count * p.columnElements();
  im2col<T><<<gridFor(total), kBlockThreads, 0, streamOf(context)>>>(
      x + first * g.channels * g.inSize, convWindowOf(g), g.channels, g.groupChannels, g.group,
      rows, count, to, columns);
  return launched(context, kernel);
}

template <typename T>
bool conv(KernelContext &context, const KernelCall &call, const ConvProblem &p,
          const ConvScratch &scratch) {
  const char *kernel = "conv";
  const ConvGeometry &g = p.g;
  const T *x = call.inputs[0].as<T>();
  T *y = call.outputs[0].as<T>();
  const int64_t rows = g.columnRows, mg = g.groupOutChannels, positions = g.outSize;
  RowMajorGemm gemm;
  gemm.tf32 = allowsTf32(call);
  gemm.m = mg;
  gemm.n = positions;
  gemm.k = rows;
  gemm.inputType = p.dtype;
  gemm.outputType = p.sumsOutput() ? DType::F32 : p.dtype;
  gemm.ldd = positions;
  const Steps weightSteps{0, mg * rows};
  const Steps imageSteps = p.pointwise ? Steps{g.channels * g.inSize, g.groupChannels * g.inSize}
                                       : Steps{g.group * rows * positions, rows * positions};
  const Steps outputSteps{g.outChannels * positions, mg * positions};
  for (int64_t first = 0; first < g.batch; first += p.chunkImages) {
    const int64_t count = std::min(p.chunkImages, g.batch - first);
    T *columns = static_cast<T *>(scratch.columns);
    if (!p.pointwise && !buildColumns(context, p, x, first, count, false, columns, kernel))
      return false;
    gemm.a = {call.inputs[1].data, rows, 0, false};
    gemm.b = {p.pointwise ? static_cast<const void *>(x + first * g.channels * g.inSize) : columns,
              positions, 0, false};
    gemm.d = p.sumsOutput() ? static_cast<void *>(scratch.outputSums)
                            : y + first * g.outChannels * positions;
    if (!runImageGroupProducts(context, gemm, count, g.group, weightSteps, imageSteps, outputSteps,
                               scratch.gemm, kernel))
      return false;
    if (p.sumsOutput()) {
      const int64_t total = count * g.outChannels * positions;
      visitFloat(call.inputs[2].dtype, [&](auto tag) {
        using B = typename decltype(tag)::type;
        addBias<T, B><<<gridFor(total), kBlockThreads, 0, streamOf(context)>>>(
            scratch.outputSums, call.inputs[2].as<B>(), total, positions, g.outChannels,
            y + first * g.outChannels * positions);
      });
      if (!launched(context, kernel))
        return false;
    }
  }
  if (!p.bias || p.sumsOutput())
    return true;
  const int64_t total = call.outputs[0].numElements();
  visitFloat(call.inputs[2].dtype, [&](auto tag) {
    using B = typename decltype(tag)::type;
    addBias<T, B><<<gridFor(total), kBlockThreads, 0, streamOf(context)>>>(
        nullptr, call.inputs[2].as<B>(), total, positions, g.outChannels, y);
  });
  return launched(context, kernel);
}

template <typename T>
bool convGradInput(KernelContext &context, const KernelCall &call, const ConvProblem &p,
                   const ConvScratch &scratch) {
  const char *kernel = "conv_grad_input";
  const ConvGeometry &g = p.g;
  const T *dy = call.inputs[0].as<T>();
  T *dx = call.outputs[0].as<T>();
  const int64_t rows = g.columnRows, mg = g.groupOutChannels, positions = g.outSize;
  float *columns = static_cast<float *>(scratch.columns);
  // W_g^T [R, Mg] @ dY_g [Mg, P]: into the input gradient itself for a 1x1 convolution.
  RowMajorGemm gemm;
  gemm.tf32 = allowsTf32(call);
  gemm.m = rows;
  gemm.n = positions;
  gemm.k = mg;
  gemm.inputType = p.dtype;
  gemm.outputType = p.pointwise ? p.dtype : DType::F32;
  gemm.ldd = positions;
  const Steps weightSteps{0, mg * rows};
  const Steps gradSteps{g.outChannels * positions, mg * positions};
  const Steps resultSteps = p.pointwise ? Steps{g.channels * g.inSize, g.groupChannels * g.inSize}
                                        : Steps{g.group * rows * positions, rows * positions};
  for (int64_t first = 0; first < g.batch; first += p.chunkImages) {
    const int64_t count = std::min(p.chunkImages, g.batch - first);
    gemm.a = {call.inputs[1].data, rows, 0, true};
    gemm.b = {dy + first * g.outChannels * positions, positions, 0, false};
    gemm.d = p.pointwise ? static_cast<void *>(dx + first * g.channels * g.inSize) : columns;
    if (!runImageGroupProducts(context, gemm, count, g.group, weightSteps, gradSteps, resultSteps,
                               scratch.gemm, kernel))
      return false;
    if (p.pointwise)
      continue;
    const int64_t total = count * g.channels * g.inSize;
    col2im<T><<<gridFor(total), kBlockThreads, 0, streamOf(context)>>>(
        columns, convWindowOf(g), g.channels, g.groupChannels, g.group, rows, count,
        dx + first * g.channels * g.inSize);
    if (!launched(context, kernel))
      return false;
  }
  return true;
}

template <typename T>
bool convGradWeight(KernelContext &context, const KernelCall &call, const ConvProblem &p,
                    const ConvScratch &scratch) {
  const char *kernel = "conv_grad_weight";
  const ConvGeometry &g = p.g;
  const T *dy = call.inputs[0].as<T>(), *x = call.inputs[1].as<T>();
  const TensorView &result = call.outputs[0];
  if (g.batch == 0)
    return zeroBytes(context, result.data, result.sizeBytes(), kernel);
  const int64_t rows = g.columnRows, mg = g.groupOutChannels, positions = g.outSize;
  T *columns = static_cast<T *>(scratch.columns), *gradients = static_cast<T *>(scratch.gradients);
  // dW_g [Mg, R] (+)= dY_g [Mg, images * P] @ columns_g^T [images * P, R], group by group.
  RowMajorGemm gemm;
  gemm.tf32 = allowsTf32(call);
  gemm.m = mg;
  gemm.n = rows;
  gemm.inputType = p.dtype;
  gemm.outputType = scratch.weightSums ? DType::F32 : p.dtype;
  gemm.d = scratch.weightSums ? static_cast<void *>(scratch.weightSums) : result.data;
  gemm.ldd = rows;
  for (int64_t first = 0; first < g.batch; first += p.chunkImages) {
    const int64_t count = std::min(p.chunkImages, g.batch - first), span = count * positions;
    const int64_t total = count * g.outChannels * positions;
    imagesInnerCopy<T><<<gridFor(total), kBlockThreads, 0, streamOf(context)>>>(
        dy + first * g.outChannels * positions, count, g.outChannels, positions, gradients);
    if (!launched(context, kernel) ||
        !buildColumns(context, p, x, first, count, true, columns, kernel))
      return false;
    gemm.k = span;
    gemm.a = {gradients, span, 0, false};
    gemm.b = {columns, span, 0, true};
    gemm.beta = first > 0 ? 1.0f : 0.0f;
    if (!runImageGroupProducts(context, gemm, 1, g.group, Steps{0, mg * span},
                               Steps{0, rows * span}, Steps{0, mg * rows}, scratch.gemm, kernel))
      return false;
  }
  return !scratch.weightSums ||
         launchStoreRounded(context, scratch.weightSums, result.numElements(), p.dtype, result.data,
                            kernel);
}

template <ConvDirection direction>
bool runConvolution(KernelContext &context, const KernelCall &call) {
  if (call.outputs[0].numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  ConvScratch scratch = carveConvCall<direction>(call, carver);
  if (!carver.fits(context))
    return false;
  const ConvProblem problem(call, direction);
  return visitFloat(problem.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (direction == ConvDirection::Forward)
      return conv<T>(context, call, problem, scratch);
    else if constexpr (direction == ConvDirection::GradInput)
      return convGradInput<T>(context, call, problem, scratch);
    else
      return convGradWeight<T>(context, call, problem, scratch);
  });
}

} // namespace

void addConvolutionCudaKernels(CudaKernelRuns &runs) {
  runs["conv"] = &runConvolution<ConvDirection::Forward>;
  runs["conv_grad_input"] = &runConvolution<ConvDirection::GradInput>;
  runs["conv_grad_weight"] = &runConvolution<ConvDirection::GradWeight>;
}

} // namespace memc::kernels::cuda
