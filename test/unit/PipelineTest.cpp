//===- PipelineTest.cpp - compileModel, the whole compilation -------------===//
//
// What the front end relies on: each mode runs its transforms and plans, and a training plan
// comes with its training section and the @gradients program.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

const std::string kMlp = std::string(MEMC_FIXTURES_DIR) + "/mlp.onnx";

struct Compiled {
  mlir::MLIRContext context;
  mlir::FailureOr<memc::CompiledModel> model = mlir::failure();
  int errors = 0;

  explicit Compiled(const memc::PipelineOptions &options) {
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
      errors += diag.getSeverity() == mlir::DiagnosticSeverity::Error;
      return mlir::success();
    });
    model = memc::compileModel(context, kMlp, options);
  }
};

TEST(Pipeline, ImportModeStopsBeforePlanning) {
  memc::PipelineOptions options;
  options.canonicalize = false;
  Compiled compiled(options);
  ASSERT_TRUE(mlir::succeeded(compiled.model));
  EXPECT_TRUE(compiled.model->module->lookupSymbol<mlir::func::FuncOp>("forward"));
  EXPECT_FALSE(compiled.model->planned);
}

TEST(Pipeline, InferencePlansTheForwardFunction) {
  memc::PipelineOptions options;
  options.mode = memc::CompileMode::Infer;
  Compiled compiled(options);
  ASSERT_TRUE(mlir::succeeded(compiled.model));
  ASSERT_TRUE(compiled.model->planned);
  EXPECT_TRUE(compiled.model->planned->fits);
  EXPECT_GT(compiled.model->planned->plan.steps_size(), 0);
  EXPECT_FALSE(compiled.model->planned->plan.has_training());
}

TEST(Pipeline, TrainingPlansTheStepWithItsSetupAndGradients) {
  memc::PipelineOptions options;
  options.mode = memc::CompileMode::Train;
  options.training.optimizer.name = "adamw";
  options.schedule.learningRate = 0.5;
  Compiled compiled(options);
  ASSERT_TRUE(mlir::succeeded(compiled.model));
  mlir::ModuleOp module = *compiled.model->module;
  EXPECT_TRUE(module.lookupSymbol<mlir::func::FuncOp>("train_step"));
  EXPECT_TRUE(module.lookupSymbol<mlir::func::FuncOp>("gradients"));
  const memc::plan::Plan &plan = compiled.model->planned->plan;
  EXPECT_EQ(plan.training().optimizer(), "adamw");
  EXPECT_EQ(plan.training().learning_rate(), 0.5);
  EXPECT_EQ(plan.training().labels_input(), "labels");
  EXPECT_GT(plan.training().classes(), 0);
  EXPECT_GT(plan.gradients().steps_size(), 0);
}

TEST(Pipeline, AnUnmetBudgetIsAResultNotAFailure) {
  memc::PipelineOptions options;
  options.mode = memc::CompileMode::Train;
  options.budget.budgetBytes = 1024;
  Compiled compiled(options);
  ASSERT_TRUE(mlir::succeeded(compiled.model));
  EXPECT_EQ(compiled.errors, 0);
  EXPECT_FALSE(compiled.model->planned->fits);
  EXPECT_FALSE(compiled.model->planned->plan.has_gradients());
}

TEST(Pipeline, ImportErrorsFail) {
  memc::PipelineOptions options;
  mlir::MLIRContext context;
  int errors = 0;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &) {
    ++errors;
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(memc::compileModel(context, kMlp + ".missing", options)));
  EXPECT_GT(errors, 0);
}

} // namespace
