//===- memc.cpp - the memc compiler driver --------------------------------===//
//
// memc MODEL.onnx [--input-shape NAME=DIMS]... [--emit=mlir|mlir-import] [-o FILE]
// memc MODEL.onnx --mode=infer -o RUN
// memc MODEL.onnx --loss cross_entropy|mse --optimizer sgd|adamw --lr F [...] -o TRAIN
// memc MODEL.onnx --loss ... --explain-memory [--vram-budget B] [--batch-sweep N,...] [--max-seq]
// memc MODEL.onnx --loss ... --vram-budget B --micro-batch auto|--fit auto [...] -o TRAIN
//
// The default mode imports an ONNX model, brings it to canonical form and prints the memc IR.
// --mode=infer compiles it into RUN, one executable that computes the model's outputs on the
// CPU inside an arena whose size the compiler decided. A one-line summary goes to stderr;
// every error is a message and exit code 1.
//
// A front end: Flags.cpp turns the flags into memc::PipelineOptions, compiler/pipeline
// compiles, and this file prints and writes what it returns. The planning flags plan variants
// of the command line first (ExplainMemory.h, ChooseFlags.h).
//
//===----------------------------------------------------------------------===//
#include "tools/memc/ChooseFlags.h"
#include "tools/memc/ExplainMemory.h"
#include "tools/memc/Flags.h"

#include "compiler/lowering/DerivedWeights.h"
#include "compiler/lowering/ProgramWriter.h"
#include "compiler/pipeline/BudgetAdvice.h"
#include "compiler/pipeline/ModelSummary.h"
#include "compiler/report/MemoryReport.h"
#include "compiler/report/MemorySvg.h"
#include "kernels/KernelTargets.h"
#include "runtime/io/DistinctFiles.h"
#include "runtime/io/Files.h"
#include "runtime/support/MessageText.h"
#include "runtime/support/OutOfMemory.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <set>

using namespace mlir;

namespace {

void printDiagnostic(Diagnostic &diag) {
  std::string text;
  if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
    text = "node '" + name.getName().getValue().str() + "': ";
  else if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
    text = file.getFilename().getValue().str() + ": ";
  text += diag.str();
  llvm::errs() << "memc: "
               << (diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
                   : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                                       : "note")
               << ": " << memc::runtime::shortenLongRuns(text) << "\n";
  for (Diagnostic &note : diag.getNotes())
    printDiagnostic(note);
}

/// One line a user reads after import: what came in, what it holds, how long it took.
void printSummary(const DriverOptions &driver, const memc::ModelSummary &model, double seconds) {
  llvm::errs() << llvm::format(
      "memc: %s: %lld memc ops, %lld parameters (%.2fM values, %.1f MiB), "
      "%lld buffers; inputs: %s; outputs: %s; imported in %.2f s\n",
      driver.modelPath.c_str(), (long long)model.ops, (long long)model.parameters,
      model.parameterElements / 1e6, model.parameterBytes / 1048576.0, (long long)model.buffers,
      llvm::join(model.inputs, ", ").c_str(), llvm::join(model.outputs, ", ").c_str(), seconds);
}

/// The prebuilt runner that programs of `plan` are made from, beside this executable:
/// memc-runner for the CPU ($MEMC_RUNNER instead, where set), memc-runner-<target> for the
/// others, memc-runner-<target>-mpi for their data-parallel programs. Empty with a message where
/// this build has none (no nvcc, or no NCCL, on its build machine).
std::string runnerPath(const char *argv0, const memc::plan::Plan &plan, std::string &error) {
  const std::string &target = plan.target();
  const bool cpu = target == memc::kernels::kCpuTarget;
  if (const char *fromEnvironment = std::getenv("MEMC_RUNNER"); cpu && fromEnvironment)
    return fromEnvironment;
  std::string self = llvm::sys::fs::getMainExecutable(argv0, (void *)&runnerPath);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(self));
  const bool ranked = plan.training().world_size() > 1;
  llvm::sys::path::append(path, cpu      ? "memc-runner"
                                : ranked ? "memc-runner-" + target + "-mpi"
                                         : "memc-runner-" + target);
  if (!cpu && !llvm::sys::fs::exists(path)) {
    error = "this memc was built without the " + target + " backend" +
            (ranked ? "'s data-parallel runner" : "") + " (no " + std::string(path) +
            "): build memc where the CUDA toolkit's nvcc" + (ranked ? " and NCCL are" : " is") +
            " found, or use --report alone";
    return "";
  }
  return std::string(path);
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
bool emitReports(const DriverOptions &driver, const memc::BudgetedPlan &planned) {
  if (!driver.report && driver.reportJson.empty() && driver.reportSvg.empty())
    return true;
  memc::MemoryReport memory = memc::buildMemoryReport(planned, driver.pipeline.budget.budgetBytes);
  if (driver.report)
    memc::printMemoryReport(memory, llvm::errs());
  if (!driver.reportJson.empty() && !writeTextOutput(driver.reportJson, [&](llvm::raw_ostream &os) {
        memc::writeMemoryReportJson(memory, os);
      }))
    return false;
  std::string title = llvm::sys::path::filename(driver.modelPath).str();
  if (!driver.reportSvg.empty() && !writeTextOutput(driver.reportSvg, [&](llvm::raw_ostream &os) {
        memc::writeMemorySvg(memory, title, os);
      }))
    return false;
  return true;
}

/// Writes the inference executable and says what it holds.
int writeInference(const DriverOptions &driver, memc::CompiledModel &compiled, const char *argv0) {
  const std::string &outputPath = driver.outputPath;
  const memc::PlanSummary &summary = compiled.planned->summary;
  if (outputPath == "-") {
    llvm::errs() << "memc: error: --mode=infer needs -o PATH for the executable\n";
    return 1;
  }
  std::string error;
  std::string runner = runnerPath(argv0, compiled.planned->plan, error);
  if (runner.empty() ||
      !memc::writeProgram(compiled.planned->plan, compiled.weights, runner, outputPath, error)) {
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

/// Writes the training executable and says what it holds.
int writeTraining(const DriverOptions &driver, memc::CompiledModel &compiled, const char *argv0) {
  const std::string &outputPath = driver.outputPath;
  const memc::BudgetedPlan &planned = *compiled.planned;
  const memc::PlanSummary &summary = planned.summary;
  const memc::plan::Plan &plan = planned.plan;
  if (outputPath == "-") {
    // Reports without -o are a question about memory: answered, and no program written.
    if (driver.report || !driver.reportJson.empty() || !driver.reportSvg.empty())
      return 0;
    llvm::errs() << "memc: error: training needs -o PATH for the executable (or --report, "
                    "--report-json F or --report-svg F alone for the plan's memory)\n";
    return 1;
  }
  std::string error;
  std::string runner = runnerPath(argv0, plan, error);
  if (runner.empty() ||
      !memc::addDerivedWeights(compiled.module->lookupSymbol<mlir::func::FuncOp>("forward"),
                               driver.pipeline.lora.seed, compiled.weights, error) ||
      !memc::writeProgram(plan, compiled.weights, runner, outputPath, error)) {
    llvm::errs() << "memc: error: " << error << "\n";
    return 1;
  }
  llvm::errs() << llvm::format(
      "memc: wrote %s: training step of %zu steps (%zu in place), peak %.2f MiB: arena %.2f MiB "
      "(lower bound %.2f MiB, ratio %.3f), persistent %.2f MiB (parameters and optimizer "
      "state%s)",
      outputPath.c_str(), summary.steps, summary.inPlaceSteps,
      memc::planPeakBytes(plan) / 1048576.0, summary.arenaBytes / 1048576.0,
      summary.arenaLowerBoundBytes / 1048576.0,
      summary.arenaLowerBoundBytes ? double(summary.arenaBytes) / summary.arenaLowerBoundBytes
                                   : 1.0,
      summary.persistentBytes / 1048576.0,
      plan.inputs_size() && plan.inputs(0).has_staging() ? ", the next micro-batch" : "");
  if (planned.clones)
    llvm::errs() << llvm::format(
        "; recomputing %lld ops (%.1f%% of the step's FLOPs, %s)", (long long)planned.clones,
        100.0 * planned.recomputeFlops / planned.stepFlops, planned.strategy.c_str());
  llvm::errs() << "\n";
  return 0;
}

/// Refuses outputs (-o, the reports) that would replace the model, its external data, or one
/// another.
bool checkOutputsApart(const DriverOptions &driver, const memc::WeightStore &weights) {
  std::vector<memc::runtime::NamedPath> outputs, inputs = {{"the model", driver.modelPath}};
  if (driver.outputPath != "-")
    outputs.push_back({"-o", driver.outputPath});
  if (!driver.reportJson.empty())
    outputs.push_back({"--report-json", driver.reportJson});
  if (!driver.reportSvg.empty())
    outputs.push_back({"--report-svg", driver.reportSvg});
  std::set<std::string> dataFiles;
  for (const memc::StoredTensor &tensor : weights.tensors())
    if (!tensor.file.empty() && dataFiles.insert(tensor.file).second)
      inputs.push_back({"the model's external data", tensor.file});
  std::string error;
  if (memc::runtime::checkDistinctFiles(outputs, inputs, error))
    return true;
  llvm::errs() << "memc: error: " << error << "\n";
  return false;
}

/// Prints the IR and the one-line summary.
int printImported(const DriverOptions &driver, mlir::ModuleOp module,
                  std::chrono::steady_clock::time_point start) {
  if (!writeTextOutput(driver.outputPath, [&](llvm::raw_ostream &os) { module->print(os); }))
    return 1;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  printSummary(driver, memc::summarizeModel(module), seconds);
  return 0;
}

/// --explain-memory: the ladder on stdout, and as JSON and SVG where asked; no program.
int explainMemory(const DriverOptions &driver, const std::vector<std::string> &arguments) {
  memc::MemoryLadder ladder = planMemoryLadder(driver, arguments);
  memc::printMemoryLadder(ladder, llvm::outs());
  llvm::outs().flush();
  if (!driver.reportJson.empty() && !writeTextOutput(driver.reportJson, [&](llvm::raw_ostream &os) {
        memc::writeMemoryLadderJson(ladder, os);
      }))
    return 1;
  if (!driver.reportSvg.empty() && !writeTextOutput(driver.reportSvg, [&](llvm::raw_ostream &os) {
        memc::writeMemoryLadderSvg(ladder, os);
      }))
    return 1;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) { memc::runtime::reportOutOfMemoryAndExit("memc"); });
  llvm::install_out_of_memory_new_handler(); // operator new reports through the handler above
  DriverOptions driver;
  if (!parseDriverOptions(argc, argv, driver))
    return 1;
  std::vector<std::string> arguments(argv + 1, argv + argc);
  if (driver.explainMemory)
    return explainMemory(driver, arguments);
  // Flags memc chooses by planning, then compiled as if given.
  std::optional<std::vector<std::string>> chosen;
  if (driver.microBatchAuto)
    chosen = chooseMicroBatch(driver, arguments);
  else if (driver.fitAuto)
    chosen = chooseFit(driver, arguments);
  if ((driver.microBatchAuto || driver.fitAuto) &&
      (!chosen || !parseDriverArguments(arguments = *chosen, driver)))
    return 1;
  auto start = std::chrono::steady_clock::now();
  const memc::PipelineOptions &options = driver.pipeline;

  MLIRContext context;
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
    printDiagnostic(diag);
    return success();
  });
  FailureOr<memc::CompiledModel> compiled = memc::compileModel(context, driver.modelPath, options);
  if (failed(compiled) || !checkOutputsApart(driver, compiled->weights))
    return 1;
  if (options.mode == memc::CompileMode::Import)
    return printImported(driver, *compiled->module, start);

  const memc::BudgetedPlan &planned = *compiled->planned;
  for (const std::string &note : planned.notes)
    llvm::errs() << "memc: note: " << note << "\n";
  if (!emitReports(driver, planned))
    return 1;
  if (!planned.fits) {
    // What would fit is planned before it is offered (training; inference has no variants):
    // seconds for a large model, so the wait is announced.
    if (options.mode == memc::CompileMode::Train)
      llvm::errs() << "memc: note: the budget of "
                   << memc::formatBytes(*options.budget.budgetBytes)
                   << " is not met; planning which precision, 8-bit states, ZeRO stage and "
                      "offload would meet it\n";
    std::string advice =
        options.mode == memc::CompileMode::Train
            ? plannedBudgetAdvice(driver, arguments,
                                  (*compiled->module)->hasAttr(memc::kSymbolicBatchAttr))
            : std::string();
    llvm::errs() << "memc: error: "
                 << memc::infeasibleBudgetMessage(context, planned, options, advice) << "\n";
    return 1;
  }
  for (const std::string &warning : compiled->warnings)
    llvm::errs() << "memc: warning: " << warning << "\n";
  return options.mode == memc::CompileMode::Infer ? writeInference(driver, *compiled, argv[0])
                                                  : writeTraining(driver, *compiled, argv[0]);
}
