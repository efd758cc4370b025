//===- ModelSummary.cpp - what an imported model holds --------------------===//
#include "compiler/pipeline/ModelSummary.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/MemcDialect.h"
#include "dialects/memc/ShapeInference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace memc {
namespace {

std::string describeValue(StringAttr name, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << (name ? name.str() : "?") << " " << tensor.getElementType()
     << formatShape(tensor.getShape());
  return text;
}

} // namespace

ModelSummary summarizeModel(ModuleOp module) {
  ModelSummary summary;
  module.walk([&](func::FuncOp function) {
    for (BlockArgument argument : function.getArguments()) {
      unsigned index = argument.getArgNumber();
      auto type = cast<RankedTensorType>(argument.getType());
      auto kind = function.getArgAttrOfType<StringAttr>(index, kParamKindAttr);
      if (!kind) {
        summary.inputs.push_back(describeValue(
            function.getArgAttrOfType<StringAttr>(index, kInputNameAttr), type));
      } else if (kind.getValue() == "parameter") {
        ++summary.parameters;
        summary.parameterElements += type.getNumElements();
        summary.parameterBytes += storageBytes(type);
      } else {
        ++summary.buffers;
      }
    }
    for (unsigned i = 0; i < function.getNumResults(); ++i)
      summary.outputs.push_back(
          describeValue(function.getResultAttrOfType<StringAttr>(i, kOutputNameAttr),
                        function.getResultTypes()[i]));
    function.walk([&](Operation *op) { summary.ops += isa<MemcDialect>(op->getDialect()); });
  });
  return summary;
}

} // namespace memc
