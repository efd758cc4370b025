//===- ApplyRemat.cpp - clone recomputed forward ops into the backward ----===//
#include "compiler/lowering/BufferCategories.h"
#include "compiler/remat/RematIR.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>

using namespace mlir;

namespace memc::remat {

int64_t applyRemat(const ExtractedRematGraph &extracted, const RematDecision &decision) {
  const RematGraph &graph = extracted.graph;
  llvm::DenseMap<Operation *, int32_t> nodeOf;
  for (auto [node, op] : llvm::enumerate(extracted.nodeOps))
    nodeOf[op] = static_cast<int32_t>(node);
  auto recomputed = [&](Operation *op) {
    auto it = op ? nodeOf.find(op) : nodeOf.end();
    return it != nodeOf.end() && graph.nodes[it->second].recomputable &&
           it->second < static_cast<int32_t>(decision.size()) && decision[it->second];
  };

  IRMapping clones; // original value -> the value backward readers use instead
  int64_t cloneCount = 0;
  OpBuilder builder(extracted.nodeOps.empty() ? nullptr : extracted.nodeOps.front()->getContext());
  // The value a backward op (or a clone) reads in place of `value`, inserting clones at the
  // builder's insertion point as needed.
  std::function<Value(Value)> remap = [&](Value value) -> Value {
    if (Value mapped = clones.lookupOrNull(value))
      return mapped;
    Operation *producer = value.getDefiningOp();
    if (auto reshape = dyn_cast_or_null<ReshapeOp>(producer)) {
      Value input = remap(reshape.getInput());
      if (input == reshape.getInput())
        return value;
      IRMapping operands;
      operands.map(reshape.getInput(), input);
      Value view = builder.clone(*reshape, operands)->getResult(0);
      clones.map(value, view);
      return view;
    }
    if (!recomputed(producer))
      return value;
    IRMapping operands;
    for (Value operand : producer->getOperands())
      operands.map(operand, remap(operand));
    Operation *clone = builder.clone(*producer, operands);
    clone->setLoc(recomputedLocation(producer->getLoc()));
    ++cloneCount;
    for (auto [original, copy] : llvm::zip(producer->getResults(), clone->getResults()))
      clones.map(original, copy);
    return clones.lookup(value);
  };

  Block *body = nullptr;
  for (auto [node, op] : llvm::enumerate(extracted.nodeOps)) {
    body = op->getBlock();
    if (graph.nodes[node].forward)
      continue;
    builder.setInsertionPoint(op);
    for (OpOperand &operand : op->getOpOperands())
      if (Value replacement = remap(operand.get()); replacement != operand.get())
        operand.set(replacement);
  }
  // Backward reshapes whose readers now read the clones' views are dead; walking backwards
  // removes chains of them from their end.
  if (body)
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
      if (isa<ReshapeOp>(op) && op.use_empty())
        op.erase();
  return cloneCount;
}

} // namespace memc::remat
