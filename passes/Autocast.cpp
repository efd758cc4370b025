//===- Autocast.cpp - torch.autocast done by the compiler -----------------===//
//
// Assigns each op of a function the element type PrecisionPolicy.h gives it and inserts the
// casts that needs, before autodiff sees the ops (so gradients follow the forward's types and
// the activations a 16-bit op saves for the backward are 16-bit).
//
// Before:
//   %h = memc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
//   %y = memc.add %h, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
//   %p = memc.softmax %y {axis = 1 : i64} : tensor<4x8xf32>
//   return %p
// After:
//   %wl = memc.cast %w : tensor<8x8xf32> -> tensor<8x8xbf16>     (at the entry: once per step)
//   %bl = memc.cast %b : tensor<8xf32> -> tensor<8xbf16>
//   %xl = memc.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
//   %h = memc.matmul %xl, %wl : ... -> tensor<4x8xbf16>
//   %y = memc.add %h, %bl : ... -> tensor<4x8xbf16>
//   %yf = memc.cast %y : tensor<4x8xbf16> -> tensor<4x8xf32>
//   %p = memc.softmax %yf {axis = 1 : i64} : tensor<4x8xf32>
//   return %p
//
// Each value is cast at most once to each type, right after it is defined (weights at the
// function's entry), and every reader shares that cast. Asking for the type a cast started
// from gives back its source, so casts that would cancel are never built.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/PrecisionPolicy.h"

#include "dialects/memc/MemcDialect.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace memc {
#define GEN_PASS_DEF_AUTOCAST
#include "passes/Passes.h.inc"
} // namespace memc

using namespace mlir;
using namespace memc;

namespace {

FloatType floatElementType(Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : nullptr;
}

class Autocaster {
public:
  Autocaster(func::FuncOp function, FloatType low)
      : function(function), low(low), full(Float32Type::get(function.getContext())) {}

  void run() {
    markWeights();
    SmallVector<Operation *> ops;
    function.walk([&](Operation *op) {
      if (op != function.getOperation())
        ops.push_back(op);
    });
    for (Operation *op : ops)
      rewrite(op);
  }

private:
  /// Weights, buffers and constants: values that do not depend on the function's inputs. They
  /// follow the activations they meet (a bias added to a 16-bit matmul is cast to 16 bits) instead
  /// of widening them.
  void markWeights() {
    for (BlockArgument argument : function.getArguments())
      if (function.getArgAttr(argument.getArgNumber(), kParamKindAttr))
        weights.insert(argument);
  }

  bool dependsOnWeightsOnly(Operation *op) const {
    return op->getNumOperands() == 0 ||
           llvm::all_of(op->getOperands(), [&](Value v) { return weights.contains(v); });
  }

  /// `value` as `type` elements: the value itself, its source when it is a cast from `type`, or
  /// the one cast of it to `type`, built the first time it is asked for.
  Value castTo(Value value, FloatType type) {
    if (floatElementType(value) == type)
      return value;
    if (auto cast = value.getDefiningOp<CastOp>())
      if (floatElementType(cast.getInput()) == type)
        return cast.getInput();
    Value &cached = casts[{value, type}];
    if (!cached) {
      OpBuilder builder(function.getContext());
      builder.setInsertionPointAfterValue(value);
      auto tensor = cast<RankedTensorType>(value.getType());
      cached = builder.create<CastOp>(value.getLoc(), tensor.clone(type), value);
    }
    return cached;
  }

  void castFloatOperands(Operation *op, FloatType type, bool onlyFrom = false,
                         FloatType from = nullptr) {
    for (OpOperand &operand : op->getOpOperands()) {
      FloatType element = floatElementType(operand.get());
      if (element && element != type && (!onlyFrom || element == from))
        operand.set(castTo(operand.get(), type));
    }
  }

  /// Casts the f32 operands that depend on the inputs to `type`; weights (a norm's scale and
  /// bias) keep their type.
  void castActivationOperands(Operation *op, FloatType type) {
    for (OpOperand &operand : op->getOpOperands())
      if (floatElementType(operand.get()) == full && !weights.contains(operand.get()))
        operand.set(castTo(operand.get(), type));
  }

  /// Whether every reader of `value` takes it in the low type: Low ops, directly or through
  /// reshapes and transposes (which only move elements). The readers are still as the model
  /// wrote them here: the walk rewrites an op before any op reading it.
  static bool everyReaderTakesLow(Value value) {
    return !value.use_empty() && llvm::all_of(value.getUsers(), [](Operation *reader) {
      if (isa<ReshapeOp, TransposeOp>(reader))
        return everyReaderTakesLow(reader->getResult(0));
      return computeTypeOf(reader) == ComputeType::Low;
    });
  }

  /// Gives the op's f32 results `type` elements (the policy only narrows what was f32), or,
  /// for an op that infers its result types, what it infers from the cast operands (so that a
  /// result the op fixes as f32, flash_attention's logsumexp, stays f32).
  void retypeResults(Operation *op, FloatType type) {
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      SmallVector<Type> inferred;
      if (succeeded(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                           op->getRawDictionaryAttrs(),
                                           op->getPropertiesStorage(), op->getRegions(),
                                           inferred))) {
        for (auto [result, resultType] : llvm::zip(op->getResults(), inferred))
          result.setType(resultType);
        return;
      }
    }
    for (OpResult result : op->getResults())
      if (floatElementType(result) == full)
        result.setType(cast<RankedTensorType>(result.getType()).clone(type));
  }

  /// The widest float type of the operands that depend on the inputs; null if there is none.
  FloatType widestActivationType(Operation *op) const {
    FloatType widest;
    for (Value operand : op->getOperands()) {
      FloatType element = floatElementType(operand);
      if (!element || weights.contains(operand))
        continue;
      if (!widest || element.getWidth() > widest.getWidth())
        widest = element;
    }
    return widest;
  }

  void rewrite(Operation *op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // The function's signature does not change: results go back to their declared types.
      for (auto [operand, type] : llvm::zip(ret->getOpOperands(), function.getResultTypes()))
        if (auto element = dyn_cast<FloatType>(cast<RankedTensorType>(type).getElementType()))
          operand.set(castTo(operand.get(), element));
      return;
    }
    if (isa<ConstantOp>(op) || (!isa<CastOp>(op) && dependsOnWeightsOnly(op) &&
                                computeTypeOf(op) != ComputeType::Low)) {
      weights.insert(op->result_begin(), op->result_end());
      return;
    }
    if (isa<CastOp>(op))
      return; // the model's own casts state their result type
    switch (computeTypeOf(op)) {
    case ComputeType::Low:
      castFloatOperands(op, low, /*onlyFrom=*/true, full);
      retypeResults(op, low);
      return;
    case ComputeType::LowActivations:
      castActivationOperands(op, low);
      retypeResults(op, low);
      return;
    case ComputeType::StoresLow:
      // Stored in 16 bits only where it would be narrowed anyway: a post-norm transformer's
      // norm output is its f32 residual stream, which stays f32 as under torch.autocast.
      if (llvm::all_of(op->getResults(), everyReaderTakesLow)) {
        castActivationOperands(op, low);
        retypeResults(op, low);
        return;
      }
      [[fallthrough]];
    case ComputeType::Full:
      castFloatOperands(op, full, /*onlyFrom=*/true, low);
      return;
    case ComputeType::KeepsData:
      if (FloatType data = floatElementType(op->getOperand(0)))
        retypeResults(op, data);
      return;
    case ComputeType::Widest:
      if (FloatType widest = widestActivationType(op)) {
        castFloatOperands(op, widest, /*onlyFrom=*/true, widest == full ? low : full);
        retypeResults(op, widest);
      }
      return;
    }
  }

  func::FuncOp function;
  FloatType low, full;
  llvm::DenseSet<Value> weights;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
};

struct AutocastPass : memc::impl::AutocastBase<AutocastPass> {
  using AutocastBase::AutocastBase;

  void runOnOperation() override {
    FloatType low;
    if (precision == "bf16")
      low = BFloat16Type::get(&getContext());
    else if (precision == "fp16")
      low = Float16Type::get(&getContext());
    else {
      getOperation().emitError("memc-autocast: precision must be bf16 or fp16, got '")
          << precision << "'";
      return signalPassFailure();
    }
    autocastFunction(getOperation(), low);
  }
};

} // namespace

void memc::autocastFunction(func::FuncOp function, FloatType lowType) {
  Autocaster(function, lowType).run();
}
