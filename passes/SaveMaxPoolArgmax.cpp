//===- SaveMaxPoolArgmax.cpp - max_pool saves its argmax for the backward -===//
//
// Before:
//   %y = memc.max_pool %x {...}            ...   %dx = memc.max_pool_grad %dy, %x {...}
// After:
//   %y, %taps = memc.max_pool_with_argmax %x {...}
//   ...   %dx = memc.max_pool_grad_argmax %dy, %taps {...}
//
// Autodiff writes max_pool_grad reading the pool's input, which then stays live from the
// forward to the backward only to search each window again. The saved taps are a byte per
// output (ResNet-50's stem pool at B32: 6.1 MiB instead of its 98 MiB input), and routing by
// them does not search. Windows of more than 256 taps keep max_pool_grad.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "kernels/ops/PoolWindowChecks.h"

namespace memc {
#define GEN_PASS_DEF_SAVEMAXPOOLARGMAX
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

/// The max_pool whose gradient `grad` is: a pool of the same input and window attributes whose
/// result has the gradient's shape and that comes before it; null if there is none.
MaxPoolOp forwardPoolOf(MaxPoolGradOp grad) {
  for (Operation *user : grad.getInput().getUsers()) {
    auto pool = dyn_cast<MaxPoolOp>(user);
    if (pool && pool->getBlock() == grad->getBlock() && pool->isBeforeInBlock(grad) &&
        pool.getKernelShape() == grad.getKernelShape() &&
        pool.getStrides() == grad.getStrides() && pool.getPads() == grad.getPads() &&
        pool.getDilations() == grad.getDilations() &&
        pool.getCeilMode() == grad.getCeilMode() &&
        cast<ShapedType>(pool.getType()).getShape() ==
            cast<ShapedType>(grad.getGrad().getType()).getShape())
      return pool;
  }
  return nullptr;
}

struct SaveMaxPoolArgmaxPass : memc::impl::SaveMaxPoolArgmaxBase<SaveMaxPoolArgmaxPass> {
  void runOnOperation() override {
    // Each pool with argmax replaces its max_pool once, for all of its gradients.
    llvm::DenseMap<Operation *, Value> tapsOfPool;
    SmallVector<MaxPoolGradOp> grads;
    getOperation().walk([&](MaxPoolGradOp grad) { grads.push_back(grad); });
    for (MaxPoolGradOp grad : grads) {
      if (ShapedType::getNumElements(grad.getKernelShape()) > kernels::kMaxArgmaxWindowTaps)
        continue;
      MaxPoolOp pool = forwardPoolOf(grad);
      if (!pool)
        continue;
      Value &taps = tapsOfPool[pool];
      if (!taps) {
        OpBuilder builder(pool);
        auto poolType = cast<RankedTensorType>(pool.getType());
        auto tapsType = RankedTensorType::get(
            poolType.getShape(), builder.getIntegerType(8, /*isSigned=*/false));
        auto withArgmax = builder.create<MaxPoolWithArgmaxOp>(
            pool.getLoc(), TypeRange{poolType, tapsType}, pool.getInput(),
            pool.getKernelShapeAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
            pool.getDilationsAttr(), pool.getCeilModeAttr());
        pool.getResult().replaceAllUsesWith(withArgmax.getResult());
        taps = withArgmax.getArgmax();
      }
      OpBuilder builder(grad);
      Value dx = builder.create<MaxPoolGradArgmaxOp>(
          grad.getLoc(), grad.getType(), grad.getGrad(), taps, grad.getKernelShapeAttr(),
          grad.getStridesAttr(), grad.getPadsAttr(), grad.getDilationsAttr(),
          grad.getCeilModeAttr());
      grad.getResult().replaceAllUsesWith(dx);
      grad.erase();
    }
    for (auto &entry : tapsOfPool)
      entry.first->erase();
  }
};

} // namespace
