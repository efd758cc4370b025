//===- DataParallel.cpp - the ranks' side of a training step --------------===//
#include "compiler/training/DataParallel.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/Collectives.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

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

/// Whether `a` is produced before `b` (arguments first).
bool producedBefore(Value a, Value b) {
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  return y && (!x || x->isBeforeInBlock(y));
}

/// One all-reduce of the gradients at `indices` (of one element type), right after the last of
/// them is produced: alone, or flattened into one bucket, reduced, and cut back.
void allReduceBucket(OpBuilder &b, Location loc, MutableArrayRef<Value> gradients,
                     ArrayRef<size_t> indices, Value gate, int64_t worldSize) {
  OpBuilder::InsertionGuard guard(b);
  Value last = gradients[indices.front()];
  for (size_t index : indices)
    if (producedBefore(last, gradients[index]))
      last = gradients[index];
  if (Operation *producer = last.getDefiningOp())
    b.setInsertionPointAfter(producer);
  if (indices.size() == 1) {
    Value &gradient = gradients[indices.front()];
    gradient = b.create<AllReduceOp>(loc, gradient.getType(), gradient, gate, worldSize);
    return;
  }
  Type element = cast<RankedTensorType>(last.getType()).getElementType();
  SmallVector<Value> flat;
  SmallVector<int64_t> sizes;
  for (size_t index : indices) {
    auto type = cast<RankedTensorType>(gradients[index].getType());
    sizes.push_back(type.getNumElements());
    flat.push_back(b.create<ReshapeOp>(loc, RankedTensorType::get({sizes.back()}, element),
                                       gradients[index]));
  }
  int64_t total = 0;
  for (int64_t size : sizes)
    total += size;
  auto bucketType = RankedTensorType::get({total}, element);
  Value bucket = b.create<ConcatOp>(loc, bucketType, flat, b.getI64IntegerAttr(0));
  bucket = b.create<AllReduceOp>(loc, bucketType, bucket, gate, worldSize);
  SmallVector<Type> pieceTypes;
  for (int64_t size : sizes)
    pieceTypes.push_back(RankedTensorType::get({size}, element));
  auto pieces = b.create<SplitOp>(loc, pieceTypes, bucket, b.getI64IntegerAttr(0),
                                  b.getDenseI64ArrayAttr(sizes));
  for (auto [index, piece] : llvm::zip(indices, pieces.getResults()))
    gradients[index] = b.create<ReshapeOp>(loc, gradients[index].getType(), piece);
}

} // namespace

RankedTensorType shardType(RankedTensorType whole, int64_t worldSize) {
  return RankedTensorType::get({kernels::shardElements(whole.getNumElements(), worldSize)},
                               whole.getElementType());
}

void allReduceGradients(OpBuilder &b, Location loc, MutableArrayRef<Value> gradients, Value gate,
                        int64_t worldSize, uint64_t bucketBytes) {
  // In the order the backward produces them, each element type filling its own bucket.
  SmallVector<size_t> order(gradients.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](size_t x, size_t y) {
    return producedBefore(gradients[x], gradients[y]);
  });
  llvm::MapVector<Type, std::pair<SmallVector<size_t>, uint64_t>> open;
  for (size_t index : order) {
    auto type = cast<RankedTensorType>(gradients[index].getType());
    auto &[members, bytes] = open[type.getElementType()];
    members.push_back(index);
    bytes += static_cast<uint64_t>(type.getNumElements()) *
             std::max(1u, type.getElementTypeBitWidth() / 8);
    if (bytes >= bucketBytes) {
      allReduceBucket(b, loc, gradients, members, gate, worldSize);
      members.clear();
      bytes = 0;
    }
  }
  for (auto &[element, bucket] : open)
    if (!bucket.first.empty())
      allReduceBucket(b, loc, gradients, bucket.first, gate, worldSize);
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

Value gatherParameter(OpBuilder &b, Location loc, Value shard, RankedTensorType whole,
                      int64_t worldSize) {
  return b.create<AllGatherOp>(loc, whole, shard, Value(), worldSize);
}

void narrowGathers(OpBuilder &b, MutableArrayRef<Value> gathers) {
  for (Value &gathered : gathers) {
    auto gather = gathered.getDefiningOp<AllGatherOp>();
    const unsigned width =
        cast<RankedTensorType>(gathered.getType()).getElementType().getIntOrFloatBitWidth();
    Type narrow;
    bool onlyNarrowed = !gathered.use_empty();
    for (Operation *user : gathered.getUsers()) {
      auto narrowing = dyn_cast<CastOp>(user);
      Type to = narrowing ? narrowing.getType().getElementType() : Type();
      onlyNarrowed &= narrowing && (!narrow || to == narrow) && isa<FloatType>(to) &&
                      to.getIntOrFloatBitWidth() < width;
      narrow = to;
    }
    if (!onlyNarrowed)
      continue;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(gather);
    Value narrowWhole = b.create<AllGatherOp>(
        gather.getLoc(), cast<RankedTensorType>(gathered.getType()).clone(narrow),
        gather.getInput(), Value(), gather.getWorldSize());
    for (Operation *user : llvm::make_early_inc_range(gathered.getUsers())) {
      user->getResult(0).replaceAllUsesWith(narrowWhole);
      user->erase();
    }
    gather.erase();
    gathered = narrowWhole;
  }
}

SmallVector<Value> placeGathers(OpBuilder &b, ArrayRef<Value> gathers, Operation *lastForward) {
  SmallVector<Value> backwardGathers;
  auto inBackward = [&](Operation *op) { return lastForward->isBeforeInBlock(op); };
  for (Value gathered : gathers) {
    Operation *gather = gathered.getDefiningOp();
    // The forward's views and casts of the whole parameter (its 16-bit copy, a transpose):
    // the backward reads them too, and must not keep them from the forward either.
    SmallVector<Operation *> chain = {gather};
    llvm::SmallPtrSet<Value, 8> derived = {gathered};
    for (size_t i = 0; i < chain.size(); ++i)
      for (Operation *user : chain[i]->getResult(0).getUsers())
        if (!inBackward(user) && isa<CastOp, ReshapeOp, TransposeOp>(user) &&
            !llvm::is_contained(chain, user) && derived.insert(user->getResult(0)).second)
          chain.push_back(user);
    llvm::sort(chain.begin() + 1, chain.end(),
               [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
    Operation *firstForward = nullptr, *firstBackward = nullptr;
    for (Operation *op : chain)
      for (Operation *user : op->getResult(0).getUsers()) {
        if (derived.contains(user->getNumResults() ? user->getResult(0) : Value()))
          continue;
        Operation *&first = inBackward(user) ? firstBackward : firstForward;
        if (!first || user->isBeforeInBlock(first))
          first = user;
      }
    if (!firstForward && !firstBackward) { // nothing reads it (a mask attention fusion replaced)
      if (gathered.use_empty())
        gather->erase();
      continue;
    }
    // The gather goes right before the first reader of anything it feeds (its views follow it).
    Operation *firstReader = firstForward ? firstForward : firstBackward;
    for (Operation *op : gathered.getUsers())
      if (derived.contains(op->getResult(0)) && op->isBeforeInBlock(firstReader))
        firstReader = op;
    gather->moveBefore(firstReader);
    if (!firstForward || !firstBackward)
      continue;
    // The backward gathers again, and repeats the views, right before its first reader.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(firstBackward);
    IRMapping again;
    for (Operation *op : chain) {
      Value original = op->getResult(0), copy = b.clone(*op, again)->getResult(0);
      original.replaceUsesWithIf(copy, [&](OpOperand &use) { return inBackward(use.getOwner()); });
    }
    backwardGathers.push_back(again.lookup(gathered));
  }
  return backwardGathers;
}

} // namespace memc
