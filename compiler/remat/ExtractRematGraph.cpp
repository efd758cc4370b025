//===- ExtractRematGraph.cpp - a training step as a RematGraph ------------===//
//
// Mirrors the lowering's view of memory (compiler/lowering/PlanBuilder.cpp): parameters,
// optimizer state and constants live outside the arena (fixedBytes); every other value owns an
// arena allocation except reshapes, which are views of their operand's; values written over a
// parameter (`memc.updates`) are persistent.
//
//===----------------------------------------------------------------------===//
#include "compiler/lowering/BufferCategories.h"
#include "compiler/lowering/PlanBuilder.h"
#include "compiler/planner/LiveRange.h"
#include "compiler/remat/RematIR.h"
#include "dialects/memc/CostModel.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/MemcDialect.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace memc::remat {
ExtractedRematGraph extractRematGraph(func::FuncOp function,
                                      const llvm::DenseMap<Operation *, uint64_t> &workspaceOf) {
  ExtractedRematGraph extracted;
  RematGraph &graph = extracted.graph;
  Block &body = function.getBody().front();
  Operation *terminator = body.getTerminator();

  llvm::DenseSet<Value> persistent, returned;
  for (BlockArgument argument : function.getArguments())
    if (function.getArgAttr(argument.getArgNumber(), kParamNameAttr)) {
      persistent.insert(argument);
      graph.fixedBytes = planner::alignTo(graph.fixedBytes + storageBytes(argument.getType()), 256);
    }
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    if (function.getResultAttr(index, kUpdatesAttr))
      persistent.insert(value);
    else
      returned.insert(allocationRoot(value));
  }

  llvm::DenseMap<Value, int32_t> ids;
  auto idOf = [&](Value root) {
    auto [it, inserted] = ids.try_emplace(root, 0);
    if (inserted)
      it->second = graph.addValue(storageBytes(root.getType()), returned.contains(root));
    return it->second;
  };
  for (BlockArgument argument : function.getArguments())
    if (!persistent.contains(argument))
      idOf(argument);

  llvm::DenseSet<Operation *> forward = lossAncestors(function);
  for (Operation &op : body.without_terminator()) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      graph.fixedBytes += planner::alignTo(storageBytes(constant.getType()), 64);
      continue;
    }
    if (isa<ReshapeOp>(op))
      continue;
    RematGraph::Node node;
    for (Value operand : op.getOperands()) {
      Value root = allocationRoot(operand);
      if (persistent.contains(root) || root.getDefiningOp<ConstantOp>())
        continue;
      node.inputs.push_back(idOf(root));
    }
    bool anyReturned = false;
    for (Value result : op.getResults()) {
      if (persistent.contains(result))
        continue;
      anyReturned |= returned.contains(result);
      node.outputs.push_back(idOf(result));
    }
    OpCost cost = estimateOpCost(&op);
    node.cost = recomputeCost(cost);
    node.flops = cost.flops;
    node.forward = forward.contains(&op);
    node.workspaceBytes = workspaceOf.lookup(&op);
    node.recomputable = node.forward && !anyReturned && !node.outputs.empty() &&
                        op.getNumResults() == node.outputs.size();
    graph.addNode(std::move(node));
    extracted.nodeOps.push_back(&op);
  }
  return extracted;
}

} // namespace memc::remat
