//===- CrossEntropy.cu - cross_entropy and cross_entropy_grad on CUDA -----===//
//
// torch.nn.functional.cross_entropy with the class axis last, integer labels, ignore_index and
// mean reduction, as the CPU kernels (kernels/cpu/Losses.cpp):
//  - cross_entropy: a block per counted row writes logsumexp(row) - row[label] (f64, as the
//    CPU's) into the workspace; one block then counts the rows, adds their losses in a fixed
//    order (f64) and writes the mean (0 when every row is ignored).
//  - cross_entropy_grad: one block counts the rows into the workspace; a block per row then
//    writes (softmax(row) - onehot(label)) * grad / count, zeros on ignored rows. The 0-d grad
//    is read inside the kernel. A row is read whole before it is written, so the result may
//    share the logits' buffer.
// Labels are data: a label outside [0, classes) that is not ignore_index selects nothing (its
// row is skipped, its gradient zeros) and the counting block records the first such one, by
// position, as kLabelOutOfRange with the values of the CPU's message.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/RowKernels.cuh"
#include "kernels/cuda/RowWorkspace.h"

namespace memc::kernels::cuda::rows {
namespace {

/// Threads of the one block that goes over every label.
constexpr int kLabelThreads = 1024;

/// What the counting block learns from the labels.
struct LabelSummary {
  int64_t counted;      // rows not ignored with a label in range
  int64_t firstOutside; // the first row whose label is out of range; rows if none
  double total;         // the counted rows' losses, when given
};

/// The labels' summary, by the whole block; `losses` may be null.
__device__ LabelSummary summarizeLabels(IndexVector labels, int64_t rows, int64_t classes,
                                        int64_t ignoreIndex, const double *losses) {
  int64_t counted = 0, firstOutside = rows;
  double total = 0.0;
  for (int64_t row = threadIdx.x; row < rows; row += blockDim.x) {
    int64_t target = targetOf(labels.load(row), classes, ignoreIndex);
    if (target >= 0) {
      ++counted;
      if (losses)
        total += losses[row];
    } else if (target == kLabelOutsideClasses && row < firstOutside) {
      firstOutside = row;
    }
  }
  return {blockAllReduce(counted, Add{}), blockAllReduce(firstOutside, Min{}),
          blockAllReduce(total, Add{})};
}

__device__ void recordOutsideLabel(const LabelSummary &summary, IndexVector labels, int64_t rows,
                                   int64_t classes, DeviceErrorRecord *errors, uint32_t step) {
  if (summary.firstOutside < rows)
    recordDeviceError(errors, step, kLabelOutOfRange, labels.load(summary.firstOutside),
                      summary.firstOutside, classes);
}

template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
    crossEntropyRowLosses(const T *logits, IndexVector labels, int64_t rows, int64_t classes,
                          int64_t ignoreIndex, double *losses) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    int64_t target = targetOf(labels.load(row), classes, ignoreIndex);
    if (target < 0)
      continue;
    RowOf<const T> x{logits + row * classes, 1};
    SoftmaxStatistics statistics = blockSoftmaxStatistics(x, classes);
    if (threadIdx.x == 0)
      losses[row] = crossEntropyLoss(statistics, x.load(target));
  }
}

__global__ void __launch_bounds__(kLabelThreads)
    crossEntropyMeanOf(IndexVector labels, int64_t rows, int64_t classes, int64_t ignoreIndex,
                       const double *losses, float *loss, DeviceErrorRecord *errors,
                       uint32_t step) {
  LabelSummary summary = summarizeLabels(labels, rows, classes, ignoreIndex, losses);
  if (threadIdx.x != 0)
    return;
  recordOutsideLabel(summary, labels, rows, classes, errors, step);
  *loss = crossEntropyMean(summary.total, summary.counted);
}

template <typename T>
bool launchCrossEntropy(KernelContext &context, const KernelCall &call, double *losses) {
  const TensorView &logits = call.inputs[0];
  int64_t rows = lossRows(logits), classes = logits.shape.back();
  int64_t ignoreIndex = attributesOf(call).intOr("ignore_index", -100);
  IndexVector labels = indexVector(call.inputs[1]);
  cudaStream_t stream = streamOf(context);
  if (rows > 0 && classes > 0) {
    crossEntropyRowLosses<T><<<blocksFor(rows), rowThreads(classes), 0, stream>>>(
        logits.as<T>(), labels, rows, classes, ignoreIndex, losses);
    if (!launched(context, "cross_entropy"))
      return false;
  }
  crossEntropyMeanOf<<<1, kLabelThreads, 0, stream>>>(labels, rows, classes, ignoreIndex, losses,
                                                      call.outputs[0].as<float>(),
                                                      context.deviceErrors, context.step);
  return launched(context, "cross_entropy");
}

bool runCrossEntropy(KernelContext &context, const KernelCall &call) {
  WorkspaceCarver carver(call);
  double *losses = carveCrossEntropy(call, carver);
  if (!carver.fits(context))
    return false;
  return visitFloat(call.inputs[0].dtype, [&](auto tag) {
    return launchCrossEntropy<typename decltype(tag)::type>(context, call, losses);
  });
}

//===----------------------------------------------------------------------===//
// cross_entropy_grad
//===----------------------------------------------------------------------===//

__global__ void __launch_bounds__(kLabelThreads)
    countLabels(IndexVector labels, int64_t rows, int64_t classes, int64_t ignoreIndex,
                int64_t *counted, DeviceErrorRecord *errors, uint32_t step) {
  LabelSummary summary = summarizeLabels(labels, rows, classes, ignoreIndex, nullptr);
  if (threadIdx.x != 0)
    return;
  recordOutsideLabel(summary, labels, rows, classes, errors, step);
  *counted = summary.counted;
}

template <typename T>
__global__ void __launch_bounds__(kMaxRowThreads)
    crossEntropyGradRows(const float *grad, const int64_t *counted, const T *logits,
                         IndexVector labels, T *result, int64_t rows, int64_t classes,
                         int64_t ignoreIndex) {
  float scale = crossEntropyGradScale(*grad, *counted);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    int64_t target = targetOf(labels.load(row), classes, ignoreIndex);
    RowOf<const T> x{logits + row * classes, 1};
    RowOf<T> out{result + row * classes, 1};
    if (target < 0) {
      for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
        out.store(j, 0.0f);
      continue;
    }
    SoftmaxStatistics statistics = blockSoftmaxStatistics(x, classes);
    auto factor = static_cast<float>(scale / statistics.sum);
    for (int64_t j = threadIdx.x; j < classes; j += blockDim.x)
      out.store(j, crossEntropyGradOutput(x.load(j), statistics.max, factor, j == target, scale));
  }
}

template <typename T>
bool launchCrossEntropyGrad(KernelContext &context, const KernelCall &call, int64_t *counted) {
  const TensorView &logits = call.inputs[1];
  int64_t rows = lossRows(logits), classes = logits.shape.back();
  int64_t ignoreIndex = attributesOf(call).intOr("ignore_index", -100);
  IndexVector labels = indexVector(call.inputs[2]);
  cudaStream_t stream = streamOf(context);
  countLabels<<<1, kLabelThreads, 0, stream>>>(labels, rows, classes, ignoreIndex, counted,
                                               context.deviceErrors, context.step);
  if (!launched(context, "cross_entropy_grad"))
    return false;
  if (rows == 0 || classes == 0)
    return true;
  crossEntropyGradRows<T><<<blocksFor(rows), rowThreads(classes), 0, stream>>>(
      call.inputs[0].as<float>(), counted, logits.as<T>(), labels, call.outputs[0].as<T>(), rows,
      classes, ignoreIndex);
  return launched(context, "cross_entropy_grad");
}

bool runCrossEntropyGrad(KernelContext &context, const KernelCall &call) {
  WorkspaceCarver carver(call);
  int64_t *counted = carveCrossEntropyGrad(call, carver);
  if (!carver.fits(context))
    return false;
  return visitFloat(call.inputs[1].dtype, [&](auto tag) {
    return launchCrossEntropyGrad<typename decltype(tag)::type>(context, call, counted);
  });
}

} // namespace

void addCrossEntropyCudaKernels(CudaKernelRuns &runs) {
  runs["cross_entropy"] = &runCrossEntropy;
  runs["cross_entropy_grad"] = &runCrossEntropyGrad;
}

} // namespace memc::kernels::cuda::rows
