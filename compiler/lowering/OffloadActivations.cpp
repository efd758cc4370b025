//===- OffloadActivations.cpp - saved activations in host memory ----------===//
#include "compiler/lowering/OffloadActivations.h"

#include "compiler/lowering/BufferCategories.h"
#include "dialects/memc/MemcDialect.h"

using namespace mlir;

namespace memc {

unsigned offloadActivations(func::FuncOp step) {
  llvm::DenseSet<Operation *> forward = lossAncestors(step);
  // Activations only: not weight copies (state kept on the device) nor views of weights.
  llvm::DenseMap<Value, plan::Category> categories = classifyValues(step);
  SmallVector<Operation *> forwardOps;
  for (Operation &op : step.getBody().front().without_terminator())
    if (forward.contains(&op) && !isa<ConstantOp>(op))
      forwardOps.push_back(&op);
  OpBuilder b(step.getContext());
  unsigned offloaded = 0;
  for (Operation *op : forwardOps)
    for (Value value : op->getResults()) {
      if (categories.lookup(value) != plan::ACTIVATIONS)
        continue;
      Operation *lastForward = op, *firstBackward = nullptr;
      for (Operation *user : value.getUsers()) {
        if (isa<func::ReturnOp>(user))
          continue;
        if (forward.contains(user)) {
          if (lastForward->isBeforeInBlock(user))
            lastForward = user;
        } else if (!firstBackward || user->isBeforeInBlock(firstBackward)) {
          firstBackward = user;
        }
      }
      // A backward reader before the forward's last (an interleaved update) keeps it here.
      if (!firstBackward || firstBackward->isBeforeInBlock(lastForward))
        continue;
      b.setInsertionPointAfter(lastForward);
      Value host = b.create<OffloadOp>(op->getLoc(), value).getResult();
      b.setInsertionPoint(firstBackward);
      Value back = b.create<ReloadOp>(op->getLoc(), host).getResult();
      value.replaceUsesWithIf(back, [&](OpOperand &use) {
        Operation *user = use.getOwner();
        return user != host.getDefiningOp() && !forward.contains(user) &&
               !isa<func::ReturnOp>(user);
      });
      ++offloaded;
    }
  return offloaded;
}

} // namespace memc
