//===- OnnxConformance.cpp - the ONNX backend tests through memc ----------===//
//
// memc-conformance DIR...
//
// Runs the ONNX backend test models (Debian's libonnx-testdata: each test is a directory with
// model.onnx and test_data_set_*/{input,output}_N.pb) through import -> plan -> CPU runtime and
// compares the outputs at the suite's tolerances (rtol 1e-3, atol 1e-7; a bf16 output's last
// place, see compare). A test is skipped when
// it needs something memc does not support (an op, an attribute, an element type, an opset),
// with the reason. memc's shapes are static, so the harness binds every input's shape from the
// test data and passes small integer inputs (shapes, axes) as constants.
// Prints "N passed, N failed, N skipped"; exits 1 if any test failed.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/NodeImporter.h"
#include "compiler/importer/OnnxImporter.h"
#include "compiler/importer/OnnxTypes.h"
#include "compiler/importer/WeightStore.h"
#include "compiler/lowering/PlanBuilder.h"
#include "compiler/lowering/ProgramWriter.h"
#include "compiler/pipeline/Pipeline.h"
#include "runtime/device/AvailableDevices.h"
#include "runtime/device/DeviceRegistry.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/PlanLoader.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace memc;

namespace {

enum class Outcome { Pass, Fail, Skip };

struct Result {
  Outcome outcome;
  std::string reason;
};

bool readProto(const fs::path &path, google::protobuf::MessageLite &message) {
  std::ifstream in(path, std::ios::binary);
  return in && message.ParseFromIstream(&in);
}

std::vector<fs::path> sortedEntries(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> entries;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().rfind(prefix, 0) == 0)
      entries.push_back(entry.path());
  // input_10 sorts after input_9.
  std::sort(entries.begin(), entries.end(), [](const fs::path &a, const fs::path &b) {
    std::string x = a.stem().string(), y = b.stem().string();
    return x.size() != y.size() ? x.size() < y.size() : x < y;
  });
  return entries;
}

bool runtimeDType(int32_t onnxType, runtime::DType &out) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: out = runtime::DType::F32; return true;
  case onnx::TensorProto::FLOAT16: out = runtime::DType::F16; return true;
  case onnx::TensorProto::BFLOAT16: out = runtime::DType::BF16; return true;
  case onnx::TensorProto::INT64: out = runtime::DType::I64; return true;
  case onnx::TensorProto::INT32: out = runtime::DType::I32; return true;
  case onnx::TensorProto::BOOL: out = runtime::DType::Bool; return true;
  default: return false;
  }
}

/// The element type the graph declares for its input or output `name`; UNDEFINED if none.
int32_t declaredElementType(const onnx::GraphProto &graph, const std::string &name) {
  for (const auto *infos : {&graph.input(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *infos)
      if (info.name() == name)
        return info.type().tensor_type().elem_type();
  return onnx::TensorProto::UNDEFINED;
}

/// A test-data tensor as a host array, for a graph value declared `declaredType`; false if memc
/// has no such element type. numpy has no bfloat16, so ONNX's generator stores bfloat16 test
/// data as UINT16 tensors of its bits: those are bf16 where the graph says BFLOAT16.
bool toHostArray(const onnx::TensorProto &tensor, int32_t declaredType,
                 runtime::HostArray &array, std::string &why) {
  bool bfloat16Bits = tensor.data_type() == onnx::TensorProto::UINT16 &&
                      declaredType == onnx::TensorProto::BFLOAT16;
  if (bfloat16Bits) {
    array.dtype = runtime::DType::BF16;
  } else if (!runtimeDType(tensor.data_type(), array.dtype)) {
    why = "element type " + onnxDataTypeName(tensor.data_type());
    return false;
  }
  array.shape.assign(tensor.dims().begin(), tensor.dims().end());
  uint64_t count = 1;
  for (int64_t dim : array.shape)
    count *= static_cast<uint64_t>(dim);
  size_t size = runtime::elementSize(array.dtype);
  if (tensor.has_raw_data()) {
    array.bytes.assign(tensor.raw_data().begin(), tensor.raw_data().end());
  } else if (size == 2) {
    // f16, bf16 and UINT16 typed fields hold each element's bits in an int32_data entry.
    for (int32_t bits : tensor.int32_data()) {
      array.bytes.push_back(static_cast<uint8_t>(bits & 0xff));
      array.bytes.push_back(static_cast<uint8_t>((bits >> 8) & 0xff));
    }
  } else {
    std::string error;
    mlir::FailureOr<HostTensor> decoded = decodeTensorProto(tensor, error);
    if (mlir::failed(decoded)) {
      why = error;
      return false;
    }
    array.bytes.resize(count * size);
    for (uint64_t i = 0; i < count; ++i) {
      uint8_t *p = array.bytes.data() + i * size;
      if (array.dtype == runtime::DType::F32) {
        float v = static_cast<float>(decoded->floatAt(i));
        std::memcpy(p, &v, 4);
      } else if (array.dtype == runtime::DType::I64) {
        int64_t v = decoded->intAt(i);
        std::memcpy(p, &v, 8);
      } else if (array.dtype == runtime::DType::I32) {
        int32_t v = static_cast<int32_t>(decoded->intAt(i));
        std::memcpy(p, &v, 4);
      } else if (array.dtype == runtime::DType::Bool) {
        *p = decoded->intAt(i) != 0;
      }
    }
  }
  if (array.bytes.size() != count * size) {
    why = "test data size mismatch";
    return false;
  }
  return true;
}

/// Reads `element` of an array as a double.
double valueAt(const runtime::HostArray &array, uint64_t i) {
  const uint8_t *p = array.bytes.data() + i * runtime::elementSize(array.dtype);
  switch (array.dtype) {
  case runtime::DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
  case runtime::DType::I64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
  case runtime::DType::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case runtime::DType::Bool: return *p;
  case runtime::DType::F16:
  case runtime::DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    llvm::APFloat value(array.dtype == runtime::DType::F16 ? llvm::APFloat::IEEEhalf()
                                                           : llvm::APFloat::BFloat(),
                        llvm::APInt(16, bits));
    return value.convertToDouble();
  }
  default: // storage-only types: no kernel computes them
    return 0;
  }
}

bool compare(const runtime::HostArray &actual, const runtime::HostArray &expected,
             const std::string &name, std::string &why) {
  if (actual.dtype != expected.dtype || actual.shape != expected.shape) {
    why = "output '" + name + "' is " + runtime::dtypeString(actual.dtype) +
          runtime::shapeString(actual.shape) + ", expected " +
          runtime::dtypeString(expected.dtype) + runtime::shapeString(expected.shape);
    return false;
  }
  bool exact = !kernels::isFloating(actual.dtype);
  // A bf16 output may differ from the expected one by a unit in its last place (2^-7 relative
  // at most; the suite's rtol is finer than bf16's steps, f16's are finer than it): onnx 1.12's
  // generator truncated FLOAT->BFLOAT16 casts, where memc rounds to nearest even as PyTorch and
  // ONNX Runtime do.
  double rtol = actual.dtype == runtime::DType::BF16 ? std::ldexp(1.0, -7) : 1e-3;
  uint64_t count = actual.bytes.size() / runtime::elementSize(actual.dtype);
  for (uint64_t i = 0; i < count; ++i) {
    double a = valueAt(actual, i), e = valueAt(expected, i);
    bool equal = exact ? a == e
                       : (std::isnan(a) && std::isnan(e)) || a == e ||
                             std::abs(a - e) <= 1e-7 + rtol * std::abs(e);
    if (!equal) {
      why = "output '" + name + "' element " + std::to_string(i) + ": " + std::to_string(a) +
            " vs expected " + std::to_string(e);
      return false;
    }
  }
  return true;
}

/// Import errors that mean "memc does not support this" rather than "memc is wrong".
bool isUnsupported(const std::string &message) {
  for (const char *marker :
       {"unsupported", "does not support", "not supported", "memc imports opsets",
        "must be a constant", "memc has no", "does not expose", "does not return",
        "keeps dropout masks", "builds running-statistics", "no shape", "is not a tensor",
        "symbolic shape", "cannot decode", "before opset 13"})
    if (message.find(marker) != std::string::npos)
      return true;
  return false;
}

class ConformanceRunner {
public:
  explicit ConformanceRunner(runtime::Device &device) : device(device) {}
  Result run(const fs::path &testDir);

private:
  Result runDataSet(const fs::path &testDir, const fs::path &dataSet);
  Result runDataSet(const fs::path &testDir, const fs::path &dataSet,
                    bool allSmallInputsConstant);
  runtime::Device &device;
};

Result ConformanceRunner::run(const fs::path &testDir) {
  std::vector<fs::path> dataSets = sortedEntries(testDir, "test_data_set_");
  if (dataSets.empty())
    return {Outcome::Skip, "no test data"};
  for (const fs::path &dataSet : dataSets) {
    Result result = runDataSet(testDir, dataSet);
    if (result.outcome != Outcome::Pass)
      return result;
  }
  return {Outcome::Pass, ""};
}

/// True if a Dropout node runs in training mode with a nonzero ratio (values from initializers,
/// where the harness has put the test's small inputs).
bool hasRandomDropout(const onnx::ModelProto &model) {
  auto scalar = [&](const std::string &name, double fallback) {
    for (const onnx::TensorProto &tensor : model.graph().initializer())
      if (tensor.name() == name) {
        std::string error;
        mlir::FailureOr<HostTensor> value = decodeTensorProto(tensor, error);
        if (mlir::succeeded(value) && value->numElements() == 1)
          return value->isFloating() ? value->floatAt(0) : double(value->intAt(0));
      }
    return fallback;
  };
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (node.op_type() != "Dropout" || node.input_size() < 3 || node.input(2).empty())
      continue;
    double ratio = node.input_size() > 1 && !node.input(1).empty() ? scalar(node.input(1), 0.5) : 0.5;
    if (scalar(node.input(2), 0) != 0 && ratio != 0)
      return true;
  }
  return false;
}

/// Import errors that a test's run-time inputs cause only because memc needs them constant.
bool needsConstantInputs(const std::string &message) {
  return message.find("must be a constant") != std::string::npos ||
         message.find("must be constants") != std::string::npos;
}

Result ConformanceRunner::runDataSet(const fs::path &testDir, const fs::path &dataSet) {
  Result result = runDataSet(testDir, dataSet, /*allSmallInputsConstant=*/false);
  if (result.outcome != Outcome::Pass && needsConstantInputs(result.reason))
    result = runDataSet(testDir, dataSet, /*allSmallInputsConstant=*/true);
  return result;
}

Result ConformanceRunner::runDataSet(const fs::path &testDir, const fs::path &dataSet,
                                     bool allSmallInputsConstant) {
  onnx::ModelProto model;
  if (!readProto(testDir / "model.onnx", model))
    return {Outcome::Fail, "cannot read model.onnx"};
  // Graph inputs, in order, that are not initializers, paired with their test data.
  std::set<std::string> initializers;
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    initializers.insert(tensor.name());
  std::vector<std::string> inputNames;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    if (!initializers.count(input.name()))
      inputNames.push_back(input.name());
  std::vector<fs::path> inputFiles = sortedEntries(dataSet, "input_");
  if (inputFiles.size() != inputNames.size())
    return {Outcome::Skip, "test data has " + std::to_string(inputFiles.size()) +
                               " inputs for " + std::to_string(inputNames.size()) +
                               " graph inputs (optional inputs)"};

  ImportOptions options;
  runtime::NamedArrays inputs;
  for (size_t i = 0; i < inputFiles.size(); ++i) {
    onnx::TensorProto tensor;
    if (!readProto(inputFiles[i], tensor))
      return {Outcome::Fail, "cannot read " + inputFiles[i].string()};
    tensor.set_name(inputNames[i]);
    bool small = tensor.dims_size() <= 1 && (tensor.dims_size() == 0 || tensor.dims(0) <= 64);
    bool integer = tensor.data_type() == onnx::TensorProto::INT64 ||
                   tensor.data_type() == onnx::TensorProto::INT32;
    if (small && (integer || allSmallInputsConstant)) {
      // Static shapes: small integer inputs (shapes, axes, bounds) become constants, and when
      // the model needs it (Range, Clip bounds) every small input does.
      *model.mutable_graph()->add_initializer() = tensor;
      continue;
    }
    runtime::HostArray array;
    std::string why;
    if (!toHostArray(tensor, declaredElementType(model.graph(), inputNames[i]), array, why))
      return {Outcome::Skip, "input " + why};
    options.inputShapes[inputNames[i]] = array.shape;
    inputs.emplace_back(inputNames[i], std::move(array));
  }
  if (hasRandomDropout(model))
    return {Outcome::Skip, "dropout in training mode: the expected output depends on the "
                           "reference implementation's random numbers"};
  // The process id keeps concurrent runs (several checkouts on one machine) apart.
  fs::path prepared = fs::temp_directory_path() /
                      ("memc-conformance-" + std::to_string(::getpid()) + "-" +
                       testDir.filename().string() + ".onnx");
  {
    std::ofstream out(prepared, std::ios::binary | std::ios::trunc);
    if (!model.SerializeToOstream(&out))
      return {Outcome::Fail, "cannot write the prepared model"};
  }

  mlir::MLIRContext context;
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
    return mlir::success();
  });
  // The weight store reads initializers from the prepared file until the run is over.
  struct RemoveOnExit {
    fs::path path;
    ~RemoveOnExit() { fs::remove(path); }
  } removePrepared{prepared};
  WeightStore weights;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importOnnxModel(context, prepared.string(), options, &weights);
  if (!module) {
    std::string reason = diagnostics.substr(0, diagnostics.find('\n'));
    // For unsupported ops, the first listed op type says more than the count.
    if (size_t list = diagnostics.find(":\n  "); list != std::string::npos &&
        reason.find("unsupported op type") != std::string::npos)
      reason = "unsupported op " + diagnostics.substr(list + 4, diagnostics.find(':', list + 4) - list - 4);
    // The harness binds each input's shape from its test data; where a model declares another
    // (test_castlike_*BFLOAT16*_expanded in onnx 1.12), the test contradicts itself.
    if (diagnostics.find("does not fit the model's shape") != std::string::npos)
      return {Outcome::Skip, "test data contradict the model's input shapes: " + reason};
    return {isUnsupported(diagnostics) ? Outcome::Skip : Outcome::Fail, "import: " + reason};
  }
  mlir::PassManager pm(&context);
  buildCanonicalizationPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return {Outcome::Fail, "canonicalization: " + diagnostics};
  auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward");
  mlir::FailureOr<plan::Plan> plan = buildPlan(forward, testDir.filename().string());
  if (mlir::failed(plan))
    return {Outcome::Fail, "plan: " + diagnostics};

  std::string error, weightBytes;
  std::unique_ptr<runtime::LoadedPlan> loaded = runtime::validatePlan(*plan, device, error);
  if (!loaded)
    return {Outcome::Fail, "plan rejected: " + error};
  if (!serializeWeights(*plan, weights, weightBytes, error))
    return {Outcome::Fail, "weights: " + error};
  runtime::SafetensorsFile weightFile;
  if (!weightFile.parse(weightBytes, error))
    return {Outcome::Fail, "weights: " + error};
  std::unique_ptr<runtime::Executor> executor =
      runtime::Executor::create(std::move(loaded), device, {}, error);
  runtime::NamedArrays outputs;
  if (!executor || !executor->loadParameters(weightFile, error) ||
      !executor->bindInputs(inputs, error) || !executor->run(error) ||
      !executor->readOutputs(outputs, error))
    return {Outcome::Fail, "run: " + error};

  std::vector<fs::path> outputFiles = sortedEntries(dataSet, "output_");
  if (outputFiles.size() != outputs.size())
    return {Outcome::Fail, "memc produced " + std::to_string(outputs.size()) + " outputs, the test expects " +
                               std::to_string(outputFiles.size())};
  for (size_t i = 0; i < outputFiles.size(); ++i) {
    onnx::TensorProto tensor;
    runtime::HostArray expected;
    std::string why;
    if (!readProto(outputFiles[i], tensor))
      return {Outcome::Fail, "cannot read " + outputFiles[i].string()};
    int32_t declared = i < static_cast<size_t>(model.graph().output_size())
                           ? model.graph().output(i).type().tensor_type().elem_type()
                           : int32_t(onnx::TensorProto::UNDEFINED);
    if (!toHostArray(tensor, declared, expected, why))
      return {Outcome::Skip, "output " + why};
    if (!compare(outputs[i].second, expected, outputs[i].first, why))
      return {Outcome::Fail, why};
  }
  return {Outcome::Pass, ""};
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: memc-conformance DIR...\n";
    return 1;
  }
  runtime::DeviceRegistry registry;
  runtime::registerAvailableDevices(registry);
  std::string error;
  std::unique_ptr<runtime::Device> device = registry.create("cpu", error);
  if (!device) {
    std::cerr << "memc-conformance: " << error << "\n";
    return 1;
  }
  ConformanceRunner runner(*device);
  int passed = 0, failedCount = 0, skipped = 0;
  std::map<std::string, int> skipReasons;
  for (int i = 1; i < argc; ++i) {
    fs::path root = argv[i];
    if (!fs::is_directory(root)) {
      std::cerr << "memc-conformance: " << root << " is not a directory\n";
      return 1;
    }
    for (const fs::path &test : sortedEntries(root, "test_")) {
      Result result = runner.run(test);
      std::string name = root.filename().string() + "/" + test.filename().string();
      switch (result.outcome) {
      case Outcome::Pass:
        ++passed;
        break;
      case Outcome::Fail:
        ++failedCount;
        std::cout << "FAIL " << name << ": " << result.reason << "\n";
        break;
      case Outcome::Skip:
        ++skipped;
        std::cout << "SKIP " << name << ": " << result.reason << "\n";
        ++skipReasons[result.reason.substr(0, result.reason.find(':', 8))];
        break;
      }
    }
  }
  std::vector<std::pair<int, std::string>> reasons;
  for (auto &[reason, count] : skipReasons)
    reasons.emplace_back(count, reason);
  std::sort(reasons.rbegin(), reasons.rend());
  std::cout << "Top skip reasons:\n";
  for (size_t i = 0; i < reasons.size() && i < 10; ++i)
    std::cout << "  " << reasons[i].first << "  " << reasons[i].second << "\n";
  std::cout << passed << " passed, " << failedCount << " failed, " << skipped << " skipped\n";
  return failedCount == 0 ? 0 : 1;
}
