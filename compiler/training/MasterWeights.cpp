//===- MasterWeights.cpp - 16-bit parameters train in f32 -----------------===//
//
// Before (a model.bfloat16() export):
//   func @forward(%x: tensor<4x8xbf16>, %w: tensor<8x8xbf16> {memc.param_kind = "parameter"})
//     %h = memc.matmul %x, %w : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
// After:
//   func @forward(%x: tensor<4x8xbf16>, %w: tensor<8x8xf32> {memc.param_kind = "parameter"})
//     %wl = memc.cast %w : tensor<8x8xf32> -> tensor<8x8xbf16>
//     %h = memc.matmul %x, %wl : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
//
// The copy is a cast of a parameter, so the memory report counts it as a weight copy
// (BufferCategories.cpp), as it does autocast's.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/MasterWeights.h"

#include "dialects/memc/MemcDialect.h"
#include "runtime/plan/PlanVocabulary.h"

using namespace mlir;

namespace memc {

unsigned holdParametersInFloat32(func::FuncOp forward, ArrayRef<bool> trained) {
  OpBuilder builder = OpBuilder::atBlockBegin(&forward.getBody().front());
  SmallVector<Type> argumentTypes(forward.getArgumentTypes());
  unsigned changed = 0;
  for (BlockArgument argument : forward.getArguments()) {
    auto kind = forward.getArgAttrOfType<StringAttr>(argument.getArgNumber(), kParamKindAttr);
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!kind || plan::bindingKindNamed(kind.getValue()) != plan::KIND_PARAMETER || !type ||
        !isa<Float16Type, BFloat16Type>(type.getElementType()) ||
        !trained[argument.getArgNumber()])
      continue;
    RankedTensorType master = type.clone(builder.getF32Type());
    argument.setType(master);
    argumentTypes[argument.getArgNumber()] = master;
    auto copy = builder.create<CastOp>(argument.getLoc(), type, argument);
    argument.replaceAllUsesExcept(copy.getResult(), copy);
    ++changed;
  }
  if (changed)
    forward.setFunctionType(builder.getFunctionType(argumentTypes, forward.getResultTypes()));
  return changed;
}

} // namespace memc
