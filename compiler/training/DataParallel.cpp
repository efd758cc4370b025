//===- DataParallel.cpp - the ranks' side of a training step --------------===//
#include "compiler/training/DataParallel.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/Collectives.h"

using namespace mlir;

namespace memc {
namespace {

/// Replaces each value with `make(value)`, built right after the value's producer.
template <typename Make>
void replaceAfterProducers(OpBuilder &b, MutableArrayRef<Value> values, Make make) {
  for (Value &value : values) {
    OpBuilder::InsertionGuard guard(b);
    if (Operation *producer = value.getDefiningOp())
      b.setInsertionPointAfter(producer);
    value = make(value);
  }
}

} // namespace

RankedTensorType shardType(RankedTensorType whole, int64_t worldSize) {
  return RankedTensorType::get({kernels::shardElements(whole.getNumElements(), worldSize)},
                               whole.getElementType());
}

void allReduceGradients(OpBuilder &b, Location loc, MutableArrayRef<Value> gradients, Value gate,
                        int64_t worldSize) {
  replaceAfterProducers(b, gradients, [&](Value gradient) -> Value {
    return b.create<AllReduceOp>(loc, gradient.getType(), gradient, gate, worldSize);
  });
}

void reduceScatterGradients(OpBuilder &b, Location loc, MutableArrayRef<Value> gradients,
                            int64_t worldSize) {
  replaceAfterProducers(b, gradients, [&](Value gradient) -> Value {
    auto type = shardType(cast<RankedTensorType>(gradient.getType()), worldSize);
    return b.create<ReduceScatterOp>(loc, type, gradient, worldSize);
  });
}

void shardGradients(OpBuilder &b, Location loc, MutableArrayRef<Value> gradients,
                    int64_t worldSize) {
  replaceAfterProducers(b, gradients, [&](Value gradient) -> Value {
    auto type = shardType(cast<RankedTensorType>(gradient.getType()), worldSize);
    return b.create<ShardOp>(loc, type, gradient, worldSize);
  });
}

Value sumOverRanks(OpBuilder &b, Location loc, Value scalar, int64_t worldSize) {
  return b.create<AllReduceOp>(loc, scalar.getType(), scalar, Value(), worldSize);
}

SmallVector<Value> buildShardedUpdate(OpBuilder &b, Location loc, const Optimizer &optimizer,
                                      ParameterUpdate update, Value gate, int64_t worldSize) {
  Value whole = update.param;
  auto wholeType = cast<RankedTensorType>(whole.getType());
  update.param = b.create<ShardOp>(loc, shardType(wholeType, worldSize), whole, worldSize);
  SmallVector<Value> updated = optimizer.buildUpdate(b, loc, update);
  updated[0] = b.create<AllGatherOp>(loc, wholeType, updated[0], gate, worldSize);
  return updated;
}

} // namespace memc
