//===- TrainStepSignatureTest.cpp - optimizers and the step's argument roles -===//
//
// The Optimizer registry (names, state specs, scalars) and what the IR of a training step says
// about its arguments: every role readable from the function alone (argumentKind and the scalar
// input names), and the lowering's categories following the kinds, never the names.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/TrainStepSignature.h"
#include "compiler/lowering/BufferCategories.h"
#include "compiler/training/Optimizer.h"
#include "compiler/training/TrainStep.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace memc;

namespace {

class OptimizerRegistry : public testing::Test {
protected:
  OptimizerRegistry() { context.loadDialect<MemcDialect>(); }

  mlir::MLIRContext context;
  mlir::RankedTensorType bf16Param =
      mlir::RankedTensorType::get({4, 2}, mlir::BFloat16Type::get(&context));
};

TEST_F(OptimizerRegistry, AdamWKeepsTwoF32MomentsAndReadsTheStepNumber) {
  std::string error;
  OptimizerOptions options;
  options.name = "adamw";
  std::unique_ptr<Optimizer> adamw = createOptimizer(options, error);
  ASSERT_TRUE(adamw) << error;
  EXPECT_EQ(adamw->name(), "adamw");
  llvm::SmallVector<OptimizerStateSpec> state = adamw->stateSpecs(bf16Param);
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].suffix, "exp_avg");
  EXPECT_EQ(state[1].suffix, "exp_avg_sq");
  for (const OptimizerStateSpec &spec : state) {
    EXPECT_TRUE(spec.type.getElementType().isF32());
    EXPECT_EQ(spec.type.getShape(), bf16Param.getShape());
    EXPECT_EQ(spec.kind, plan::KIND_OPTIMIZER_STATE);
  }
  EXPECT_EQ(adamw->scalarInputs(),
            (llvm::SmallVector<plan::ScalarInput>{plan::ScalarInput::LearningRate,
                                                  plan::ScalarInput::StepNumber}));
}

TEST_F(OptimizerRegistry, SgdKeepsAVelocityOnlyWithMomentum) {
  std::string error;
  OptimizerOptions options;
  options.name = "sgd";
  EXPECT_TRUE(createOptimizer(options, error)->stateSpecs(bf16Param).empty());
  options.momentum = 0.9;
  llvm::SmallVector<OptimizerStateSpec> state =
      createOptimizer(options, error)->stateSpecs(bf16Param);
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].suffix, "momentum_buffer");
  EXPECT_EQ(state[0].type, bf16Param);
}

TEST_F(OptimizerRegistry, UnknownNamesAreRefusedWithTheKnownOnes) {
  std::string error;
  OptimizerOptions options;
  options.name = "lion";
  EXPECT_FALSE(createOptimizer(options, error));
  EXPECT_EQ(error, "unknown optimizer 'lion' (optimizers: sgd, adamw)");
}

constexpr const char *kForward = R"mlir(
func.func @forward(%x: tensor<2x4xf32> {memc.input = "x"},
                   %w: tensor<4x3xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<2x3xf32> {memc.output = "logits"}) {
  %0 = memc.dropout %x {ratio = 0.1 : f64, seed = 7 : i64} : tensor<2x4xf32>
  %1 = memc.matmul %0, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
)mlir";

TEST(TrainStepArguments, SayTheirRolesInTheirAttributes) {
  mlir::MLIRContext context;
  context.loadDialect<MemcDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kForward, &context);
  ASSERT_TRUE(module);
  TrainStepOptions options;
  options.optimizer.name = "adamw";
  options.optimizer.accumulationSteps = 2;
  mlir::FailureOr<mlir::func::FuncOp> step = buildTrainStep(*module, options);
  ASSERT_TRUE(succeeded(step));

  struct Expected {
    const char *name;
    plan::BindingKind kind;
    plan::Category category;
  };
  const Expected expected[] = {
      {"x", plan::KIND_NONE, plan::INPUTS},
      {"labels", plan::KIND_NONE, plan::INPUTS},
      {"w", plan::KIND_PARAMETER, plan::PARAMETERS},
      {"w.exp_avg", plan::KIND_OPTIMIZER_STATE, plan::OPTIMIZER_STATE},
      {"w.exp_avg_sq", plan::KIND_OPTIMIZER_STATE, plan::OPTIMIZER_STATE},
      {"w.grad_accum", plan::KIND_GRADIENT_ACCUMULATOR, plan::GRADIENTS},
      {"memc.lr", plan::KIND_NONE, plan::INPUTS},
      {"memc.step", plan::KIND_NONE, plan::INPUTS},
      {"memc.apply", plan::KIND_NONE, plan::INPUTS},
      {"memc.salt", plan::KIND_NONE, plan::INPUTS},
  };
  ASSERT_EQ(step->getNumArguments(), std::size(expected));
  llvm::DenseMap<mlir::Value, plan::Category> categories = classifyValues(*step);
  for (auto [index, want] : llvm::enumerate(expected)) {
    auto name = step->getArgAttrOfType<mlir::StringAttr>(
        index, want.kind == plan::KIND_NONE ? kInputNameAttr : kParamNameAttr);
    ASSERT_TRUE(name) << "argument " << index;
    EXPECT_EQ(name.getValue(), want.name);
    EXPECT_EQ(argumentKind(*step, index), want.kind) << want.name;
    EXPECT_EQ(categories.lookup(step->getArgument(index)), want.category) << want.name;
  }
}

} // namespace
