//===- Binary.cu - CUDA broadcasting elementwise kernels -----------------------------===//
//
// add sub mul div pow max min prelu, equal less greater greater_equal less_equal, where: the
// CPU kernels' semantics (kernels/cpu/Binary.cpp) with numpy broadcasting. Each output element
// finds its operands' elements through a BroadcastIndex (ElementwiseMath.h), the shapes merged
// first so that same-shape operands need no division and a row bias one; the CUDA target
// refuses calls whose merged shapes have more than kMaxBroadcastRank dimensions.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/ElementwiseKernels.cuh"

#include <string>

namespace memc::kernels::cuda {
namespace {

/// The broadcast index of the call's output from its inputs, or false after recording why.
template <int N>
bool broadcastIndexOf(KernelContext &context, const KernelCall &call, const char *kernel,
                      BroadcastIndex<N> &index) {
  std::array<const Shape *, N> shapes;
  for (int k = 0; k < N; ++k)
    shapes[k] = &call.inputs[k].shape;
  if (toBroadcastIndex(mergeBroadcast<N>(call.outputs[0].shape, shapes), index))
    return true;
  return context.fail(std::string(kernel) + ": the CUDA kernel broadcasts at most " +
                      std::to_string(kMaxBroadcastRank) + " dimensions");
}

/// Out is T for arithmetic, a bool byte for comparisons.
template <typename T, typename Out, typename Op>
bool launchBinary(KernelContext &context, const KernelCall &call) {
  BroadcastIndex<2> index;
  if (!broadcastIndexOf(context, call, Op::name, index))
    return false;
  int64_t count = call.outputs[0].numElements();
  return visitIndexFor(count, [&](auto indexTag) {
    using Index = typename decltype(indexTag)::type;
    BroadcastBody<T, Out, Op, Index> body{call.inputs[0].as<const T>(),
                                          call.inputs[1].as<const T>(), call.outputs[0].as<Out>(),
                                          index, Op()};
    return launchForEach(context, Op::name, count, body);
  });
}

template <typename Op> bool runArithmetic(KernelContext &context, const KernelCall &call) {
  return visitNumeric(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchBinary<T, T, Op>(context, call);
  });
}

template <typename Op> bool runComparison(KernelContext &context, const KernelCall &call) {
  return visitAny(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchBinary<T, BoolByte, Op>(context, call);
  });
}

bool runWhere(KernelContext &context, const KernelCall &call) {
  BroadcastIndex<3> index;
  if (!broadcastIndexOf(context, call, "where", index))
    return false;
  int64_t count = call.outputs[0].numElements();
  // Selection moves values unchanged, so any element type is its bits.
  return visitBits(call.outputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return visitIndexFor(count, [&](auto indexTag) {
      using Index = typename decltype(indexTag)::type;
      SelectBody<T, Index> body{call.inputs[0].as<const BoolByte>(), call.inputs[1].as<const T>(),
                                call.inputs[2].as<const T>(), call.outputs[0].as<T>(), index};
      return launchForEach(context, "where", count, body);
    });
  });
}

template <typename... Ops> void addArithmetic(CudaKernelRuns &runs) {
  ((runs[Ops::name] = &runArithmetic<Ops>), ...);
}

template <typename... Ops> void addComparisons(CudaKernelRuns &runs) {
  ((runs[Ops::name] = &runComparison<Ops>), ...);
}

} // namespace

void addBinaryCudaKernels(CudaKernelRuns &runs) {
  addArithmetic<Add, Sub, Mul, Div, Pow, Max, Min, PRelu>(runs);
  addComparisons<Equal, Less, Greater, GreaterEqual, LessEqual>(runs);
  runs["where"] = &runWhere;
}

} // namespace memc::kernels::cuda
