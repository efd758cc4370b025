//===- Pooling.cu - max_pool, avg_pool and their gradients on CUDA --------===//
//
// One thread per output (forward) or per input element (gradients), grid-stride, each doing
// PoolingMath.h's arithmetic for its window or element, the CPU kernels' to the bit. The
// gradients gather: each input element sums the windows routing to it in output order, so
// they need no atomics and add in the CPU's order.
//
// max_pool_grad is two launches: the maximum tap of every window, as max_pool_with_argmax
// picks it, into int32 workspace (one per grad element), then max_pool_grad_argmax's gather.
//
//===----------------------------------------------------------------------===//
#include "kernels/ElementVisitors.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"
#include "kernels/cuda/PoolingMath.h"

namespace memc::kernels {

void addPoolingCudaKernels(CudaKernelRuns &runs);

namespace {

using namespace cuda;

/// max_pool over the planes of `x`: the window values into `y` and their maximum taps' indices
/// into `taps` (0 for a window all padding), each when not null.
template <typename T, typename Index>
__global__ void maxPoolKernel(PoolGeometry g, const T *x, T *y, Index *taps, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    const int64_t plane = i / g.outPlane, p = i % g.outPlane;
    const T *in = x + plane * g.inPlane;
    const WindowArgmax best = windowArgmax(g, in, p);
    if (y)
      storeFloat(y, i, best.offset < 0 ? -INFINITY : loadFloat(in, best.offset));
    if (taps)
      taps[i] = static_cast<Index>(best.tap);
  }
}

template <typename T>
__global__ void avgPoolKernel(PoolGeometry g, const T *x, T *y, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    const int64_t plane = i / g.outPlane, p = i % g.outPlane;
    storeFloat(y, i, windowAverage(g, x + plane * g.inPlane, p));
  }
}

/// The gradient of max_pool routed by the windows' saved taps, gathered per result element.
template <typename T, typename G, typename Index>
__global__ void maxPoolGradKernel(PoolGeometry g, const G *dy, const Index *taps, T *result,
                                  int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    const int64_t plane = i / g.inPlane, x = i % g.inPlane;
    const int64_t outputs = plane * g.outPlane;
    storeFloat(result, i, maxPoolGradAt(g, dy + outputs, taps + outputs, x));
  }
}

template <typename T>
__global__ void avgPoolGradKernel(PoolGeometry g, const T *dy, T *result, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    const int64_t plane = i / g.inPlane, x = i % g.inPlane;
    storeFloat(result, i, avgPoolGradAt(g, dy + plane * g.outPlane, x));
  }
}

/// max_pool (`taps` null) or max_pool_with_argmax.
bool launchMaxPool(KernelContext &context, const KernelCall &call, uint8_t *taps,
                   const char *name) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  const int64_t count = output.numElements();
  if (count == 0)
    return true;
  const PoolGeometry g = poolGeometry(input.shape, output.shape, attributesOf(call));
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    maxPoolKernel<T, uint8_t><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
        g, input.as<const T>(), output.as<T>(), taps, count);
  });
  return launched(context, name);
}

bool runMaxPool(KernelContext &context, const KernelCall &call) {
  return launchMaxPool(context, call, nullptr, "max_pool");
}

bool runMaxPoolWithArgmax(KernelContext &context, const KernelCall &call) {
  return launchMaxPool(context, call, call.outputs[1].as<uint8_t>(), "max_pool_with_argmax");
}

bool runAvgPool(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  const int64_t count = output.numElements();
  if (count == 0)
    return true;
  const PoolGeometry g = poolGeometry(input.shape, output.shape, attributesOf(call));
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    avgPoolKernel<T><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
        g, input.as<const T>(), output.as<T>(), count);
  });
  return launched(context, "avg_pool");
}

/// The gather of max_pool_grad and max_pool_grad_argmax, by the taps' Index type.
template <typename Index>
void launchMaxPoolGrad(KernelContext &context, const PoolGeometry &g, const TensorView &grad,
                       const Index *taps, const TensorView &result) {
  const int64_t count = result.numElements();
  visitFloat(result.dtype, [&](auto resultTag) {
    using T = typename decltype(resultTag)::type;
    visitFloat(grad.dtype, [&](auto gradTag) {
      using G = typename decltype(gradTag)::type;
      maxPoolGradKernel<T, G, Index><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
          g, grad.as<const G>(), taps, result.as<T>(), count);
    });
  });
}

bool runMaxPoolGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &input = call.inputs[1], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  const int64_t windows = grad.numElements();
  const uint64_t need = alignedToWorkspace(static_cast<uint64_t>(windows) * sizeof(int32_t));
  if (call.workspaceBytes < need)
    return context.fail("max_pool_grad: the workspace has " + std::to_string(call.workspaceBytes) +
                        " bytes, it needs " + std::to_string(need));
  int32_t *taps = static_cast<int32_t *>(call.workspace);
  const PoolGeometry g = poolGeometry(input.shape, grad.shape, attributesOf(call));
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    maxPoolKernel<T, int32_t><<<gridFor(windows), kBlockThreads, 0, streamOf(context)>>>(
        g, input.as<const T>(), nullptr, taps, windows);
  });
  if (!launched(context, "max_pool_grad"))
    return false;
  launchMaxPoolGrad<int32_t>(context, g, grad, taps, result);
  return launched(context, "max_pool_grad");
}

bool runMaxPoolGradArgmax(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  const PoolGeometry g = poolGeometry(result.shape, grad.shape, attributesOf(call));
  launchMaxPoolGrad<uint8_t>(context, g, grad, call.inputs[1].as<const uint8_t>(), result);
  return launched(context, "max_pool_grad_argmax");
}

bool runAvgPoolGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  const int64_t count = result.numElements();
  if (count == 0)
    return true;
  const PoolGeometry g = poolGeometry(result.shape, grad.shape, attributesOf(call));
  visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    avgPoolGradKernel<T><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
        g, grad.as<const T>(), result.as<T>(), count);
  });
  return launched(context, "avg_pool_grad");
}

} // namespace

void addPoolingCudaKernels(CudaKernelRuns &runs) {
  runs["max_pool"] = &runMaxPool;
  runs["max_pool_with_argmax"] = &runMaxPoolWithArgmax;
  runs["avg_pool"] = &runAvgPool;
  runs["max_pool_grad"] = &runMaxPoolGrad;
  runs["max_pool_grad_argmax"] = &runMaxPoolGradArgmax;
  runs["avg_pool_grad"] = &runAvgPoolGrad;
}

} // namespace memc::kernels
