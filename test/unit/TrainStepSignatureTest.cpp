//===- TrainStepSignatureTest.cpp - optimizers and the step's argument roles -===//
//
// The Optimizer registry (names, state specs, scalars) and what the IR of a training step says
// about its arguments: every role readable from the function alone (argumentKind, the scalar
// input names, readTrainStepSignature), and the lowering's categories following the kinds,
// never the names.
//
//===----------------------------------------------------------------------===//
#include "compiler/training/TrainStepSignature.h"
#include "compiler/lowering/BufferCategories.h"
#include "compiler/training/Optimizer.h"
#include "compiler/training/TrainStep.h"
#include "dialects/memc/MemcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
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
  EXPECT_EQ(error, "unknown optimizer 'lion' (optimizers: sgd, adamw, adamw8bit)");
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
      {"memc.loss_weight", plan::KIND_NONE, plan::INPUTS},
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

/// The argument whose memc.param or memc.input is `name`: the tests find the layout
/// buildTrainStep documents by names so that the reader does not have to.
unsigned argumentNamed(mlir::func::FuncOp step, llvm::StringRef name) {
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    for (llvm::StringRef attr : {llvm::StringRef(kParamNameAttr), llvm::StringRef(kInputNameAttr)})
      if (auto given = step.getArgAttrOfType<mlir::StringAttr>(i, attr);
          given && given.getValue() == name)
        return i;
  ADD_FAILURE() << "no argument '" << name.str() << "'";
  return ~0u;
}

/// readTrainStepSignature(step) succeeds and equals `want`.
void expectSignature(mlir::func::FuncOp step, const TrainStepSignature &want) {
  mlir::FailureOr<TrainStepSignature> got = readTrainStepSignature(step);
  ASSERT_TRUE(succeeded(got));
  EXPECT_EQ(got->graphInputs, want.graphInputs);
  EXPECT_EQ(got->labels, want.labels);
  EXPECT_EQ(got->modelTensors, want.modelTensors);
  ASSERT_EQ(got->trained.size(), want.trained.size());
  for (auto [gotTrained, wantTrained] : llvm::zip(got->trained, want.trained)) {
    EXPECT_EQ(gotTrained.param, wantTrained.param);
    EXPECT_EQ(gotTrained.state, wantTrained.state);
    EXPECT_EQ(gotTrained.accumulator, wantTrained.accumulator);
  }
  EXPECT_EQ(got->scalars, want.scalars);
  EXPECT_EQ(got->lossScaler, want.lossScaler);
  ASSERT_EQ(got->weightCopies.size(), want.weightCopies.size());
  for (auto [gotCopy, wantCopy] : llvm::zip(got->weightCopies, want.weightCopies)) {
    EXPECT_EQ(gotCopy.source, wantCopy.source);
    EXPECT_EQ(gotCopy.copy, wantCopy.copy);
  }
}

/// Steps built from kForward (or another @forward), read back.
class ReadTrainStepSignature : public testing::Test {
protected:
  ReadTrainStepSignature() { context.loadDialect<MemcDialect, mlir::func::FuncDialect>(); }

  mlir::func::FuncOp build(const TrainStepOptions &options, const char *forward = kForward) {
    module = mlir::parseSourceString<mlir::ModuleOp>(forward, &context);
    EXPECT_TRUE(module);
    if (!module)
      return {};
    mlir::FailureOr<mlir::func::FuncOp> step = buildTrainStep(*module, options);
    EXPECT_TRUE(succeeded(step));
    return succeeded(step) ? *step : mlir::func::FuncOp();
  }

  /// The roles every step built from kForward shares; `trained` holds w alone, without state.
  static TrainStepSignature commonRoles(mlir::func::FuncOp step) {
    TrainStepSignature signature;
    signature.graphInputs = {argumentNamed(step, "x")};
    signature.labels = argumentNamed(step, "labels");
    signature.modelTensors = {argumentNamed(step, "w")};
    signature.trained = {{argumentNamed(step, "w"), {}, std::nullopt}};
    signature.scalars[size_t(plan::ScalarInput::Salt)] = argumentNamed(step, "memc.salt");
    return signature;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(ReadTrainStepSignature, FindsAdamWStateAndAccumulatorsByTheirParameter) {
  TrainStepOptions options;
  options.optimizer.name = "adamw";
  options.optimizer.accumulationSteps = 2;
  mlir::func::FuncOp step = build(options);
  ASSERT_TRUE(step);
  TrainStepSignature want = commonRoles(step);
  want.trained[0].state = {argumentNamed(step, "w.exp_avg"), argumentNamed(step, "w.exp_avg_sq")};
  want.trained[0].accumulator = argumentNamed(step, "w.grad_accum");
  for (plan::ScalarInput input :
       {plan::ScalarInput::LearningRate, plan::ScalarInput::StepNumber, plan::ScalarInput::Apply,
        plan::ScalarInput::LossWeight})
    want.scalars[size_t(input)] =
        argumentNamed(step, llvm::StringRef(plan::scalarInputName(input)));
  expectSignature(step, want);
}

TEST_F(ReadTrainStepSignature, FindsTheParametersPlainSgdUpdates) {
  TrainStepOptions options;
  options.optimizer.name = "sgd";
  mlir::func::FuncOp step = build(options);
  ASSERT_TRUE(step);
  TrainStepSignature want = commonRoles(step);
  want.scalars[size_t(plan::ScalarInput::LearningRate)] = argumentNamed(step, "memc.lr");
  expectSignature(step, want);
}

TEST_F(ReadTrainStepSignature, FindsTheParametersGradientsAreReturnedFor) {
  TrainStepOptions options;
  options.optimizer.name = "none";
  options.functionName = "gradients";
  mlir::func::FuncOp step = build(options);
  ASSERT_TRUE(step);
  expectSignature(step, commonRoles(step));
}

/// kForward after memc-autocast: w's bf16 copy is made at the entry.
constexpr const char *kBf16Forward = R"mlir(
func.func @forward(%x: tensor<2x4xf32> {memc.input = "x"},
                   %w: tensor<4x3xf32> {memc.param = "w", memc.param_kind = "parameter"})
    -> (tensor<2x3xf32> {memc.output = "logits"}) {
  %wl = memc.cast %w : tensor<4x3xf32> -> tensor<4x3xbf16>
  %0 = memc.dropout %x {ratio = 0.1 : f64, seed = 7 : i64} : tensor<2x4xf32>
  %xl = memc.cast %0 : tensor<2x4xf32> -> tensor<2x4xbf16>
  %1 = memc.matmul %xl, %wl : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %2 = memc.cast %1 : tensor<2x3xbf16> -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}
)mlir";

TEST_F(ReadTrainStepSignature, FindsTheLossScalerAndTheWeightCopies) {
  TrainStepOptions options;
  options.optimizer.name = "sgd";
  options.optimizer.accumulationSteps = 2;
  options.optimizer.lossScale.enabled = true;
  mlir::func::FuncOp step = build(options, kBf16Forward);
  ASSERT_TRUE(step);
  TrainStepSignature want = commonRoles(step);
  for (plan::ScalarInput input :
       {plan::ScalarInput::LearningRate, plan::ScalarInput::Apply, plan::ScalarInput::Refresh,
        plan::ScalarInput::LossWeight})
    want.scalars[size_t(input)] =
        argumentNamed(step, llvm::StringRef(plan::scalarInputName(input)));
  want.trained[0].accumulator = argumentNamed(step, "w.grad_accum");
  for (const plan::LossScalerStateInfo &info : plan::kLossScalerStates)
    want.lossScaler[size_t(info.state)] = argumentNamed(step, llvm::StringRef(info.name));
  want.weightCopies = {{argumentNamed(step, "w"), argumentNamed(step, "w.weight_copy")}};
  expectSignature(step, want);
  EXPECT_EQ(argumentKind(step, argumentNamed(step, "w.weight_copy")), plan::KIND_WEIGHT_COPY);
  EXPECT_EQ(argumentKind(step, argumentNamed(step, "memc.skipped_steps")), plan::KIND_LOSS_SCALER);
  llvm::DenseMap<mlir::Value, plan::Category> categories = classifyValues(step);
  EXPECT_EQ(categories.lookup(step.getArgument(argumentNamed(step, "w.weight_copy"))),
            plan::WEIGHT_COPIES);
  EXPECT_EQ(categories.lookup(step.getArgument(argumentNamed(step, "memc.loss_scale_growth"))),
            plan::OPTIMIZER_STATE);
}

/// A batch norm: with an optimizer the step updates its running statistics, buffers.
constexpr const char *kBatchNorm = R"mlir(
func.func @forward(%x: tensor<2x3x2x2xf32> {memc.input = "x"},
                   %s: tensor<3xf32> {memc.param = "scale", memc.param_kind = "parameter"},
                   %b: tensor<3xf32> {memc.param = "bias", memc.param_kind = "parameter"},
                   %m: tensor<3xf32> {memc.param = "mean", memc.param_kind = "buffer"},
                   %v: tensor<3xf32> {memc.param = "var", memc.param_kind = "buffer"})
    -> (tensor<2x3x2x2xf32> {memc.output = "y"}) {
  %0 = memc.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64, momentum = 0.9 : f64, training = false}
      : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}
)mlir";

TEST_F(ReadTrainStepSignature, TrainsNeitherFrozenParametersNorTheBuffersBatchNormUpdates) {
  TrainStepOptions options;
  options.loss = LossKind::MeanSquaredError;
  options.optimizer.name = "adamw";
  options.freeze = {"bias"};
  mlir::func::FuncOp step = build(options, kBatchNorm);
  ASSERT_TRUE(step);
  auto named = [&](llvm::StringRef name) { return argumentNamed(step, name); };
  TrainStepSignature want;
  want.graphInputs = {named("x")};
  want.labels = named("labels");
  want.modelTensors = {named("scale"), named("bias"), named("mean"), named("var")};
  want.trained = {{named("scale"), {named("scale.exp_avg"), named("scale.exp_avg_sq")}, {}}};
  want.scalars[size_t(plan::ScalarInput::LearningRate)] = named("memc.lr");
  want.scalars[size_t(plan::ScalarInput::StepNumber)] = named("memc.step");
  expectSignature(step, want);
}

/// A step with one SGD momentum buffer; the tests break one attribute each.
constexpr const char *kMomentumStep = R"mlir(
func.func @train_step(%x: tensor<2xf32> {memc.input = "X_NAME"},
                      %y: tensor<2xf32> {memc.input = "labels"},
                      %w: tensor<2xf32> {memc.param = "w", memc.param_kind = "parameter"},
                      %m: tensor<2xf32> {memc.param = "w.momentum_buffer",
                                         memc.param_kind = "optimizer_state",
                                         memc.state_of = "STATE_OF"}EXTRA)
    -> (tensor<2xf32> {memc.updates = "w"}, tensor<2xf32> {memc.updates = "w.momentum_buffer"})
    attributes {LABELS} {
  return %w, %m : tensor<2xf32>, tensor<2xf32>
}
)mlir";

/// The messages readTrainStepSignature emits for kMomentumStep with `replacements` made, or
/// "read" when it succeeds.
std::string readError(std::vector<std::pair<std::string, std::string>> replacements) {
  std::string text = kMomentumStep;
  replacements.insert(
      replacements.end(),
      {{"X_NAME", "x"}, {"STATE_OF", "w"}, {"LABELS", "memc.labels = \"labels\""}, {"EXTRA", ""}});
  for (const auto &[from, to] : replacements)
    if (size_t at = text.find(from); at != std::string::npos)
      text.replace(at, from.size(), to);
  mlir::MLIRContext context;
  context.loadDialect<MemcDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  if (!module)
    return "unparsed";
  std::string messages;
  mlir::ScopedDiagnosticHandler collect(&context, [&](mlir::Diagnostic &diagnostic) {
    messages += diagnostic.str();
    return mlir::success();
  });
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  return succeeded(readTrainStepSignature(step)) ? "read" : messages;
}

TEST(ReadTrainStepSignatureRefuses, AttributesThatContradictEachOther) {
  EXPECT_EQ(readError({}), "read");
  EXPECT_EQ(readError({{"STATE_OF", "v"}}),
            "argument 3 is kept for 'v', which is no parameter the step trains");
  EXPECT_EQ(readError({{"X_NAME", "labels"}}), "argument 1 is a second labels input 'labels'");
  EXPECT_EQ(readError({{"LABELS", ""}}), "a training step names its labels input in memc.labels");
  EXPECT_EQ(readError({{"LABELS", "memc.labels = \"targets\""}}),
            "no input is the labels 'targets' that memc.labels names");
  EXPECT_EQ(readError({{"memc.state_of", "memc.kept_for"}}),
            "argument 3 (optimizer_state) names no parameter in memc.state_of");
  // The loss scaler's states are known by their vocabulary names; a weight copy names its tensor.
  EXPECT_EQ(readError({{"EXTRA", ", %s: tensor<f32> {memc.param = \"memc.scale\", "
                                 "memc.param_kind = \"loss_scaler\"}"}}),
            "argument 4 (loss_scaler) is none of the loss scaler's states");
  std::string growth = ", %s: tensor<f32> {memc.param = \"memc.loss_scale_growth\", "
                       "memc.param_kind = \"loss_scaler\"}";
  std::string again = growth;
  again.replace(again.find("%s"), 2, "%t");
  EXPECT_EQ(readError({{"EXTRA", growth + again}}),
            "argument 5 is a second 'memc.loss_scale_growth'");
  std::string copy = ", %c: tensor<2xbf16> {memc.param = \"w.weight_copy\", "
                     "memc.param_kind = \"weight_copy\", memc.state_of = \"COPY_OF\"}";
  EXPECT_EQ(readError({{"EXTRA", copy}, {"COPY_OF", "w"}}), "read");
  EXPECT_EQ(readError({{"EXTRA", copy}, {"COPY_OF", "u"}}),
            "argument 4 (weight_copy) names no parameter or buffer in memc.state_of");
}

} // namespace
