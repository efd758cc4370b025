//===- memc.cpp - the memc compiler driver --------------------------------===//
//
// memc MODEL.onnx [--input-shape NAME=DIMS]... [--emit=mlir|mlir-import] [-o FILE]
// memc MODEL.onnx --mode=infer -o RUN
// memc MODEL.onnx --loss cross_entropy|mse --optimizer sgd|adamw --lr F [...] -o TRAIN
//
// The default mode imports an ONNX model, brings it to canonical form and prints the memc IR.
// --mode=infer compiles it into RUN, one executable that computes the model's outputs on the
// CPU inside an arena whose size the compiler decided. A one-line summary goes to stderr;
// every error is a message and exit code 1.
//
// A front end: flags become memc::PipelineOptions, compiler/pipeline compiles, and this file
// prints and writes what it returns.
//
//===----------------------------------------------------------------------===//
#include "compiler/lowering/OnnxTemplate.h"
#include "compiler/lowering/ProgramWriter.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/report/MemoryReport.h"
#include "compiler/report/MemorySvg.h"
#include "compiler/training/TrainStep.h"
#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/MemcDialect.h"
#include "dialects/memc/ShapeInference.h"
#include "kernels/KernelTargets.h"
#include "kernels/ShapeRules.h"
#include "runtime/io/Files.h"
#include "runtime/support/Bytes.h"
#include "runtime/support/NumberRange.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory memcCategory("memc options");
cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"), cl::Required,
                               cl::cat(memcCategory));
cl::opt<std::string> outputPath("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(memcCategory));
using memc::CompileMode;
cl::opt<CompileMode>
    mode("mode", cl::desc("What to build (default: train when --loss is given, import otherwise)"),
         cl::init(CompileMode::Import),
         cl::values(clEnumValN(CompileMode::Import, "import", "print the model as memc IR"),
                    clEnumValN(CompileMode::Infer, "infer",
                               "an executable computing the model's outputs"),
                    clEnumValN(CompileMode::Train, "train", "an executable training the model")),
         cl::cat(memcCategory));
cl::opt<std::string> target("target",
                            cl::desc("The device kind the program runs on (plans record it and "
                                     "only its devices load them)"),
                            cl::init(memc::kernels::kCpuTarget), cl::cat(memcCategory));

cl::OptionCategory trainingCategory("memc training options");
cl::opt<std::string> loss("loss", cl::desc("Loss: cross_entropy or mse"),
                          cl::cat(trainingCategory));
cl::opt<std::string> lossInput("loss-input", cl::desc("Graph output the loss is computed from"),
                               cl::cat(trainingCategory));
cl::opt<std::string> labels("labels", cl::desc("Name of the labels input (default: labels)"),
                            cl::init("labels"), cl::cat(trainingCategory));
cl::opt<std::string> optimizer("optimizer", cl::desc("sgd or adamw (default: adamw)"),
                               cl::init("adamw"), cl::cat(trainingCategory));
cl::opt<double> learningRate("lr", cl::desc("Learning rate (default: 0.001)"), cl::init(1e-3),
                             cl::cat(trainingCategory));
cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default: 0)"), cl::init(0.0),
                         cl::cat(trainingCategory));
cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"), cl::cat(trainingCategory));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default: torch.optim's, 0.01 for adamw, 0 for "
                                     "sgd)"),
                            cl::init(0.0), cl::cat(trainingCategory));
cl::opt<double> beta1("beta1", cl::desc("AdamW beta1 (default: 0.9)"), cl::init(0.9),
                      cl::cat(trainingCategory));
cl::opt<double> beta2("beta2", cl::desc("AdamW beta2 (default: 0.999)"), cl::init(0.999),
                      cl::cat(trainingCategory));
cl::opt<double> epsilon("eps", cl::desc("AdamW epsilon (default: 1e-8)"), cl::init(1e-8),
                        cl::cat(trainingCategory));
cl::opt<double> clipGradNorm("clip-grad-norm",
                             cl::desc("Clip the gradients' global norm to this (default: no "
                                      "clipping)"),
                             cl::init(0.0), cl::cat(trainingCategory));
cl::opt<int64_t> gradAccum("grad-accum", cl::desc("Micro-batches per optimizer step (default: 1)"),
                           cl::init(1), cl::cat(trainingCategory));
cl::opt<double> lossScale("loss-scale",
                          cl::desc("--precision fp16: a fixed loss scale instead of the dynamic "
                                   "one (default: dynamic, from 2^16)"),
                          cl::init(65536.0), cl::cat(trainingCategory));
cl::opt<int64_t> lossScaleWindow("loss-scale-window",
                                 cl::desc("--precision fp16: consecutive finite steps before the "
                                          "dynamic loss scale doubles (default: 2000)"),
                                 cl::init(2000), cl::cat(trainingCategory));
cl::opt<int64_t> warmup("warmup", cl::desc("Linear learning-rate warmup steps (default: 0)"),
                        cl::init(0), cl::cat(trainingCategory));
cl::opt<int64_t> decaySteps("decay-steps",
                            cl::desc("Cosine decay steps after warmup (default: 0, a constant "
                                     "rate)"),
                            cl::init(0), cl::cat(trainingCategory));
cl::list<std::string> freeze("freeze", cl::desc("Glob of parameters that do not train"),
                             cl::cat(trainingCategory));
cl::list<std::string> trainable("trainable", cl::desc("Glob of the only parameters that train"),
                                cl::cat(trainingCategory));
cl::OptionCategory memoryCategory("memc memory options");
cl::opt<std::string> vramBudget("vram-budget",
                                cl::desc("Device memory the program may use at its peak "
                                         "(e.g. 24GiB, 1.5GB, 512MiB)"),
                                cl::value_desc("size"), cl::cat(memoryCategory));
cl::opt<std::string> precision("precision",
                               cl::desc("What ops compute in: fp32, bf16 or fp16 (matmuls and "
                                        "convolutions in 16 bits, f32 master weights; fp16 "
                                        "training scales the loss; default: fp32)"),
                               cl::init("fp32"), cl::cat(memoryCategory));
cl::opt<memc::RematMode> rematMode(
    "remat", cl::desc("What to recompute in the backward instead of keeping it (default: auto)"),
    cl::init(memc::RematMode::Auto),
    cl::values(clEnumValN(memc::RematMode::Auto, "auto", "only as much as the budget needs"),
               clEnumValN(memc::RematMode::None, "none", "keep every activation"),
               clEnumValN(memc::RematMode::Full, "full", "keep only layer boundaries")),
    cl::cat(memoryCategory));
cl::opt<memc::RematSolver> rematSolver(
    "remat-solver", cl::desc("How --remat auto decides (default: heuristic)"),
    cl::init(memc::RematSolver::Heuristic),
    cl::values(clEnumValN(memc::RematSolver::Heuristic, "heuristic",
                          "greedy, in well under a second"),
               clEnumValN(memc::RematSolver::Ilp, "ilp",
                          "integer program (COIN-OR CBC), the heuristic where it cannot solve")),
    cl::cat(memoryCategory));
cl::opt<double> ilpTimeLimit("ilp-time-limit",
                             cl::desc("Seconds the ILP solver may take (default: 20)"),
                             cl::init(20.0), cl::cat(memoryCategory));
enum class FuseAttention { Auto, Off };
cl::opt<FuseAttention> fuseAttention(
    "fuse-attention",
    cl::desc("Replace attention subgraphs with memc.flash_attention (default: auto)"),
    cl::init(FuseAttention::Auto),
    cl::values(clEnumValN(FuseAttention::Auto, "auto", "every attention the pattern matches"),
               clEnumValN(FuseAttention::Off, "off", "keep attention as exported")),
    cl::cat(memoryCategory));
enum class MaxPoolArgmax { Auto, On, Off };
cl::opt<MaxPoolArgmax> maxPoolArgmax(
    "max-pool-argmax",
    cl::desc("Train: max_pool saves a one-byte argmax per output for its gradient, instead of "
             "the gradient keeping the pool's input (default: auto)"),
    cl::init(MaxPoolArgmax::Auto),
    cl::values(clEnumValN(MaxPoolArgmax::Auto, "auto",
                          "on unless a --vram-budget or --remat full lets remat run"),
               clEnumValN(MaxPoolArgmax::On, "on", "windows of up to 256 taps"),
               clEnumValN(MaxPoolArgmax::Off, "off", "max_pool_grad searches the input again")),
    cl::cat(memoryCategory));
enum class FuseLoss { Auto, Off };
cl::opt<FuseLoss> fuseLoss(
    "fuse-loss",
    cl::desc("Train with cross_entropy: compute the LM head and the loss in chunks, without "
             "the logits (memc.linear_cross_entropy; default: auto)"),
    cl::init(FuseLoss::Auto),
    cl::values(clEnumValN(FuseLoss::Auto, "auto", "when nothing else reads the logits"),
               clEnumValN(FuseLoss::Off, "off", "keep the head product and cross_entropy")),
    cl::cat(memoryCategory));
cl::opt<bool> report("report", cl::desc("Print where the peak's bytes go"),
                     cl::cat(memoryCategory));
cl::opt<std::string> reportJson("report-json", cl::desc("Write the memory report as JSON"),
                                cl::value_desc("file"), cl::cat(memoryCategory));
cl::opt<std::string> reportSvg("report-svg",
                               cl::desc("Draw memory over the schedule, before and after remat"),
                               cl::value_desc("file"), cl::cat(memoryCategory));

enum class Emit { Mlir, MlirImport };
cl::opt<Emit>
    emit("emit", cl::desc("What IR --mode=import prints (default: mlir)"), cl::init(Emit::Mlir),
         cl::values(clEnumValN(Emit::Mlir, "mlir", "memc IR in canonical form"),
                    clEnumValN(Emit::MlirImport, "mlir-import", "memc IR exactly as imported")),
         cl::cat(memcCategory));
cl::list<std::string> inputShapes("input-shape",
                                  cl::desc("Static shape for a graph input with symbolic dims"),
                                  cl::value_desc("NAME=DIMS, e.g. input_ids=4x128"),
                                  cl::cat(memcCategory));

/// Parses `NAME=4x128` into `shapes`; returns false with a message on malformed text.
bool parseInputShape(llvm::StringRef text, memc::ImportOptions &options, std::string &error) {
  auto [name, dims] = text.rsplit('=');
  if (name.empty() || dims.empty() || !text.contains('=')) {
    error = "--input-shape expects NAME=DIMS (e.g. input_ids=4x128), got '" + text.str() + "'";
    return false;
  }
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim <= 0) {
      error = "--input-shape " + text.str() + ": '" + part.str() + "' is not a positive dimension";
      return false;
    }
    shape.push_back(dim);
  }
  int64_t elements;
  if (!memc::kernels::checkedNumElements(shape, elements)) {
    error = "--input-shape " + text.str() +
            ": too large (more than 2^48 elements, memc's limit for one tensor)";
    return false;
  }
  options.inputShapes[name.str()] = shape;
  return true;
}

void printDiagnostic(Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
  os << "memc: "
     << (diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
         : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                             : "note")
     << ": ";
  if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
    os << "node '" << name.getName().getValue() << "': ";
  else if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
    os << file.getFilename().getValue() << ": ";
  os << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    printDiagnostic(note);
}

std::string describeValue(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << tensor.getElementType() << memc::formatShape(tensor.getShape());
  return text;
}

/// One line a user reads after import: what came in, what it holds, how long it took.
void printSummary(ModuleOp module, double seconds) {
  int64_t ops = 0, parameters = 0, parameterElements = 0, parameterBytes = 0, buffers = 0;
  std::string inputs, outputs;
  module.walk([&](func::FuncOp function) {
    for (BlockArgument argument : function.getArguments()) {
      auto type = cast<RankedTensorType>(argument.getType());
      auto kind =
          function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), memc::kParamKindAttr);
      if (!kind) {
        auto name =
            function.getArgAttrOfType<StringAttr>(argument.getArgNumber(), memc::kInputNameAttr);
        inputs +=
            (inputs.empty() ? "" : ", ") + (name ? name.str() : "?") + " " + describeValue(type);
      } else if (kind.getValue() == "parameter") {
        ++parameters;
        parameterElements += type.getNumElements();
        parameterBytes += memc::storageBytes(type);
      } else {
        ++buffers;
      }
    }
    for (unsigned i = 0; i < function.getNumResults(); ++i) {
      auto name = function.getResultAttrOfType<StringAttr>(i, memc::kOutputNameAttr);
      outputs += (outputs.empty() ? "" : ", ") + (name ? name.str() : "?") + " " +
                 describeValue(function.getResultTypes()[i]);
    }
    function.walk([&](Operation *op) { ops += isa<memc::MemcDialect>(op->getDialect()); });
  });
  llvm::errs() << llvm::format("memc: %s: %lld memc ops, %lld parameters (%.2fM values, %.1f MiB), "
                               "%lld buffers; inputs: %s; outputs: %s; imported in %.2f s\n",
                               modelPath.c_str(), (long long)ops, (long long)parameters,
                               parameterElements / 1e6, parameterBytes / 1048576.0,
                               (long long)buffers, inputs.c_str(), outputs.c_str(), seconds);
}

/// The prebuilt runner that compiled programs are made from: $MEMC_RUNNER, or memc-runner
/// beside this executable.
std::string runnerPath(const char *argv0) {
  if (const char *fromEnvironment = std::getenv("MEMC_RUNNER"))
    return fromEnvironment;
  std::string self = llvm::sys::fs::getMainExecutable(argv0, (void *)&runnerPath);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(path, "memc-runner");
  return std::string(path);
}

/// The budget and remat flags; false (with a message) on a malformed size.
bool budgetOptions(memc::BudgetOptions &options) {
  if (vramBudget.getNumOccurrences()) {
    options.budgetBytes = memc::runtime::parseByteSize(vramBudget);
    if (!options.budgetBytes || *options.budgetBytes == 0) {
      llvm::errs() << "memc: error: --vram-budget expects a size such as 24GiB, 1.5GB or 512MiB, "
                      "got '"
                   << vramBudget << "'\n";
      return false;
    }
  }
  if (!memc::kernels::targetContracts(target)) {
    llvm::errs() << "memc: error: --target must be one of " << memc::kernels::targetNames()
                 << ", got '" << target << "'\n";
    return false;
  }
  options.mode = rematMode;
  options.solver = rematSolver;
  options.ilpTimeLimitSeconds = ilpTimeLimit;
  options.plan.target = target;
  return true;
}

/// Writes what `print` prints to `path` (stdout for "-") through the runtime's atomic write, which
/// refuses a target that exists and is not a regular file (-o /dev/null would replace the device);
/// false with the message printed if it cannot.
template <typename Print> bool writeTextOutput(const std::string &path, Print &&print) {
  if (path == "-") {
    print(llvm::outs());
    llvm::outs().flush();
    if (!llvm::outs().has_error())
      return true;
    // Reported here, and cleared so that LLVM does not abort at exit with a message of its own.
    llvm::errs() << "memc: error: cannot write to stdout: " << llvm::outs().error().message()
                 << "\n";
    llvm::outs().clear_error();
    return false;
  }
  std::string text, error;
  llvm::raw_string_ostream os(text);
  print(os);
  os.flush();
  if (!memc::runtime::writeFileAtomically(path, {text}, 0644, error)) {
    llvm::errs() << "memc: error: " << error << "\n";
    return false;
  }
  return true;
}

/// Prints and writes the reports asked for; false if a file cannot be written.
bool emitReports(const memc::BudgetedPlan &planned, const memc::BudgetOptions &options) {
  if (report.getNumOccurrences() == 0 && reportJson.empty() && reportSvg.empty())
    return true;
  memc::MemoryReport memory = memc::buildMemoryReport(planned, options.budgetBytes);
  if (report)
    memc::printMemoryReport(memory, llvm::errs());
  if (!reportJson.empty() && !writeTextOutput(reportJson, [&](llvm::raw_ostream &os) {
        memc::writeMemoryReportJson(memory, os);
      }))
    return false;
  std::string title = llvm::sys::path::filename(modelPath).str();
  if (!reportSvg.empty() && !writeTextOutput(reportSvg, [&](llvm::raw_ostream &os) {
        memc::writeMemorySvg(memory, title, os);
      }))
    return false;
  return true;
}

/// The --remat value of `mode`.
const char *rematFlagName(memc::RematMode mode) {
  switch (mode) {
  case memc::RematMode::Auto:
    return "auto";
  case memc::RematMode::None:
    return "none";
  case memc::RematMode::Full:
    return "full";
  }
  return "auto";
}

/// The error for a budget memc cannot meet: the lowest peak it reached, where those bytes go, and
/// the flags that would lower it.
void reportInfeasibleBudget(const memc::BudgetedPlan &planned, const memc::BudgetOptions &options,
                            bool training) {
  memc::MemoryReport memory = memc::buildMemoryReport(planned, options.budgetBytes);
  llvm::raw_ostream &os = llvm::errs();
  os << "memc: error: the budget of " << memc::formatBytes(*options.budgetBytes)
     << " is too small: the lowest peak memc reaches with these flags is "
     << memc::formatBytes(memory.peakBytes) << " (" << memory.peakBytes << " bytes";
  // The flag as given, and what it chose: planned.strategy names plans (chen-sqrt among them)
  // that are no values of --remat.
  if (training) {
    os << ", --remat " << rematFlagName(options.mode);
    if (options.mode == memc::RematMode::Auto && !planned.strategy.empty())
      os << ", whose lowest plan is " << planned.strategy;
  }
  os << ")\n  at that peak:";
  for (size_t c = 1; c < memory.breakdown.size(); ++c)
    if (memory.breakdown[c])
      os << " " << memc::plan::categoryInfo(c).name << " " << memc::formatBytes(memory.breakdown[c])
         << ";";
  if (memory.unusedArenaBytes)
    os << " unused arena " << memc::formatBytes(memory.unusedArenaBytes) << ";";
  os << "\n  what would lower it:";
  if (training && options.mode == memc::RematMode::None)
    os << " --remat auto (recompute activations instead of keeping them);";
  // --input-shape applies only to symbolic dims, which need it: a model whose batch is fixed
  // refuses it.
  if (!inputShapes.empty())
    os << " a smaller batch (--input-shape);";
  else
    os << " a smaller batch (the model's input shapes are fixed: export it with a smaller or a "
          "dynamic batch, then --input-shape);";
  if (training) {
    if (memory.breakdown[memc::plan::OPTIMIZER_STATE])
      os << " --freeze or --trainable (no gradients or optimizer state for frozen parameters);"
         << (optimizer == "adamw" ? " --optimizer sgd (AdamW keeps two states per parameter);"
                                  : "");
  }
  if (precision == "fp32")
    os << " --precision bf16 or fp16 (16-bit activations and matmuls);";
  os << " optimizer-state sharding is not available yet\n";
}

/// Writes the inference executable and says what it holds.
int writeInference(memc::CompiledModel &compiled, const char *argv0) {
  const memc::PlanSummary &summary = compiled.planned->summary;
  if (outputPath == "-") {
    llvm::errs() << "memc: error: --mode=infer needs -o PATH for the executable\n";
    return 1;
  }
  std::string error;
  if (!memc::writeProgram(compiled.planned->plan, compiled.weights, runnerPath(argv0), outputPath,
                          error)) {
    llvm::errs() << "memc: error: " << error << "\n";
    return 1;
  }
  double ratio = summary.arenaLowerBoundBytes
                     ? double(summary.arenaBytes) / summary.arenaLowerBoundBytes
                     : 1.0;
  llvm::errs() << llvm::format(
      "memc: wrote %s: %zu steps (%zu in place), arena %.2f MiB (lower bound %.2f MiB, ratio "
      "%.3f), parameters %.2f MiB, constants %.2f KiB\n",
      outputPath.c_str(), summary.steps, summary.inPlaceSteps, summary.arenaBytes / 1048576.0,
      summary.arenaLowerBoundBytes / 1048576.0, ratio, summary.persistentBytes / 1048576.0,
      summary.constantBytes / 1024.0);
  return 0;
}

/// Validates the training flags into options; prints the problem and returns false.
bool trainingOptions(memc::TrainStepOptions &options) {
  auto error = [](const std::string &message) {
    llvm::errs() << "memc: error: " << message << "\n";
    return false;
  };
  std::optional<memc::LossKind> lossKind = memc::parseLossKind(loss);
  if (!lossKind)
    return error("--loss must be cross_entropy or mse, got '" + loss + "'");
  options.loss = *lossKind;
  memc::OptimizerOptions &opt = options.optimizer;
  std::string unknown;
  opt.name = optimizer;
  if (optimizer == "none" || !memc::createOptimizer(opt, unknown))
    return error("--optimizer must be one of " + memc::optimizerNames() + ", got '" + optimizer +
                 "'");
  opt.accumulationSteps = gradAccum;
  if (nesterov && (optimizer != "sgd" || momentum == 0))
    return error("--nesterov needs --optimizer sgd with --momentum > 0");
  opt.momentum = momentum;
  opt.nesterov = nesterov;
  if (weightDecay.getNumOccurrences()) // otherwise the optimizer's default
    opt.weightDecay = weightDecay;
  opt.beta1 = beta1;
  opt.beta2 = beta2;
  opt.eps = epsilon;
  opt.clipGradNorm = clipGradNorm;
  if (precision == "fp16") {
    opt.lossScale.enabled = true;
    opt.lossScale.dynamic = !lossScale.getNumOccurrences();
    opt.lossScale.initialScale = lossScale;
    opt.lossScale.window = lossScaleWindow;
  } else if (lossScale.getNumOccurrences() || lossScaleWindow.getNumOccurrences()) {
    return error(
        std::string(lossScale.getNumOccurrences() ? "--loss-scale" : "--loss-scale-window") +
        " needs --precision fp16 (bf16 and fp32 train without loss scaling), got "
        "--precision " +
        precision);
  }
  if (lossScale.getNumOccurrences() && lossScaleWindow.getNumOccurrences())
    return error("--loss-scale-window sets when a dynamic scale grows; --loss-scale fixes the "
                 "scale: give one of them");
  options.lossInput = lossInput;
  options.labelsName = labels;
  options.freeze.assign(freeze.begin(), freeze.end());
  options.trainable.assign(trainable.begin(), trainable.end());
  return true;
}

/// Writes the training executable (with an ONNX template when the model allows one) and says
/// what it holds.
int writeTraining(memc::CompiledModel &compiled, const char *argv0) {
  if (compiled.gradientsOverBudgetBytes)
    llvm::errs() << "memc: warning: the gradients program of --dump-grads needs "
                 << memc::formatBytes(*compiled.gradientsOverBudgetBytes)
                 << ", more than the budget\n";
  const memc::BudgetedPlan &planned = *compiled.planned;
  const memc::PlanSummary &summary = planned.summary;
  memc::plan::Plan &plan = compiled.planned->plan;
  if (outputPath == "-") {
    llvm::errs() << "memc: error: training needs -o PATH for the executable\n";
    return 1;
  }
  std::string error;
  // Saving ONNX is optional to training: a model memc cannot make a template of still trains.
  if (!memc::addOnnxTemplate(plan, modelPath, compiled.weights, error)) {
    llvm::errs() << "memc: warning: the program will not save ONNX models (--save OUT.onnx): "
                 << error << "\n";
    plan.mutable_training()->clear_onnx_template();
    plan.mutable_training()->clear_onnx_initializers();
  }
  if (!memc::writeProgram(plan, compiled.weights, runnerPath(argv0), outputPath, error)) {
    llvm::errs() << "memc: error: " << error << "\n";
    return 1;
  }
  llvm::errs() << llvm::format(
      "memc: wrote %s: training step of %zu steps (%zu in place), peak %.2f MiB: arena %.2f MiB "
      "(lower bound %.2f MiB, ratio %.3f), persistent %.2f MiB (parameters and optimizer "
      "state)",
      outputPath.c_str(), summary.steps, summary.inPlaceSteps,
      memc::planPeakBytes(plan) / 1048576.0, summary.arenaBytes / 1048576.0,
      summary.arenaLowerBoundBytes / 1048576.0,
      summary.arenaLowerBoundBytes ? double(summary.arenaBytes) / summary.arenaLowerBoundBytes
                                   : 1.0,
      summary.persistentBytes / 1048576.0);
  if (planned.clones)
    llvm::errs() << llvm::format(
        "; recomputing %lld ops (%.1f%% of the step's FLOPs, %s)", (long long)planned.clones,
        100.0 * planned.recomputeFlops / planned.stepFlops, planned.strategy.c_str());
  llvm::errs() << "\n";
  return 0;
}

/// Prints the IR and the one-line summary.
int printImported(mlir::ModuleOp module, std::chrono::steady_clock::time_point start) {
  if (!writeTextOutput(outputPath, [&](llvm::raw_ostream &os) { module->print(os); }))
    return 1;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  printSummary(module, seconds);
  return 0;
}

/// The flags of `category` given on the command line, as "--lr, --optimizer".
std::string givenFlags(const cl::OptionCategory &category) {
  std::vector<std::string> names;
  for (auto &entry : cl::getRegisteredOptions())
    if (entry.second->getNumOccurrences() &&
        llvm::is_contained(entry.second->Categories, &category))
      names.push_back("--" + entry.getKey().str());
  llvm::sort(names);
  return llvm::join(names, ", ");
}

/// Memory flags where memc plans nothing (it prints IR): false after saying which flags.
bool checkMemoryFlagsApply() {
  std::string given = givenFlags(memoryCategory);
  bool printsIr = emit.getNumOccurrences() || (mode == CompileMode::Import && loss.empty());
  if (given.empty() || !printsIr)
    return true;
  bool several = given.find(',') != std::string::npos;
  llvm::errs() << "memc: error: " << given << ": "
               << (several ? "memory flags" : "a memory flag")
               << ", but memc prints the model's IR here and plans no memory (--mode=infer, or "
                  "--loss to train, builds a program whose memory they set)\n";
  return false;
}

/// Training flags where nothing trains: false after saying which flags and why.
bool checkTrainingFlagsApply() {
  std::string given = givenFlags(trainingCategory);
  if (given.empty())
    return true;
  bool several = given.find(',') != std::string::npos;
  auto error = [&](const std::string &why) {
    llvm::errs() << "memc: error: " << given << ": "
                 << (several ? "training flags" : "a training flag") << why << "\n";
    return false;
  };
  if (mode.getNumOccurrences() && mode == CompileMode::Import)
    return error(", but --mode=import prints the model's IR and does not train "
                 "(drop --mode=import, and give --loss, to train)");
  if (emit.getNumOccurrences())
    return error(", but --emit prints the model's IR and does not train (drop "
                 "--emit, and give --loss, to train)");
  if (mode == CompileMode::Infer)
    return error(", but --mode=infer builds a program that computes the model's "
                 "outputs and does not train (--mode=train, or no --mode, with --loss trains)");
  if (loss.empty() && mode == CompileMode::Import)
    return error(" without --loss: memc would print the model's IR" +
                 std::string(outputPath == "-" ? "" : " to " + outputPath) +
                 " instead of building a training program (add --loss cross_entropy|mse)");
  return true;
}

/// The values each numeric flag accepts: finite, and PyTorch's own ranges where it has them
/// (lr, betas, eps, weight decay), stricter where a value would be silently ignored (a clip
/// norm of 0), is no momentum (above 1) or could not finish (a step of 10^9 micro-batches).
/// Checked for the flags given, before anything compiles: out of range, a flag is an error
/// naming it and its range.
bool checkFlagRanges() {
  using memc::runtime::NumberRange;
  constexpr double inf = std::numeric_limits<double>::infinity();
  struct Row {
    cl::Option &flag;
    double value;
    NumberRange range;
  };
  const Row rows[] = {
      {learningRate, learningRate, {0, inf, false}},
      {momentum, momentum, {0, 1}},
      {weightDecay, weightDecay, {0, inf}},
      {beta1, beta1, {0, 1, true, false}},
      {beta2, beta2, {0, 1, true, false}},
      {epsilon, epsilon, {0, inf, false}},
      {clipGradNorm, clipGradNorm, {0, inf, false}},
      {gradAccum, double(gradAccum), {1, 65536, true, true, true}},
      // Up to 2^32, far above any useful scale (GradScaler starts at 2^16).
      {lossScale, lossScale, {0, 4294967296.0, false}},
      {lossScaleWindow,
       double(lossScaleWindow),
       {1, double(memc::kernels::kMaxLossScaleWindow), true, true, true}},
      {warmup, double(warmup), {0, memc::runtime::kMaxFlagCount, true, true, true}},
      {decaySteps, double(decaySteps), {0, memc::runtime::kMaxFlagCount, true, true, true}},
      {ilpTimeLimit, ilpTimeLimit, {0, 1e6, false}},
  };
  bool allInRange = true;
  for (const Row &row : rows)
    if (row.flag.getNumOccurrences() && !memc::runtime::isInRange(row.value, row.range)) {
      llvm::errs() << "memc: error: "
                   << memc::runtime::rangeError("--" + row.flag.ArgStr.str(), row.range,
                                                memc::runtime::formatNumber(row.value))
                   << "\n";
      allInRange = false;
    }
  return allInRange;
}

/// The flags as pipeline options; false after printing what is wrong with them.
bool pipelineOptions(memc::PipelineOptions &options) {
  if (!checkTrainingFlagsApply() || !checkMemoryFlagsApply() || !checkFlagRanges())
    return false;
  if (!loss.empty() && mode == CompileMode::Import)
    mode = CompileMode::Train;
  if (mode == CompileMode::Train && loss.empty()) {
    llvm::errs() << "memc: error: training needs --loss cross_entropy|mse\n";
    return false;
  }
  options.mode = mode;
  options.canonicalize = emit == Emit::Mlir;
  options.fuseAttention = fuseAttention == FuseAttention::Auto;
  if (maxPoolArgmax != MaxPoolArgmax::Auto)
    options.saveMaxPoolArgmax = maxPoolArgmax == MaxPoolArgmax::On;
  options.training.fuseLoss = fuseLoss == FuseLoss::Auto;
  for (const std::string &text : inputShapes) {
    std::string error;
    if (!parseInputShape(text, options.import, error)) {
      llvm::errs() << "memc: error: " << error << "\n";
      return false;
    }
  }
  if (mode == CompileMode::Import)
    return true;
  if (mode == CompileMode::Train) {
    // --precision is checked below; an unknown one must not read as "not fp16" first.
    if (precision != "fp32" && precision != "bf16" && precision != "fp16") {
      llvm::errs() << "memc: error: --precision must be fp32, bf16 or fp16, got '" << precision
                   << "'\n";
      return false;
    }
    if (!trainingOptions(options.training))
      return false;
    options.schedule = {learningRate, warmup, decaySteps};
  }
  if (precision == "bf16") {
    options.precision = memc::Precision::Bf16;
  } else if (precision == "fp16") {
    options.precision = memc::Precision::Fp16;
  } else if (precision != "fp32") {
    llvm::errs() << "memc: error: --precision must be fp32, bf16 or fp16, got '" << precision
                 << "'\n";
    return false;
  }
  return budgetOptions(options.budget);
}

/// Parses the command line; false after printing LLVM's option errors ("memc: Unknown command
/// line argument ...", "memc: for the --lr option: ...") in memc's form, the first an error and
/// the rest notes. Values that do not parse are reported by the options themselves straight to
/// stderr, so stderr goes to a temporary file while parsing (--help and --version print to
/// stdout and exit there).
bool parseCommandLine(int argc, char **argv) {
  std::string messages;
  llvm::raw_string_ostream messageStream(messages);
  std::FILE *captured = std::tmpfile();
  int savedStderr = captured ? ::dup(STDERR_FILENO) : -1;
  if (savedStderr >= 0)
    ::dup2(::fileno(captured), STDERR_FILENO);
  bool parsed = cl::ParseCommandLineOptions(
      argc, argv, "memc: compile ONNX models into memory-optimized training executables\n",
      &messageStream);
  if (savedStderr >= 0) {
    ::dup2(savedStderr, STDERR_FILENO);
    ::close(savedStderr);
    std::rewind(captured);
    char buffer[4096];
    std::string direct;
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), captured)) > 0;)
      direct.append(buffer, n);
    messages = direct + messages;
  }
  if (captured)
    std::fclose(captured);
  if (parsed && messages.empty())
    return true;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(messages).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (auto [index, line] : llvm::enumerate(lines)) {
    line = line.trim();
    if (line.starts_with("memc: "))
      line = line.drop_front(6);
    llvm::errs() << "memc: " << (index == 0 && !parsed ? "error: " : "note: ") << line << "\n";
  }
  return parsed;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&memcCategory, &trainingCategory, &memoryCategory});
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "memc " MEMC_VERSION " (revision " MEMC_REVISION ")\n"; });
  if (!parseCommandLine(argc, argv))
    return 1;
  auto start = std::chrono::steady_clock::now();
  memc::PipelineOptions options;
  if (!pipelineOptions(options))
    return 1;

  MLIRContext context;
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    printDiagnostic(diag);
    return success();
  });
  FailureOr<memc::CompiledModel> compiled = memc::compileModel(context, modelPath, options);
  if (failed(compiled))
    return 1;
  if (mode == CompileMode::Import)
    return printImported(*compiled->module, start);

  const memc::BudgetedPlan &planned = *compiled->planned;
  for (const std::string &note : planned.notes)
    llvm::errs() << "memc: note: " << note << "\n";
  if (!emitReports(planned, options.budget))
    return 1;
  if (!planned.fits) {
    reportInfeasibleBudget(planned, options.budget, mode == CompileMode::Train);
    return 1;
  }
  return mode == CompileMode::Infer ? writeInference(*compiled, argv[0])
                                    : writeTraining(*compiled, argv[0]);
}
