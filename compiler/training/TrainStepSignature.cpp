//===- TrainStepSignature.cpp - a training step's arguments by role -------===//
#include "compiler/training/TrainStepSignature.h"
#include "dialects/memc/MemcDialect.h"

using namespace mlir;

namespace memc {

plan::BindingKind argumentKind(func::FuncOp function, unsigned index) {
  if (auto kind = function.getArgAttrOfType<StringAttr>(index, kParamKindAttr))
    return plan::bindingKindNamed(kind.getValue());
  if (function.getArgAttr(index, kParamNameAttr))
    return plan::KIND_PARAMETER;
  return plan::KIND_NONE;
}

} // namespace memc
