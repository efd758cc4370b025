//===- Optimizers.cu - sgd_update, adamw_update, adamw8bit_update on CUDA -===//
//
// One optimizer step for one parameter, elementwise, in place where the plan places the new
// parameter and state over the old ones; the arithmetic is OptimizerMath.h's, the CPU kernels'
// to the bit. The run-time scalars (lr, step, the gate) are read in the kernel body, never on
// the host: with the gate off every output keeps its input; a step number below 1 is recorded
// as kStepBelowOne and changes nothing.
//
// adamw8bit_update runs one thread block per quantization block of kQuantizationBlock
// elements: each thread updates its element, the block reduces the two new absmax, then each
// thread quantizes its moments with them.
//
//===----------------------------------------------------------------------===//
#include "kernels/ElementVisitors.h"
#include "kernels/ScalarOperand.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"
#include "kernels/cuda/OptimizerMath.h"

namespace memc::kernels {

/// The pooling kernels' share of the group (Pooling.cu).
void addPoolingCudaKernels(CudaKernelRuns &runs);

namespace {

using namespace cuda;

/// Operand `at` of the call (its gate, when present), else null: gateIsOn reads it in the
/// kernel body.
const float *optionalScalar(const KernelCall &call, size_t at) {
  return call.inputs.size() > at ? call.inputs[at].as<const float>() : nullptr;
}

/// Element i of an output the gate keeps: its input's, copied unless the plan placed them
/// together.
template <typename T> __device__ inline void keep(const T *from, T *to, int64_t i) {
  if (to != from)
    to[i] = from[i];
}

/// Records kStepBelowOne for `step` from the grid's first thread.
__device__ inline void recordStepBelowOne(DeviceErrorRecord *errors, uint32_t planStep,
                                          float step) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    recordDeviceError(errors, planStep, kStepBelowOne,
                      __double_as_longlong(static_cast<double>(step)));
}

template <typename T> struct SgdTensors {
  const T *param, *grad, *velocity;
  T *newParam, *newVelocity;
};

template <typename T>
__global__ void sgdKernel(SgdTensors<T> t, SgdSettings settings, ScalarOperand<float> lr,
                          const float *gate, int64_t count) {
  if (!gateIsOn(gate)) {
    for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
      keep(t.param, t.newParam, i);
      keep(t.velocity, t.newVelocity, i);
    }
    return;
  }
  const float rate = lr.get();
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    float velocity = loadFloat(t.velocity, i);
    float param = sgdUpdate(settings, rate, loadFloat(t.param, i), loadFloat(t.grad, i), velocity);
    storeFloat(t.newVelocity, i, velocity);
    storeFloat(t.newParam, i, param);
  }
}

bool runSgd(KernelContext &context, const KernelCall &call) {
  const SgdSettings settings = sgdSettings(attributesOf(call));
  const int64_t count = call.inputs[0].numElements();
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SgdTensors<T> t{call.inputs[0].as<const T>(), call.inputs[1].as<const T>(),
                    call.inputs[2].as<const T>(), call.outputs[0].as<T>(), call.outputs[1].as<T>()};
    sgdKernel<T><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
        t, settings, ScalarOperand<float>(call.inputs[3]), optionalScalar(call, 4), count);
  });
  return launched(context, "sgd_update");
}

/// The operands every AdamW kernel reads in its body, and where it reports a bad step.
struct AdamWScalars {
  ScalarOperand<float> lr, step;
  const float *gate;
  DeviceErrorRecord *errors;
  uint32_t planStep;
};

AdamWScalars adamWScalars(KernelContext &context, const KernelCall &call, size_t lrInput) {
  return AdamWScalars{ScalarOperand<float>(call.inputs[lrInput]),
                      ScalarOperand<float>(call.inputs[lrInput + 1]),
                      optionalScalar(call, lrInput + 2), context.deviceErrors, context.step};
}

template <typename T> struct AdamWTensors {
  const T *param, *grad;
  const float *m, *v;
  T *newParam;
  float *newM, *newV;
};

template <typename T>
__global__ void adamWKernel(AdamWTensors<T> t, AdamWSettings settings, AdamWScalars scalars,
                            int64_t count) {
  if (!gateIsOn(scalars.gate)) {
    for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
      keep(t.param, t.newParam, i);
      keep(t.m, t.newM, i);
      keep(t.v, t.newV, i);
    }
    return;
  }
  const float step = scalars.step.get();
  if (!adamWStepIsValid(step)) {
    recordStepBelowOne(scalars.errors, scalars.planStep, step);
    return;
  }
  const AdamWStep constants = adamWStep(settings, scalars.lr.get(), step);
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    float m = t.m[i], v = t.v[i];
    float param = adamWUpdate(constants, loadFloat(t.param, i), loadFloat(t.grad, i), m, v);
    t.newM[i] = m;
    t.newV[i] = v;
    storeFloat(t.newParam, i, param);
  }
}

bool runAdamW(KernelContext &context, const KernelCall &call) {
  const int64_t count = call.inputs[0].numElements();
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdamWTensors<T> t{call.inputs[0].as<const T>(),     call.inputs[1].as<const T>(),
                      call.inputs[2].as<const float>(), call.inputs[3].as<const float>(),
                      call.outputs[0].as<T>(),          call.outputs[1].as<float>(),
                      call.outputs[2].as<float>()};
    adamWKernel<T><<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(
        t, adamWSettings(attributesOf(call)), adamWScalars(context, call, 4), count);
  });
  return launched(context, "adamw_update");
}

template <typename T> struct AdamW8bitTensors {
  const T *param, *grad;
  const uint8_t *m, *v;
  const float *mAbsmax, *vAbsmax;
  T *newParam;
  uint8_t *newM, *newV;
  float *newMAbsmax, *newVAbsmax;
};

constexpr int kWarpsPerQuantizationBlock = kQuantizationBlock / 32;

/// The largest of the block's `value`s (none NaN), for every thread of the block; `scratch`
/// holds one value per warp and is free again on return.
__device__ inline float blockMax(float value, float *scratch) {
  for (int offset = 16; offset > 0; offset >>= 1)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  if (threadIdx.x % 32 == 0)
    scratch[threadIdx.x / 32] = value;
  __syncthreads();
  float max = scratch[0];
  for (int warp = 1; warp < kWarpsPerQuantizationBlock; ++warp)
    max = fmaxf(max, scratch[warp]);
  __syncthreads();
  return max;
}

/// Grid-stride over quantization blocks, one thread per element (kQuantizationBlock threads).
template <typename T>
__global__ void __launch_bounds__(kQuantizationBlock)
    adamW8bitKernel(AdamW8bitTensors<T> t, MomentCodes codes, AdamWSettings settings,
                    AdamWScalars scalars, int64_t count) {
  const int64_t blocks = (count + kQuantizationBlock - 1) / kQuantizationBlock;
  const int j = threadIdx.x;
  if (!gateIsOn(scalars.gate)) {
    for (int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
      const int64_t i = block * kQuantizationBlock + j;
      if (i < count) {
        keep(t.param, t.newParam, i);
        keep(t.m, t.newM, i);
        keep(t.v, t.newV, i);
      }
      if (j == 0) {
        keep(t.mAbsmax, t.newMAbsmax, block);
        keep(t.vAbsmax, t.newVAbsmax, block);
      }
    }
    return;
  }
  const float step = scalars.step.get();
  if (!adamWStepIsValid(step)) {
    recordStepBelowOne(scalars.errors, scalars.planStep, step);
    return;
  }
  const AdamWStep constants = adamWStep(settings, scalars.lr.get(), step);
  // The code values are searched with indices that differ by thread: shared memory, not the
  // argument space.
  __shared__ float firstCode[256], secondCode[256];
  __shared__ float scratch[2][kWarpsPerQuantizationBlock];
  firstCode[j] = codes.first[j];
  secondCode[j] = codes.second[j];
  __syncthreads();
  for (int64_t block = blockIdx.x; block < blocks; block += gridDim.x) {
    const int64_t i = block * kQuantizationBlock + j;
    const bool live = i < count;
    // Read before blockMax's barriers, after which thread 0 may overwrite them in place.
    const float mAbsmax = t.mAbsmax[block], vAbsmax = t.vAbsmax[block];
    float m = 0, v = 0;
    if (live) {
      m = codeValue(firstCode, t.m[i], mAbsmax);
      v = codeValue(secondCode, t.v[i], vAbsmax);
      storeFloat(t.newParam, i,
                 adamWUpdate(constants, loadFloat(t.param, i), loadFloat(t.grad, i), m, v));
    }
    const float firstMax = blockMax(absmaxWith(0.0f, fabsf(m)), scratch[0]);
    const float secondMax = blockMax(absmaxWith(0.0f, v), scratch[1]);
    if (live) {
      t.newM[i] = codeIndex(firstCode, m, firstMax);
      t.newV[i] = codeIndex(secondCode, v, secondMax);
    }
    if (j == 0) {
      t.newMAbsmax[block] = firstMax;
      t.newVAbsmax[block] = secondMax;
    }
  }
}

bool runAdamW8bit(KernelContext &context, const KernelCall &call) {
  const int64_t count = call.inputs[0].numElements();
  const int64_t blocks = (count + kQuantizationBlock - 1) / kQuantizationBlock;
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdamW8bitTensors<T> t{call.inputs[0].as<const T>(),
                          call.inputs[1].as<const T>(),
                          call.inputs[2].as<const uint8_t>(),
                          call.inputs[3].as<const uint8_t>(),
                          call.inputs[4].as<const float>(),
                          call.inputs[5].as<const float>(),
                          call.outputs[0].as<T>(),
                          call.outputs[1].as<uint8_t>(),
                          call.outputs[2].as<uint8_t>(),
                          call.outputs[3].as<float>(),
                          call.outputs[4].as<float>()};
    adamW8bitKernel<T><<<gridFor(blocks, 1), kQuantizationBlock, 0, streamOf(context)>>>(
        t, momentCodes(), adamWSettings(attributesOf(call)), adamWScalars(context, call, 6), count);
  });
  return launched(context, "adamw8bit_update");
}

} // namespace

void addOptimizerPoolingCudaKernels(CudaKernelRuns &runs) {
  runs["sgd_update"] = &runSgd;
  runs["adamw_update"] = &runAdamW;
  runs["adamw8bit_update"] = &runAdamW8bit;
  addPoolingCudaKernels(runs);
}

} // namespace memc::kernels
