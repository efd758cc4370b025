//===- GradientTest.cpp - every gradient rule against PyTorch and finite differences -===//
//
// One test per case of cases/cases.json (written by make_gradient_cases.py). A case is a tiny
// model, an ONNX export of one torch op or memc IR, with an .npz of inputs, parameters, upstream
// gradients and torch's outputs and gradients. Each test:
//
//   1. imports the model (or parses the .mlir), canonicalizes it and fuses attention and
//      residual norms (as the pipeline does before autodiff), and checks that the ops the case
//      is about are in @forward (e.g. that the GELU decomposition became memc.gelu, an exported attention
//      memc.flash_attention);
//   2. turns parameters into plain inputs, so the test can bind and perturb them;
//   3. builds @grad(inputs..., params..., upstream grads...) -> (one gradient per floating input
//      and trainable parameter): @forward's body, then buildReverseSweep seeded with the
//      upstream gradient (several outputs: seeded with 1 from L = sum_i sum(y_i * g_i));
//   4. lowers @forward and @grad with buildPlan and runs them on the CPU executor;
//   5. compares the outputs and the gradients with torch's (f32: |a - e| <= 1e-5 + 1e-4 |e|);
//   6. checks memc's gradients by central differences of L = sum_i sum(y_i * g_i), evaluated
//      in double from @forward's f32 outputs, at up to 8 elements of every f32 input and
//      parameter (step 1e-3; see kFiniteDifference* below), unless the case sits on a kink.
//
// A gradient whose backward op has no CPU kernel fails with the list of missing kernels.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/OnnxImporter.h"
#include "compiler/lowering/PlanBuilder.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/training/Autodiff.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/Float16.h"
#include "passes/Passes.h"
#include "runtime/device/AvailableDevices.h"
#include "runtime/device/DeviceRegistry.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/Files.h"
#include "runtime/io/Json.h"
#include "runtime/io/Npz.h"
#include "runtime/plan/PlanLoader.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace memc;

namespace {

//===----------------------------------------------------------------------===//
// Tolerances
//===----------------------------------------------------------------------===//

// memc's f32 results against torch's float64 references of the same f32 inputs.
constexpr double kAbsoluteTolerance = 1e-5;
constexpr double kRelativeTolerance = 1e-4;
// f16 results (the cast cases) are compared to f16 rounding.
constexpr double kHalfAbsoluteTolerance = 1e-3;
constexpr double kHalfRelativeTolerance = 1e-3;

// Central differences of the objective through the f32 forward plan. The step balances
// truncation error (O(step^2 * f''')) against rounding: each f32 output carries ~6e-8 relative
// error, so the objective's noise divided by 2 * step is ~1e-4 for these tiny cases' magnitudes.
// The tolerance is 1% of the gradient plus an absolute 2e-3 for gradients near zero, which
// still catches a wrong rule (errors of the order of the gradient itself); the worst case
// observed uses about a tenth of it.
constexpr double kFiniteDifferenceStep = 1e-3;
constexpr double kFiniteDifferenceRelative = 1e-2;
constexpr double kFiniteDifferenceAbsolute = 2e-3;
constexpr size_t kFiniteDifferenceElements = 8;

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

const fs::path kCasesDir = MEMC_GRADIENT_CASES_DIR;

struct GradientCase {
  std::string name;
  std::string model;
  std::vector<std::string> ops;
  bool torchReference = true;
  /// Why central differences do not apply (a kink, f16); empty when they do.
  std::string skipFiniteDifference;
  std::string note;
};

/// gtest prints a failing test's parameter; the name says which case it is.
void PrintTo(const GradientCase &testCase, std::ostream *out) { *out << testCase.name; }

bool parseCase(const runtime::JsonValue &entry, GradientCase &out, std::string &error) {
  const runtime::JsonValue *name = entry.find("name"), *model = entry.find("model"),
                           *ops = entry.find("ops"), *reference = entry.find("torch_reference"),
                           *finite = entry.find("finite_difference"), *note = entry.find("note");
  if (!name || !name->isString() || !model || !model->isString() || !ops || !ops->isArray() ||
      !reference || reference->kind() != runtime::JsonValue::Kind::Bool || !finite) {
    error = "a case needs name, model, ops, torch_reference and finite_difference";
    return false;
  }
  out.name = name->string();
  out.model = model->string();
  for (const runtime::JsonValue &op : ops->elements())
    out.ops.push_back(op.string());
  out.torchReference = reference->boolean();
  if (finite->isString())
    out.skipFiniteDifference = finite->string();
  else if (finite->kind() != runtime::JsonValue::Kind::Bool || !finite->boolean())
    out.skipFiniteDifference = "disabled";
  if (note && note->isString())
    out.note = note->string();
  return true;
}

bool loadCases(std::vector<GradientCase> &cases, std::string &error) {
  std::string text;
  if (!runtime::readFile((kCasesDir / "cases.json").string(), text, error))
    return false;
  runtime::JsonValue manifest;
  if (!runtime::parseJson(text, manifest, error))
    return false;
  const runtime::JsonValue *list = manifest.find("cases");
  if (!list || !list->isArray()) {
    error = "cases.json has no \"cases\" array";
    return false;
  }
  for (const runtime::JsonValue &entry : list->elements()) {
    GradientCase parsed;
    if (!parseCase(entry, parsed, error))
      return false;
    cases.push_back(std::move(parsed));
  }
  return true;
}

std::vector<GradientCase> allCases() {
  std::vector<GradientCase> cases;
  std::string error;
  if (!loadCases(cases, error))
    cases.clear(); // ManifestLoads reports the error
  return cases;
}

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

uint64_t elementCount(const runtime::HostArray &array) {
  return array.bytes.size() / runtime::elementSize(array.dtype);
}

double elementAt(const runtime::HostArray &array, uint64_t i) {
  switch (array.dtype) {
  case runtime::DType::F32: return array.as<float>()[i];
  case runtime::DType::F16: return kernels::halfToFloat(array.as<uint16_t>()[i]);
  case runtime::DType::I64: return double(array.as<int64_t>()[i]);
  case runtime::DType::I32: return array.as<int32_t>()[i];
  case runtime::DType::Bool: return array.bytes[i];
  case runtime::DType::BF16: return kernels::floatFromBits(uint32_t(array.as<uint16_t>()[i]) << 16);
  default: return 0; // storage-only types: no kernel computes them
  }
}

const runtime::HostArray *findArray(const runtime::NamedArrays &arrays, const std::string &name) {
  for (const auto &[key, array] : arrays)
    if (key == name)
      return &array;
  return nullptr;
}

std::string describe(const runtime::HostArray &array) {
  return std::string(runtime::dtypeString(array.dtype)) + runtime::shapeString(array.shape);
}

/// The largest error of `actual` against `expected`, and whether every element is within
/// tolerance; `why` counts the failing elements and shows the first few.
struct Comparison {
  bool ok = true;
  double maxError = 0;
  double maxExpected = 0;
  std::string why;
};

constexpr int kMismatchesShown = 6;

Comparison compare(const runtime::HostArray &actual, const runtime::HostArray &expected) {
  Comparison result;
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    result.ok = false;
    result.why = "memc gives " + describe(actual) + ", torch " + describe(expected);
    return result;
  }
  bool half = actual.dtype == runtime::DType::F16;
  double atol = half ? kHalfAbsoluteTolerance : kAbsoluteTolerance;
  double rtol = half ? kHalfRelativeTolerance : kRelativeTolerance;
  std::ostringstream shown;
  int mismatches = 0;
  for (uint64_t i = 0; i < elementCount(actual); ++i) {
    double a = elementAt(actual, i), e = elementAt(expected, i);
    double error = a == e ? 0 : std::abs(a - e); // equal infinities agree
    if (std::isnan(a) || std::isnan(e))
      error = std::isnan(a) && std::isnan(e) ? 0 : INFINITY;
    result.maxError = std::max(result.maxError, error);
    result.maxExpected = std::max(result.maxExpected, std::abs(e));
    if (error <= atol + rtol * std::abs(e))
      continue;
    if (mismatches++ < kMismatchesShown)
      shown << "\n  element " << i << ": memc " << a << ", torch " << e;
  }
  if (mismatches > 0) {
    result.ok = false;
    result.why = std::to_string(mismatches) + " of " + std::to_string(elementCount(actual)) +
                 " elements out of tolerance" + shown.str();
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Compiling and running functions
//===----------------------------------------------------------------------===//

runtime::Device &cpuDevice() {
  static std::unique_ptr<runtime::Device> device = [] {
    runtime::DeviceRegistry registry;
    runtime::registerAvailableDevices(registry);
    std::string error;
    std::unique_ptr<runtime::Device> created = registry.create("cpu", error);
    if (!created)
      llvm::report_fatal_error(llvm::Twine("memc-gradient-tests: ") + error);
    return created;
  }();
  return *device;
}

/// The ops of `function` that the CPU device has no kernel for (constants and reshapes need
/// none: they become plan data and views).
std::vector<std::string> missingKernels(mlir::func::FuncOp function) {
  std::set<std::string> missing;
  const kernels::KernelTable &table = cpuDevice().kernels();
  function.walk([&](mlir::Operation *op) {
    if (op->getDialect() != function->getContext()->getLoadedDialect<MemcDialect>() ||
        mlir::isa<ConstantOp, ReshapeOp>(op))
      return;
    std::string kernel = op->getName().stripDialect().str();
    if (!table.count(kernel))
      missing.insert(kernel);
  });
  return {missing.begin(), missing.end()};
}

/// A function lowered to a plan and loaded into an executor on the CPU device.
class CompiledFunction {
public:
  bool compile(mlir::func::FuncOp function, std::string &error) {
    if (std::vector<std::string> missing = missingKernels(function); !missing.empty()) {
      error = "the CPU kernel table has no";
      for (const std::string &kernel : missing)
        error += " '" + kernel + "'";
      error += " (needed by @" + function.getName().str() + ")";
      return false;
    }
    mlir::FailureOr<plan::Plan> plan = buildPlan(function, function.getName().str());
    if (mlir::failed(plan)) {
      error = "buildPlan failed";
      return false;
    }
    std::unique_ptr<runtime::LoadedPlan> loaded = runtime::validatePlan(*plan, cpuDevice(), error);
    if (!loaded)
      return false;
    executor = runtime::Executor::create(std::move(loaded), cpuDevice(), {}, error);
    return executor != nullptr;
  }

  bool run(const runtime::NamedArrays &inputs, runtime::NamedArrays &outputs, std::string &error) {
    outputs.clear();
    return executor->bindInputs(inputs, error) && executor->run(error) &&
           executor->readOutputs(outputs, error);
  }

private:
  std::unique_ptr<runtime::Executor> executor;
};

//===----------------------------------------------------------------------===//
// The gradient function
//===----------------------------------------------------------------------===//

/// An argument of @forward: its name (graph input or parameter), where its value is in the
/// case's npz, and whether the test differentiates with respect to it.
struct Argument {
  std::string name;
  std::string arrayKey;
  bool differentiate = false;
};

/// Renames parameters into graph inputs (memc.input = the parameter's name) so that plans take
/// them as inputs the test can perturb; floating inputs and trainable parameters are
/// differentiated, buffers (running statistics) and integer tensors are not.
std::vector<Argument> parametersAsInputs(mlir::func::FuncOp forward) {
  std::vector<Argument> arguments;
  mlir::Builder b(forward.getContext());
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    Argument argument;
    bool floating = mlir::isa<mlir::FloatType>(
        mlir::getElementTypeOrSelf(forward.getArgument(i).getType()));
    if (auto param = forward.getArgAttrOfType<mlir::StringAttr>(i, kParamNameAttr)) {
      auto kind = forward.getArgAttrOfType<mlir::StringAttr>(i, kParamKindAttr);
      argument.name = param.str();
      argument.arrayKey = "__param_" + argument.name;
      argument.differentiate = floating && (!kind || kind.getValue() == "parameter");
      forward.setArgAttrs(i, b.getDictionaryAttr(b.getNamedAttr(
                                 "memc.input", b.getStringAttr(argument.name))));
    } else {
      auto input = forward.getArgAttrOfType<mlir::StringAttr>(i, "memc.input");
      argument.name = input ? input.str() : "input" + std::to_string(i);
      argument.arrayKey = argument.name;
      argument.differentiate = floating;
    }
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

std::vector<std::string> outputNames(mlir::func::FuncOp function) {
  std::vector<std::string> names;
  for (unsigned i = 0; i < function.getNumResults(); ++i) {
    auto name = function.getResultAttrOfType<mlir::StringAttr>(i, "memc.output");
    names.push_back(name ? name.str() : "output" + std::to_string(i));
  }
  return names;
}

mlir::Value zerosOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type) {
  auto tensor = mlir::cast<mlir::RankedTensorType>(type);
  return b.create<ConstantOp>(
      loc, mlir::DenseElementsAttr::get(tensor, b.getFloatAttr(tensor.getElementType(), 0.0)));
}

/// sum(y * g) over every element, as an f32 scalar.
mlir::Value dotProduct(mlir::OpBuilder &b, mlir::Location loc, mlir::Value y, mlir::Value g) {
  mlir::Value product = b.create<MulOp>(loc, y, g);
  auto type = mlir::cast<mlir::RankedTensorType>(product.getType());
  if (type.getRank() > 0) {
    llvm::SmallVector<int64_t> axes;
    for (int64_t axis = 0; axis < type.getRank(); ++axis)
      axes.push_back(axis);
    product = b.create<ReduceSumOp>(loc, product, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  }
  if (!type.getElementType().isF32())
    product = b.create<CastOp>(loc, mlir::RankedTensorType::get({}, b.getF32Type()), product);
  return product;
}

/// @grad(forward's arguments..., upstream gradients...) -> the gradient of every differentiated
/// argument, named after it.
mlir::FailureOr<mlir::func::FuncOp> buildGradientFunction(mlir::func::FuncOp forward,
                                                          const std::vector<Argument> &arguments) {
  mlir::OpBuilder b(forward.getContext());
  mlir::Location loc = forward.getLoc();
  auto returnOp = mlir::cast<mlir::func::ReturnOp>(forward.getBody().front().getTerminator());
  std::vector<std::string> outputs = outputNames(forward);

  llvm::SmallVector<mlir::Type> argTypes(forward.getArgumentTypes());
  llvm::SmallVector<mlir::DictionaryAttr> argAttrs;
  forward.getAllArgAttrs(argAttrs);
  for (auto [type, name] : llvm::zip(forward.getResultTypes(), outputs)) {
    argTypes.push_back(type);
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr("memc.input", b.getStringAttr("__grad_" + name))));
  }
  b.setInsertionPointAfter(forward);
  auto grad = b.create<mlir::func::FuncOp>(loc, "grad", b.getFunctionType(argTypes, {}));
  grad.setAllArgAttrs(argAttrs);
  mlir::Block *body = grad.addEntryBlock();
  b.setInsertionPointToStart(body);

  mlir::IRMapping mapping;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    mapping.map(forward.getArgument(i), grad.getArgument(i));
  for (mlir::Operation &op : forward.getBody().front().without_terminator())
    b.clone(op, mapping);
  auto upstream = [&](unsigned i) { return grad.getArgument(forward.getNumArguments() + i); };

  mlir::Value objective, seed;
  if (returnOp.getNumOperands() == 1) {
    objective = mapping.lookup(returnOp.getOperand(0));
    seed = upstream(0);
  } else {
    for (auto [i, value] : llvm::enumerate(returnOp.getOperands())) {
      mlir::Value term = dotProduct(b, loc, mapping.lookup(value), upstream(i));
      objective = objective ? b.create<AddOp>(loc, objective, term).getResult() : term;
    }
    seed = b.create<ConstantOp>(loc, mlir::DenseElementsAttr::get(
                                         mlir::RankedTensorType::get({}, b.getF32Type()),
                                         b.getF32FloatAttr(1.0f)));
  }
  llvm::SmallVector<mlir::Operation *> ops;
  for (mlir::Operation &op : *body)
    ops.push_back(&op);
  llvm::SmallVector<mlir::Value> wrt;
  for (auto [i, argument] : llvm::enumerate(arguments))
    if (argument.differentiate)
      wrt.push_back(grad.getArgument(i));

  mlir::FailureOr<llvm::SmallVector<mlir::Value>> gradients =
      buildReverseSweep(b, ops, objective, seed, wrt);
  if (mlir::failed(gradients))
    return mlir::failure();
  llvm::SmallVector<mlir::Value> results;
  llvm::SmallVector<mlir::DictionaryAttr> resultAttrs;
  size_t next = 0;
  for (const Argument &argument : arguments) {
    if (!argument.differentiate)
      continue;
    mlir::Value gradient = (*gradients)[next];
    results.push_back(gradient ? gradient : zerosOf(b, loc, wrt[next].getType()));
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr("memc.output", b.getStringAttr(argument.name))));
    ++next;
  }
  b.create<mlir::func::ReturnOp>(loc, results);
  grad.setType(b.getFunctionType(argTypes, mlir::ValueRange(results).getTypes()));
  grad.setAllResultAttrs(resultAttrs);
  return grad;
}

std::string printed(mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  op->print(stream);
  return text;
}

//===----------------------------------------------------------------------===//
// The test
//===----------------------------------------------------------------------===//

class GradientTest : public ::testing::TestWithParam<GradientCase> {
protected:
  void SetUp() override {
    context.loadDialect<MemcDialect, mlir::func::FuncDialect>();
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(&context, [&](mlir::Diagnostic &d) {
      diagnostics += (diagnostics.empty() ? "" : "\n") + d.str();
      return mlir::success();
    });
  }

  /// Imports or parses the case's model and canonicalizes it; null with a test failure.
  mlir::func::FuncOp loadForward(const GradientCase &testCase);
  /// The values of `arguments` (and of the upstream gradients when `withUpstream`).
  bool bindArguments(const std::vector<Argument> &arguments, const std::vector<std::string> &outputs,
                     bool withUpstream, runtime::NamedArrays &bound);
  void checkOutputs(const runtime::NamedArrays &outputs);
  void checkGradients(const std::vector<Argument> &arguments, const runtime::NamedArrays &gradients,
                      const std::string &gradIR);
  void checkFiniteDifferences(const GradientCase &testCase, CompiledFunction &forward,
                              const std::vector<Argument> &arguments,
                              const std::vector<std::string> &outputs,
                              const runtime::NamedArrays &gradients);
  double objective(const runtime::NamedArrays &outputs, const std::vector<std::string> &names);

  mlir::MLIRContext context;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
  std::string diagnostics;
  runtime::NamedArrays arrays;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

mlir::func::FuncOp GradientTest::loadForward(const GradientCase &testCase) {
  fs::path model = kCasesDir / testCase.model;
  if (model.extension() == ".mlir") {
    module = mlir::parseSourceFile<mlir::ModuleOp>(model.string(), &context);
  } else {
    ImportOptions options;
    for (const auto &[name, array] : arrays)
      if (name.rfind("__", 0) != 0)
        options.inputShapes[name] = array.shape;
    module = importOnnxModel(context, model.string(), options);
  }
  if (!module) {
    ADD_FAILURE() << "cannot load " << model << ":\n" << diagnostics;
    return nullptr;
  }
  mlir::PassManager pm(&context);
  buildCanonicalizationPipeline(pm);
  // As the pipeline does before autodiff (--fuse-attention auto): an exported attention is
  // checked through the fused op's rule.
  pm.nest<mlir::func::FuncOp>().addPass(createFuseAttention());
  pm.nest<mlir::func::FuncOp>().addPass(createFuseAddLayerNorm());
  if (mlir::failed(pm.run(*module))) {
    ADD_FAILURE() << "canonicalization failed:\n" << diagnostics;
    return nullptr;
  }
  auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward) {
    ADD_FAILURE() << "no @forward in " << model;
    return nullptr;
  }
  std::set<std::string> present;
  forward.walk([&](mlir::Operation *op) { present.insert(op->getName().stripDialect().str()); });
  for (const std::string &op : testCase.ops)
    if (!present.count(op)) {
      ADD_FAILURE() << "the case is about memc." << op << ", which canonical @forward lacks:\n"
                    << printed(forward);
      return nullptr;
    }
  return forward;
}

bool GradientTest::bindArguments(const std::vector<Argument> &arguments,
                                 const std::vector<std::string> &outputs, bool withUpstream,
                                 runtime::NamedArrays &bound) {
  bound.clear();
  std::vector<std::pair<std::string, std::string>> wanted; // (plan input, npz key)
  for (const Argument &argument : arguments)
    wanted.emplace_back(argument.name, argument.arrayKey);
  if (withUpstream)
    for (const std::string &output : outputs)
      wanted.emplace_back("__grad_" + output, "__grad_" + output);
  for (const auto &[name, key] : wanted) {
    const runtime::HostArray *array = findArray(arrays, key);
    if (!array) {
      ADD_FAILURE() << "the case's npz has no '" << key << "'";
      return false;
    }
    bound.emplace_back(name, *array);
  }
  return true;
}

void GradientTest::checkOutputs(const runtime::NamedArrays &outputs) {
  for (const auto &[name, actual] : outputs) {
    const runtime::HostArray *expected = findArray(arrays, "__expected_" + name);
    if (!expected)
      continue; // no torch reference (dropout)
    Comparison result = compare(actual, *expected);
    EXPECT_TRUE(result.ok) << "forward output '" << name << "' differs from torch (so the "
                           << "gradients cannot be expected to agree): " << result.why;
  }
}

void GradientTest::checkGradients(const std::vector<Argument> &arguments,
                                  const runtime::NamedArrays &gradients,
                                  const std::string &gradIR) {
  for (const auto &[name, actual] : gradients) {
    const runtime::HostArray *expected = findArray(arrays, "__expected_grad_" + name);
    if (!expected) {
      ADD_FAILURE() << "the case's npz has no torch gradient of '" << name << "'";
      continue;
    }
    Comparison result = compare(actual, *expected);
    std::cout << "[ gradient ] " << name << ": max |memc - torch| = " << result.maxError
              << " (max |torch| = " << result.maxExpected << ")\n";
    EXPECT_TRUE(result.ok) << "the gradient of '" << name << "' differs from torch's: "
                           << result.why << "\n@grad:\n" << gradIR;
  }
}

double GradientTest::objective(const runtime::NamedArrays &outputs,
                               const std::vector<std::string> &names) {
  double sum = 0;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const runtime::HostArray *upstream = findArray(arrays, "__grad_" + names[i]);
    for (uint64_t e = 0; e < elementCount(outputs[i].second); ++e)
      sum += elementAt(outputs[i].second, e) * elementAt(*upstream, e);
  }
  return sum;
}

/// Elements to perturb: all of a small tensor, else a fixed-seed sample.
std::vector<uint64_t> chooseElements(uint64_t count, const std::string &seedText) {
  std::vector<uint64_t> all(count);
  for (uint64_t i = 0; i < count; ++i)
    all[i] = i;
  if (count <= kFiniteDifferenceElements)
    return all;
  uint32_t seed = 2166136261u; // FNV-1a: the same sample on every platform
  for (char c : seedText)
    seed = (seed ^ uint8_t(c)) * 16777619u;
  std::mt19937 random(seed);
  std::shuffle(all.begin(), all.end(), random);
  all.resize(kFiniteDifferenceElements);
  std::sort(all.begin(), all.end());
  return all;
}

void GradientTest::checkFiniteDifferences(const GradientCase &testCase, CompiledFunction &forward,
                                          const std::vector<Argument> &arguments,
                                          const std::vector<std::string> &outputs,
                                          const runtime::NamedArrays &gradients) {
  runtime::NamedArrays inputs, results;
  std::string error;
  if (!bindArguments(arguments, outputs, /*withUpstream=*/false, inputs))
    return;
  double worst = 0; // the largest error as a fraction of its tolerance
  for (size_t a = 0; a < arguments.size(); ++a) {
    if (!arguments[a].differentiate || inputs[a].second.dtype != runtime::DType::F32)
      continue;
    const runtime::HostArray *gradient = findArray(gradients, arguments[a].name);
    ASSERT_NE(gradient, nullptr);
    float *values = inputs[a].second.as<float>();
    for (uint64_t e : chooseElements(elementCount(inputs[a].second),
                                     testCase.name + "/" + arguments[a].name)) {
      float original = values[e];
      float plus = original + float(kFiniteDifferenceStep);
      float minus = original - float(kFiniteDifferenceStep);
      values[e] = plus;
      ASSERT_TRUE(forward.run(inputs, results, error)) << error;
      double objectivePlus = objective(results, outputs);
      values[e] = minus;
      ASSERT_TRUE(forward.run(inputs, results, error)) << error;
      double objectiveMinus = objective(results, outputs);
      values[e] = original;
      // The actual steps, after f32 rounding of original +- step.
      double difference = (objectivePlus - objectiveMinus) / (double(plus) - double(minus));
      double analytic = elementAt(*gradient, e);
      double tolerance = kFiniteDifferenceAbsolute + kFiniteDifferenceRelative * std::abs(analytic);
      double deviation = std::abs(difference - analytic);
      worst = std::max(worst, deviation / tolerance);
      EXPECT_LE(deviation, tolerance) << "d objective / d " << arguments[a].name << "[" << e
                                  << "]: central difference " << difference << ", memc "
                                  << analytic;
    }
  }
  std::cout << "[ finite differences ] worst error / tolerance = " << worst << "\n";
}

TEST_P(GradientTest, MatchesTorchAndFiniteDifferences) {
  const GradientCase &testCase = GetParam();
  if (!testCase.note.empty())
    std::cout << "[ case ] " << testCase.note << "\n";
  std::string error;
  ASSERT_TRUE(runtime::readNpz((kCasesDir / (testCase.name + ".npz")).string(), arrays, error))
      << error;
  mlir::func::FuncOp forward = loadForward(testCase);
  if (!forward)
    return;
  std::vector<Argument> arguments = parametersAsInputs(forward);
  std::vector<std::string> outputs = outputNames(forward);

  mlir::FailureOr<mlir::func::FuncOp> grad = buildGradientFunction(forward, arguments);
  ASSERT_TRUE(mlir::succeeded(grad)) << "buildReverseSweep failed:\n" << diagnostics;
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*grad)))
      << "@grad does not verify:\n" << diagnostics << "\n" << printed(*grad);
  std::string gradIR = printed(*grad);

  CompiledFunction forwardPlan, gradPlan;
  ASSERT_TRUE(forwardPlan.compile(forward, error)) << error << "\n" << diagnostics;
  runtime::NamedArrays inputs, results, gradients;
  ASSERT_TRUE(bindArguments(arguments, outputs, /*withUpstream=*/false, inputs));
  ASSERT_TRUE(forwardPlan.run(inputs, results, error)) << error;
  checkOutputs(results);

  ASSERT_TRUE(gradPlan.compile(*grad, error)) << error << "\n" << diagnostics << "\n" << gradIR;
  ASSERT_TRUE(bindArguments(arguments, outputs, /*withUpstream=*/true, inputs));
  ASSERT_TRUE(gradPlan.run(inputs, gradients, error)) << error;
  if (testCase.torchReference)
    checkGradients(arguments, gradients, gradIR);

  if (!testCase.skipFiniteDifference.empty()) {
    std::cout << "[ finite differences ] skipped: " << testCase.skipFiniteDifference << "\n";
    return;
  }
  checkFiniteDifferences(testCase, forwardPlan, arguments, outputs, gradients);
}

std::string caseName(const ::testing::TestParamInfo<GradientCase> &info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Cases, GradientTest, ::testing::ValuesIn(allCases()), caseName);

TEST(GradientCases, ManifestLoads) {
  std::vector<GradientCase> cases;
  std::string error;
  ASSERT_TRUE(loadCases(cases, error)) << error;
  EXPECT_FALSE(cases.empty());
  std::set<std::string> names;
  for (const GradientCase &testCase : cases)
    EXPECT_TRUE(names.insert(testCase.name).second) << "duplicate case " << testCase.name;
}

} // namespace
