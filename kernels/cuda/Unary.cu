//===- Unary.cu - CUDA elementwise kernels of one operand ----------------------------===//
//
// neg exp log sqrt reciprocal erf tanh sigmoid relu not abs sin cos softplus hard_swish,
// leaky_relu elu hard_sigmoid, gelu bias_gelu, gelu_grad bias_gelu_grad, clip, trilu, cast,
// refresh_copy, dropout: the CPU kernels' semantics (kernels/cpu/Unary.cpp,
// ActivationBackward.cpp), each a grid-stride loop around its body in ElementwiseMath.h.
// Run-time scalars (refresh_copy's flag, dropout's salt) are read inside the kernels.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/ElementwiseKernels.cuh"

#include <limits>
#include <string>

namespace memc::kernels::cuda {
namespace {

template <typename T, typename Op>
bool launchMap(KernelContext &context, const KernelCall &call, const char *kernel, Op op) {
  MapBody<T, Op> body{call.inputs[0].as<const T>(), call.outputs[0].as<T>(), op};
  return launchForEach(context, kernel, call.outputs[0].numElements(), body);
}

/// The attribute-free functions, on the storage types of their type class.
template <typename Op> bool runUnary(KernelContext &context, const KernelCall &call) {
  return visitClass<Op::types>(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchMap<T>(context, call, Op::name, Op());
  });
}

template <typename... Ops> void addUnary(CudaKernelRuns &runs) {
  ((runs[Ops::name] = &runUnary<Ops>), ...);
}

bool runLeakyRelu(KernelContext &context, const KernelCall &call) {
  LeakyRelu op{static_cast<float>(attributesOf(call).floatOr("alpha", 0.01))};
  return visitFloat(call.inputs[0].dtype, [&](auto tag) {
    return launchMap<typename decltype(tag)::type>(context, call, "leaky_relu", op);
  });
}

bool runElu(KernelContext &context, const KernelCall &call) {
  Elu op{static_cast<float>(attributesOf(call).floatOr("alpha", 1.0))};
  return visitFloat(call.inputs[0].dtype, [&](auto tag) {
    return launchMap<typename decltype(tag)::type>(context, call, "elu", op);
  });
}

bool runHardSigmoid(KernelContext &context, const KernelCall &call) {
  HardSigmoid op{static_cast<float>(attributesOf(call).floatOr("alpha", 0.2)),
                 static_cast<float>(attributesOf(call).floatOr("beta", 0.5))};
  return visitFloat(call.inputs[0].dtype, [&](auto tag) {
    return launchMap<typename decltype(tag)::type>(context, call, "hard_sigmoid", op);
  });
}

bool runClip(KernelContext &context, const KernelCall &call) {
  double minBound = -std::numeric_limits<double>::infinity();
  double maxBound = std::numeric_limits<double>::infinity();
  attributesOf(call).getFloat("min", minBound);
  attributesOf(call).getFloat("max", maxBound);
  return visitNumeric(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchMap<T>(context, call, "clip", clipFor<ComputeOf<T>>(minBound, maxBound));
  });
}

//===----------------------------------------------------------------------===//
// gelu and its gradients
//===----------------------------------------------------------------------===//

/// Calls fn(the gelu) or fn(its derivative), as the `approximate` attribute says.
template <bool Derivative, typename Fn> bool withGelu(const KernelCall &call, Fn &&fn) {
  std::string approximate = "none";
  attributesOf(call).getString("approximate", approximate);
  if constexpr (Derivative)
    return approximate == "tanh" ? fn(GeluTanhDerivative()) : fn(GeluDerivative());
  else
    return approximate == "tanh" ? fn(GeluTanh()) : fn(GeluErf());
}

bool runGelu(KernelContext &context, const KernelCall &call) {
  return withGelu<false>(call, [&](auto gelu) {
    return visitFloat(call.inputs[0].dtype, [&](auto tag) {
      return launchMap<typename decltype(tag)::type>(context, call, "gelu", gelu);
    });
  });
}

/// Calls fn(data tag, bias tag, index tag) for a call whose inputs[biasInput] is a bias along
/// the last dimension, of any float type.
template <typename Fn> bool visitBiased(const KernelCall &call, size_t biasInput, Fn &&fn) {
  return visitFloat(call.inputs[0].dtype, [&](auto dataTag) {
    return visitFloat(call.inputs[biasInput].dtype, [&](auto biasTag) {
      return visitIndexFor(call.outputs[0].numElements(),
                           [&](auto indexTag) { return fn(dataTag, biasTag, indexTag); });
    });
  });
}

bool runBiasGelu(KernelContext &context, const KernelCall &call) {
  return withGelu<false>(call, [&](auto gelu) {
    return visitBiased(call, 1, [&](auto dataTag, auto biasTag, auto indexTag) {
      using T = typename decltype(dataTag)::type;
      using B = typename decltype(biasTag)::type;
      using Index = typename decltype(indexTag)::type;
      BiasGeluBody<T, B, decltype(gelu), Index> body{
          call.inputs[0].as<const T>(), call.inputs[1].as<const B>(), call.outputs[0].as<T>(),
          static_cast<Index>(call.inputs[1].numElements()), gelu};
      return launchForEach(context, "bias_gelu", call.outputs[0].numElements(), body);
    });
  });
}

bool runGeluGrad(KernelContext &context, const KernelCall &call) {
  return withGelu<true>(call, [&](auto derivative) {
    return visitFloat(call.inputs[0].dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      GradBody<T, decltype(derivative)> body{call.inputs[0].as<const T>(),
                                             call.inputs[1].as<const T>(), call.outputs[0].as<T>(),
                                             derivative};
      return launchForEach(context, "gelu_grad", call.outputs[0].numElements(), body);
    });
  });
}

bool runBiasGeluGrad(KernelContext &context, const KernelCall &call) {
  return withGelu<true>(call, [&](auto derivative) {
    return visitBiased(call, 2, [&](auto dataTag, auto biasTag, auto indexTag) {
      using T = typename decltype(dataTag)::type;
      using B = typename decltype(biasTag)::type;
      using Index = typename decltype(indexTag)::type;
      BiasGeluGradBody<T, B, decltype(derivative), Index> body{
          call.inputs[0].as<const T>(),
          call.inputs[1].as<const T>(),
          call.inputs[2].as<const B>(),
          call.outputs[0].as<T>(),
          static_cast<Index>(call.inputs[2].numElements()),
          derivative};
      return launchForEach(context, "bias_gelu_grad", call.outputs[0].numElements(), body);
    });
  });
}

//===----------------------------------------------------------------------===//
// trilu, cast, refresh_copy
//===----------------------------------------------------------------------===//

bool runTrilu(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0];
  int64_t k = 0;
  attributesOf(call).getInt("k", k);
  bool upper = attributesOf(call).intOr("upper", 0) == 1;
  int64_t rows = input.shape[input.rank() - 2], columns = input.shape[input.rank() - 1];
  return visitBits(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return visitIndexFor(input.numElements(), [&](auto indexTag) {
      using Index = typename decltype(indexTag)::type;
      TriluBody<T, Index> body{input.as<const T>(),
                               call.outputs[0].as<T>(),
                               static_cast<Index>(rows),
                               static_cast<Index>(columns),
                               k,
                               upper};
      return launchForEach(context, "trilu", input.numElements(), body);
    });
  });
}

bool runCast(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  if (input.dtype == output.dtype) {
    if (input.data == output.data || input.numElements() == 0)
      return true;
    cudaError_t status = cudaMemcpyAsync(output.data, input.data, input.sizeBytes(),
                                         cudaMemcpyDefault, streamOf(context));
    return status == cudaSuccess ||
           context.fail(std::string("cast: the copy failed: ") + cudaGetErrorString(status));
  }
  return visitAny(input.dtype, [&](auto fromTag) {
    return visitAny(output.dtype, [&](auto toTag) {
      using From = typename decltype(fromTag)::type;
      using To = typename decltype(toTag)::type;
      CastBody<From, To> body{input.as<const From>(), output.as<To>()};
      return launchForEach(context, "cast", input.numElements(), body);
    });
  });
}

/// Inputs: refresh (an f32 scalar), source, copy.
bool runRefreshCopy(KernelContext &context, const KernelCall &call) {
  const TensorView &source = call.inputs[1], &copy = call.inputs[2];
  return visitFloat(source.dtype, [&](auto fromTag) {
    return visitFloat(copy.dtype, [&](auto toTag) {
      using From = typename decltype(fromTag)::type;
      using To = typename decltype(toTag)::type;
      RefreshCopyBody<From, To> body{call.inputs[0].as<const float>(), source.as<const From>(),
                                     copy.as<const To>(), call.outputs[0].as<To>()};
      return launchForEach(context, "refresh_copy", source.numElements(), body);
    });
  });
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

/// The body with its mask keyed by (seed, salt), the salt read on the device (null: none).
template <typename T>
__global__ void dropoutKernel(int64_t count, DropoutBody<T> body, double ratio, int64_t seed,
                              const int64_t *salt) {
  body.mask = salt ? DropoutMask(ratio, seed, *salt) : DropoutMask(ratio, seed, std::nullopt);
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads())
    body(i);
}

bool runDropout(KernelContext &context, const KernelCall &call) {
  double ratio = attributesOf(call).floatOr("ratio", 0.0);
  int64_t seed = attributesOf(call).intOr("seed", 0);
  const int64_t *salt = call.inputs.size() == 2 ? call.inputs[1].as<const int64_t>() : nullptr;
  int64_t count = call.inputs[0].numElements();
  if (count == 0)
    return true;
  return visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DropoutBody<T> body{call.inputs[0].as<const T>(), call.outputs[0].as<T>(), DropoutMask()};
    dropoutKernel<<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(count, body, ratio, seed,
                                                                           salt);
    return launched(context, "dropout");
  });
}

} // namespace

void addUnaryCudaKernels(CudaKernelRuns &runs) {
  addUnary<Neg, Exp, Log, Sqrt, Reciprocal, Erf, Tanh, Sigmoid, Relu, Not, Abs, Sin, Cos, Softplus,
           HardSwish>(runs);
  runs["leaky_relu"] = &runLeakyRelu;
  runs["elu"] = &runElu;
  runs["hard_sigmoid"] = &runHardSigmoid;
  runs["clip"] = &runClip;
  runs["gelu"] = &runGelu;
  runs["bias_gelu"] = &runBiasGelu;
  runs["gelu_grad"] = &runGeluGrad;
  runs["bias_gelu_grad"] = &runBiasGeluGrad;
  runs["trilu"] = &runTrilu;
  runs["cast"] = &runCast;
  runs["refresh_copy"] = &runRefreshCopy;
  runs["dropout"] = &runDropout;
}

} // namespace memc::kernels::cuda
