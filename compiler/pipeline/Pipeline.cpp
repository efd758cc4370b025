//===- Pipeline.cpp - memc's pass pipelines -------------------------------===//
#include "compiler/pipeline/Pipeline.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

namespace memc {

void buildCanonicalizationPipeline(mlir::OpPassManager &pm) {
  mlir::OpPassManager &function = pm.nest<mlir::func::FuncOp>();
  function.addPass(createFuseGelu());
  function.addPass(mlir::createCanonicalizerPass());
  function.addPass(mlir::createCSEPass());
}

} // namespace memc
