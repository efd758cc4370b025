//===- PlanProbe.cpp - plan a variant of the command line, quietly --------===//
#include "tools/memc/PlanProbe.h"
#include "tools/memc/Flags.h"

#include "compiler/pipeline/Pipeline.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <unistd.h>

namespace {

/// Whatever is written to stderr (flag errors print there directly) while it lives goes to a
/// temporary file instead; text() stops capturing and returns it.
class StderrCapture {
public:
  StderrCapture() {
    llvm::errs().flush();
    file = std::tmpfile();
    saved = file ? ::dup(STDERR_FILENO) : -1;
    if (saved >= 0)
      ::dup2(::fileno(file), STDERR_FILENO);
  }
  ~StderrCapture() { text(); }
  std::string text() {
    if (saved < 0)
      return captured;
    llvm::errs().flush();
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    saved = -1;
    std::rewind(file);
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file)) > 0;)
      captured.append(buffer, n);
    std::fclose(file);
    return captured;
  }

private:
  std::FILE *file = nullptr;
  int saved = -1;
  std::string captured;
};

/// The first "memc: error: " line of `text`, without the prefix.
std::string firstError(const std::string &text) {
  const std::string prefix = "memc: error: ";
  size_t at = text.find(prefix);
  if (at == std::string::npos)
    return text.empty() ? "" : text.substr(0, text.find('\n'));
  size_t begin = at + prefix.size();
  return text.substr(begin, text.find('\n', begin) - begin);
}

} // namespace

PlanProbe probePlan(const std::vector<std::string> &arguments) {
  PlanProbe probe;
  StderrCapture capture;
  DriverOptions driver;
  if (!parseDriverArguments(arguments, driver)) {
    probe.error = firstError(capture.text());
    return probe;
  }
  memc::PipelineOptions options = driver.pipeline;
  options.planStepOnly = true;
  options.budget.progress = nullptr;
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  mlir::ScopedDiagnosticHandler diagnostics(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && probe.error.empty())
      probe.error = diag.str();
    return mlir::success();
  });
  mlir::FailureOr<memc::CompiledModel> compiled =
      memc::compileModel(context, driver.modelPath, options);
  if (failed(compiled) || !compiled->planned) {
    if (probe.error.empty())
      probe.error = firstError(capture.text());
    return probe;
  }
  probe.memory = memc::buildMemoryReport(*compiled->planned, options.budget.budgetBytes);
  return probe;
}

std::vector<std::string> withFlag(std::vector<std::string> arguments, const std::string &flag,
                                  const std::string &value) {
  arguments = argumentsWithout(arguments, {flag});
  arguments.push_back("--" + flag);
  arguments.push_back(value);
  return arguments;
}
