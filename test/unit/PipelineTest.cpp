//===- PipelineTest.cpp - compileModel, the whole compilation -------------===//
//
// What the front end relies on: each mode runs its transforms and plans, and a training plan
// comes with its training section and the @gradients program.
//
//===----------------------------------------------------------------------===//
#include "compiler/pipeline/Pipeline.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/Tf32.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

const std::string kMlp = std::string(MEMC_FIXTURES_DIR) + "/mlp.onnx";
const std::string kGpt2 = std::string(MEMC_FIXTURES_DIR) + "/gpt2.onnx";

struct Compiled {
  mlir::MLIRContext context;
  mlir::FailureOr<memc::CompiledModel> model = mlir::failure();
  int errors = 0;

  explicit Compiled(const memc::PipelineOptions &options, const std::string &path = kMlp) {
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
      errors += diag.getSeverity() == mlir::DiagnosticSeverity::Error;
      return mlir::success();
    });
    model = memc::compileModel(context, path, options);
  }

  /// The residual norms fused into memc.add_layer_norm in @train_step.
  int fusedResidualNorms() {
    int count = 0;
    model->module->lookupSymbol<mlir::func::FuncOp>("train_step").walk(
        [&](memc::AddLayerNormOp) { ++count; });
    return count;
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

/// The steps of `plan` that carry the TF32 attribute, and those that could.
std::pair<int, int> tf32Steps(const memc::plan::Plan &plan) {
  int marked = 0, products = 0;
  for (const memc::plan::Step &step : plan.steps()) {
    products += memc::kernels::takesTf32(step.kernel());
    for (const memc::plan::Attribute &attribute : step.attributes())
      marked += attribute.name() == memc::kernels::kAllowTf32Attribute && attribute.i() == 1;
  }
  return {marked, products};
}

TEST(Pipeline, AllowTf32MarksEveryMatrixProductStep) {
  memc::PipelineOptions options;
  options.mode = memc::CompileMode::Train;
  options.training.optimizer.name = "adamw";
  options.budget.plan.target = "cuda";
  Compiled plain(options);
  ASSERT_TRUE(mlir::succeeded(plain.model));
  auto [unmarked, products] = tf32Steps(plain.model->planned->plan);
  EXPECT_EQ(unmarked, 0);
  EXPECT_GT(products, 0);
  options.budget.plan.allowTf32 = true;
  Compiled allowed(options);
  ASSERT_TRUE(mlir::succeeded(allowed.model));
  auto [marked, all] = tf32Steps(allowed.model->planned->plan);
  EXPECT_EQ(marked, all);
  EXPECT_EQ(all, products);
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

TEST(Pipeline, SharedResidualSumsStayUnfusedWhereRematMayRun) {
  // GPT-2's pre-norm blocks (2): three norms read a residual sum the next residual reads too,
  // ln_f one that only it reads. Remat recomputes a norm from its kept sum; the fused op could
  // only be recomputed from both addends, so under a budget only ln_f's add fuses.
  memc::PipelineOptions options;
  options.mode = memc::CompileMode::Train;
  options.training.optimizer.name = "adamw";
  Compiled unbudgeted(options, kGpt2);
  ASSERT_TRUE(mlir::succeeded(unbudgeted.model));
  EXPECT_EQ(unbudgeted.fusedResidualNorms(), 4);
  options.budget.budgetBytes = uint64_t{1} << 40;
  Compiled budgeted(options, kGpt2);
  ASSERT_TRUE(mlir::succeeded(budgeted.model));
  EXPECT_EQ(budgeted.fusedResidualNorms(), 1);
  options.budget.budgetBytes.reset();
  options.budget.mode = memc::RematMode::Full;
  Compiled full(options, kGpt2);
  ASSERT_TRUE(mlir::succeeded(full.model));
  EXPECT_EQ(full.fusedResidualNorms(), 1);
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
