//===- ElementwiseTarget.cpp - the CUDA elementwise group's ops -----------------------===//
//
// The ops of Unary.cu, Binary.cu and LossScale.cu. They cover every dtype their checks allow
// and need no workspace; the only limit is the broadcasting kernels' index, which walks at most
// kMaxBroadcastRank dimensions once the shapes are merged (ElementwiseMath.h).
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaTargetGroups.h"
#include "kernels/cuda/ElementwiseMath.h"

#include <string>

namespace memc::kernels {
namespace {

using namespace cuda;

struct Where {
  static constexpr const char *name = "where";
};

/// Refuses a call of the broadcasting op Op (N operands) whose merged shapes have more
/// dimensions than the kernel's index walks.
template <typename Op, int N> bool limitBroadcastRank(const KernelCall &call, std::string &error) {
  std::array<const Shape *, N> shapes;
  for (int k = 0; k < N; ++k)
    shapes[k] = &call.inputs[k].shape;
  size_t rank = mergeBroadcast<N>(call.outputs[0].shape, shapes).dims.size();
  if (rank <= static_cast<size_t>(kMaxBroadcastRank))
    return true;
  error =
      std::string(Op::name) + " on CUDA broadcasts at most " + std::to_string(kMaxBroadcastRank) +
      " dimensions once neighbours read alike are merged; this call needs " + std::to_string(rank);
  return false;
}

template <typename... Ops> void addBinary(TargetOps &ops) {
  ((ops[Ops::name] = TargetOp{&limitBroadcastRank<Ops, 2>, nullptr}), ...);
}

} // namespace

void addElementwiseTargetOps(TargetOps &ops) {
  // Every call the op's check accepts runs, without workspace.
  ops["neg"] = TargetOp{};
  ops["exp"] = TargetOp{};
  ops["log"] = TargetOp{};
  ops["sqrt"] = TargetOp{};
  ops["reciprocal"] = TargetOp{};
  ops["erf"] = TargetOp{};
  ops["tanh"] = TargetOp{};
  ops["sigmoid"] = TargetOp{};
  ops["relu"] = TargetOp{};
  ops["not"] = TargetOp{};
  ops["abs"] = TargetOp{};
  ops["sin"] = TargetOp{};
  ops["cos"] = TargetOp{};
  ops["softplus"] = TargetOp{};
  ops["hard_swish"] = TargetOp{};
  ops["leaky_relu"] = TargetOp{};
  ops["elu"] = TargetOp{};
  ops["hard_sigmoid"] = TargetOp{};
  ops["gelu"] = TargetOp{};
  ops["bias_gelu"] = TargetOp{};
  ops["gelu_grad"] = TargetOp{};
  ops["bias_gelu_grad"] = TargetOp{};
  ops["clip"] = TargetOp{};
  ops["trilu"] = TargetOp{};
  ops["cast"] = TargetOp{};
  ops["refresh_copy"] = TargetOp{};
  ops["dropout"] = TargetOp{};
  ops["non_finite_check"] = TargetOp{};
  ops["loss_scale_update"] = TargetOp{};
  addBinary<Add, Sub, Mul, Div, Pow, Max, Min, PRelu, Equal, Less, Greater, GreaterEqual,
            LessEqual>(ops);
  ops["where"] = TargetOp{&limitBroadcastRank<Where, 3>, nullptr};
}

} // namespace memc::kernels
