//===- TrainingTest.cpp - training programs reproduce PyTorch's training --===//
//
// For each case of data/cases.json (recorded with PyTorch by make_training_references.py) and
// of data/sixteen_bit_cases.json (bf16 and f16 models, make_sixteen_bit_references.py):
// memc builds a training program from a fixture with the case's flags, and the program trains
// on the case's data set with --log, --dump-grads and --save. The first step's gradients must
// name exactly PyTorch's trainable parameters, each within 1e-4 relative L2 error of
// PyTorch's; every step's loss must be within 1e-4 relative of PyTorch's loss at that step;
// and the change of every saved tensor (parameters and buffers) over the steps must be within
// the case's tolerance of PyTorch's (5e-4 relative, more where float32 rounding alone moves
// PyTorch's own update further; see the script).
// Then bad inputs: each is refused with exit code 1 and a message naming the problem.
//
//===----------------------------------------------------------------------===//
#include "../runtime/HostArrays.h"
#include "TrainingTestSupport.h"
#include "runtime/io/CheckpointIntegrity.h"
#include "runtime/io/Files.h"
#include "runtime/io/Json.h"
#include "runtime/io/Npz.h"
#include "runtime/io/Safetensors.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

using namespace memc::runtime;
using namespace memc::test;

namespace {

constexpr double kGradientTolerance = 1e-4;
constexpr double kLossTolerance = 1e-4;
constexpr const char *kGradientPrefix = "grad/";
constexpr const char *kInitialPrefix = "initial/";

const HostArray *find(const NamedArrays &arrays, const std::string &name) {
  for (const auto &[key, array] : arrays)
    if (key == name)
      return &array;
  return nullptr;
}

HostArray *find(NamedArrays &arrays, const std::string &name) {
  return const_cast<HostArray *>(find(static_cast<const NamedArrays &>(arrays), name));
}

/// ||actual - expected||₂ / ||expected||₂ (the absolute norm when expected is zero).
double relativeError(const std::vector<double> &actual, const std::vector<double> &expected) {
  double difference = 0, norm = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    difference += (actual[i] - expected[i]) * (actual[i] - expected[i]);
    norm += expected[i] * expected[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
}

std::vector<double> values(const float *data, size_t count) {
  return std::vector<double>(data, data + count);
}

std::vector<double> values(const HostArray &array) {
  return values(array.as<float>(), array.bytes.size() / sizeof(float));
}

/// The names of `arrays` that start with `prefix`, without it, sorted.
std::vector<std::string> namesUnder(const NamedArrays &arrays, const std::string &prefix) {
  std::vector<std::string> names;
  for (const auto &[name, array] : arrays)
    if (name.rfind(prefix, 0) == 0)
      names.push_back(name.substr(prefix.size()));
  std::sort(names.begin(), names.end());
  return names;
}

struct TrainingCase {
  std::string name;
  std::string model;
  /// The optimizer configuration: the reference's `losses/<config>` and `update/<config>/*`.
  std::string config;
  int64_t steps = 0;
  std::vector<std::string> flags;
  /// Data-parallel cases (memc --world-size): the ranks mpirun starts; 1 runs the program alone.
  int64_t ranks = 1;
  double updateTolerance = 0;
  /// Larger tolerances for the updates of some tensors.
  std::map<std::string, double> updateTolerances;
  /// Larger tolerances for the first gradients of some tensors (gradients that are rounding
  /// noise in PyTorch itself, such as a conv bias that a BatchNorm cancels).
  std::map<std::string, double> gradientTolerances;
  /// Each loss's largest relative error (the helper's round trip asks for 1e-5).
  double lossTolerance = kLossTolerance;
  /// Plain-export cases (plain_cases.json): the model whose data and PyTorch losses they use,
  /// the warnings memc must print, and whether the losses must then match PyTorch's or differ.
  std::string reference;
  std::vector<std::string> warnings;
  bool lossesMatch = true;
  /// Why cases.json could not be read; the one case then fails with it.
  std::string loadError;
};

/// gtest prints a failing case's parameter: its name, not its bytes.
void PrintTo(const TrainingCase &trainingCase, std::ostream *os) { *os << trainingCase.name; }

/// The optional loss_tolerance and gradient_tolerances of a case.
bool parseOptionalTolerances(const JsonValue &entry, TrainingCase &out) {
  if (const JsonValue *tolerance = entry.find("loss_tolerance")) {
    if (tolerance->kind() != JsonValue::Kind::Number)
      return false;
    out.lossTolerance = tolerance->number();
  }
  if (const JsonValue *tolerances = entry.find("gradient_tolerances")) {
    if (!tolerances->isObject())
      return false;
    for (const auto &[parameter, value] : tolerances->members()) {
      if (value.kind() != JsonValue::Kind::Number)
        return false;
      out.gradientTolerances[parameter] = value.number();
    }
  }
  return true;
}

/// Strings `list` into `out`; false when it is not a list of strings.
bool parseStrings(const JsonValue *list, std::vector<std::string> &out) {
  if (!list || !list->isArray())
    return false;
  for (const JsonValue &item : list->elements()) {
    if (!item.isString())
      return false;
    out.push_back(item.string());
  }
  return true;
}

/// What every case has: name, model, config (strings), steps (integer), flags (strings), and
/// optionally loss_tolerance and gradient_tolerances.
bool parseCommonFields(const JsonValue &entry, TrainingCase &out) {
  const JsonValue *name = entry.find("name"), *model = entry.find("model"),
                  *config = entry.find("config"), *steps = entry.find("steps");
  if (!name || !name->isString() || !model || !model->isString() || !config ||
      !config->isString() || !steps || !steps->isInteger())
    return false;
  out.name = name->string();
  out.model = out.reference = model->string();
  out.config = config->string();
  out.steps = steps->integer();
  if (const JsonValue *ranks = entry.find("ranks")) {
    if (!ranks->isInteger() || ranks->integer() < 1)
      return false;
    out.ranks = ranks->integer();
  }
  return parseStrings(entry.find("flags"), out.flags) && parseOptionalTolerances(entry, out);
}

/// A case of cases.json: the common fields, update_tolerance (number) and update_tolerances
/// (object of numbers).
bool parseCase(const JsonValue &entry, TrainingCase &out) {
  const JsonValue *tolerance = entry.find("update_tolerance"),
                  *tolerances = entry.find("update_tolerances");
  if (!parseCommonFields(entry, out) || !tolerance ||
      tolerance->kind() != JsonValue::Kind::Number || !tolerances || !tolerances->isObject())
    return false;
  out.updateTolerance = tolerance->number();
  for (const auto &[parameter, value] : tolerances->members()) {
    if (value.kind() != JsonValue::Kind::Number)
      return false;
    out.updateTolerances[parameter] = value.number();
  }
  return true;
}

/// A plain-export case: the common fields, reference (the model whose data and losses it
/// uses), warnings (strings) and losses ("match" or "differ").
bool parsePlainCase(const JsonValue &entry, TrainingCase &out) {
  const JsonValue *reference = entry.find("reference"), *losses = entry.find("losses");
  if (!parseCommonFields(entry, out) || !reference || !reference->isString() || !losses ||
      !losses->isString() || (losses->string() != "match" && losses->string() != "differ"))
    return false;
  out.reference = reference->string();
  out.lossesMatch = losses->string() == "match";
  return parseStrings(entry.find("warnings"), out.warnings);
}

/// The cases of data/FILE, each read by `parse`; `fields` says what a case needs.
std::vector<TrainingCase> loadCases(const std::string &file,
                                    bool (*parse)(const JsonValue &, TrainingCase &),
                                    const std::string &fields) {
  std::string path = kData + "/" + file, error;
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  JsonValue document;
  std::vector<TrainingCase> cases;
  if (!in.is_open())
    error = "cannot read " + path;
  else if (!parseJson(text, document, error))
    error = path + ": " + error;
  else if (!document.isArray())
    error = path + ": expected an array of cases";
  for (size_t i = 0; error.empty() && i < document.elements().size(); ++i) {
    TrainingCase trainingCase;
    if (parse(document.elements()[i], trainingCase))
      cases.push_back(std::move(trainingCase));
    else
      error = path + ": case " + std::to_string(i) + " needs " + fields;
  }
  if (!error.empty()) {
    TrainingCase unreadable;
    unreadable.name = "unreadable_cases";
    unreadable.loadError = error;
    return {unreadable};
  }
  return cases;
}

/// The loss of every line of a training log, in order; checks that steps count from 1.
std::vector<double> readLogLosses(const std::string &path) {
  std::ifstream in(path);
  std::vector<double> losses;
  std::string line, error;
  while (std::getline(in, line)) {
    JsonValue entry;
    EXPECT_TRUE(parseJson(line, entry, error)) << path << ": " << error << "\n" << line;
    const JsonValue *step = entry.find("step"), *loss = entry.find("loss");
    if (!step || !step->isInteger() || !loss || loss->kind() != JsonValue::Kind::Number) {
      ADD_FAILURE() << path << ": a line without integer step and numeric loss: " << line;
      continue;
    }
    EXPECT_EQ(step->integer(), static_cast<int64_t>(losses.size()) + 1) << line;
    losses.push_back(loss->number());
  }
  return losses;
}

/// The largest device memory any step of the log measured (peak_bytes).
uint64_t readLogPeak(const std::string &path) {
  std::ifstream in(path);
  uint64_t peak = 0;
  std::string line, error;
  while (std::getline(in, line)) {
    JsonValue entry;
    if (!parseJson(line, entry, error))
      continue; // readLogLosses reports it
    const JsonValue *bytes = entry.find("peak_bytes");
    EXPECT_TRUE(bytes && bytes->isInteger()) << line;
    if (bytes && bytes->isInteger())
      peak = std::max<uint64_t>(peak, bytes->integer());
  }
  return peak;
}

bool hasFlag(const std::vector<std::string> &flags, const std::string &flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

/// The value of --vram-budget in the cases' spelling (NKiB), in bytes; 0 without one.
uint64_t budgetOf(const std::vector<std::string> &flags) {
  auto it = std::find(flags.begin(), flags.end(), "--vram-budget");
  if (it == flags.end() || it + 1 == flags.end())
    return 0;
  std::string text = *(it + 1);
  EXPECT_EQ(text.substr(text.size() - 3), "KiB") << "the cases give budgets in KiB";
  return std::stoull(text.substr(0, text.size() - 3)) * 1024;
}

class TrainingTest : public testing::TestWithParam<TrainingCase> {
protected:
  /// The first step's gradients name PyTorch's trainable parameters and match PyTorch's.
  void checkGradients(const NamedArrays &reference, const std::string &path);
  /// Every logged loss matches PyTorch's at that step.
  void checkLosses(const NamedArrays &reference, const std::string &logPath);
  /// Every saved tensor changed as PyTorch's did.
  void checkUpdates(const NamedArrays &reference, const std::string &savedPath);
};

void TrainingTest::checkGradients(const NamedArrays &reference, const std::string &path) {
  NamedArrays gradients;
  std::string error;
  ASSERT_TRUE(readNpz(path, gradients, error)) << error;
  std::vector<std::string> expectedNames = namesUnder(reference, kGradientPrefix);
  EXPECT_EQ(namesUnder(gradients, ""), expectedNames)
      << "the dumped gradients name other parameters than PyTorch's";
  double worst = 0;
  std::string worstName;
  for (const std::string &name : expectedNames) {
    const HostArray *expected = find(reference, kGradientPrefix + name);
    const HostArray *actual = find(gradients, name);
    if (!actual)
      continue;
    ASSERT_EQ(actual->dtype, DType::F32) << name;
    ASSERT_EQ(actual->shape, expected->shape) << name;
    double relative = relativeError(values(*actual), values(*expected));
    auto custom = GetParam().gradientTolerances.find(name);
    double tolerance =
        custom == GetParam().gradientTolerances.end() ? kGradientTolerance : custom->second;
    EXPECT_LE(relative, tolerance) << "gradient of '" << name << "'";
    if (relative >= worst) {
      worst = relative;
      worstName = name;
    }
  }
  RecordProperty("max_gradient_error", std::to_string(worst));
  std::printf("%s: largest gradient error %.3g ('%s')\n", GetParam().name.c_str(), worst,
              worstName.c_str());
}

/// Each logged loss's relative error from PyTorch's loss at that step (`losses/<config>`).
std::vector<double> lossErrors(const NamedArrays &reference, const TrainingCase &trainingCase,
                               const std::string &logPath) {
  const HostArray *losses = find(reference, "losses/" + trainingCase.config);
  EXPECT_TRUE(losses) << "the reference has no losses/" << trainingCase.config;
  if (!losses)
    return {};
  EXPECT_EQ(losses->shape, std::vector<int64_t>{trainingCase.steps});
  std::vector<double> logged = readLogLosses(logPath);
  EXPECT_EQ(static_cast<int64_t>(logged.size()), trainingCase.steps) << "log lines";
  std::vector<double> errors;
  for (int64_t step = 0; step < std::min<int64_t>(trainingCase.steps, logged.size()); ++step) {
    double expected = losses->as<float>()[step];
    errors.push_back(std::abs(logged[step] - expected) / std::abs(expected));
  }
  return errors;
}

void TrainingTest::checkLosses(const NamedArrays &reference, const std::string &logPath) {
  const TrainingCase &trainingCase = GetParam();
  std::vector<double> errors = lossErrors(reference, trainingCase, logPath);
  ASSERT_EQ(static_cast<int64_t>(errors.size()), trainingCase.steps);
  double worst = 0;
  for (int64_t step = 0; step < trainingCase.steps; ++step) {
    EXPECT_LE(errors[step], trainingCase.lossTolerance) << "step " << step + 1;
    worst = std::max(worst, errors[step]);
  }
  RecordProperty("max_loss_error", std::to_string(worst));
  std::printf("%s: largest loss error %.3g\n", trainingCase.name.c_str(), worst);
}

void TrainingTest::checkUpdates(const NamedArrays &reference, const std::string &savedPath) {
  const TrainingCase &trainingCase = GetParam();
  SafetensorsFile saved;
  std::string error;
  ASSERT_TRUE(saved.open(savedPath, error)) << error;
  std::vector<std::string> savedNames;
  for (const SafetensorsTensor &tensor : saved.tensors())
    savedNames.push_back(tensor.name);
  std::sort(savedNames.begin(), savedNames.end());
  std::string updatePrefix = "update/" + trainingCase.config + "/";
  std::vector<std::string> expectedNames = namesUnder(reference, updatePrefix);
  EXPECT_EQ(savedNames, expectedNames) << "--save wrote other tensors than PyTorch's state";
  double worst = 0; // error / tolerance
  std::string worstName;
  for (const std::string &name : expectedNames) {
    const SafetensorsTensor *tensor = saved.find(name);
    const HostArray *initial = find(reference, kInitialPrefix + name);
    const HostArray *expected = find(reference, updatePrefix + name);
    if (!tensor)
      continue;
    ASSERT_TRUE(initial) << "the reference has no initial value of '" << name << "'";
    if (tensor->dtype == DType::I64) { // a count (num_batches_tracked): exact
      ASSERT_EQ(tensor->bytes.size(), expected->bytes.size()) << name;
      std::vector<int64_t> trained(tensor->bytes.size() / sizeof(int64_t));
      std::memcpy(trained.data(), tensor->bytes.data(), tensor->bytes.size());
      for (size_t i = 0; i < trained.size(); ++i)
        EXPECT_EQ(trained[i] - initial->as<int64_t>()[i], expected->as<int64_t>()[i])
            << "element " << i << " of '" << name << "' over " << trainingCase.steps << " steps";
      continue;
    }
    ASSERT_EQ(tensor->dtype, DType::F32) << name;
    ASSERT_EQ(tensor->shape, expected->shape) << name;
    std::vector<float> trained(tensor->bytes.size() / sizeof(float));
    std::memcpy(trained.data(), tensor->bytes.data(), tensor->bytes.size());
    std::vector<double> update = values(trained.data(), trained.size());
    std::vector<double> start = values(*initial), reference = values(*expected);
    for (size_t i = 0; i < update.size(); ++i) {
      // An inf (an additive mask's -inf) has no update, only a value to keep.
      if (!std::isfinite(start[i])) {
        EXPECT_EQ(update[i], start[i]) << "element " << i << " of '" << name << "' changed";
        update[i] = start[i] = reference[i] = 0;
      }
      update[i] -= start[i];
    }
    auto custom = trainingCase.updateTolerances.find(name);
    double tolerance = custom == trainingCase.updateTolerances.end() ? trainingCase.updateTolerance
                                                                     : custom->second;
    double relative = relativeError(update, reference);
    EXPECT_LE(relative, tolerance)
        << "update of '" << name << "' over " << trainingCase.steps << " steps";
    if (relative / tolerance >= worst) {
      worst = relative / tolerance;
      worstName = name;
    }
  }
  RecordProperty("max_update_error_over_tolerance", std::to_string(worst));
  std::printf("%s: largest update error / tolerance %.3g ('%s')\n", trainingCase.name.c_str(),
              worst, worstName.c_str());
}

TEST_P(TrainingTest, MatchesPyTorch) {
  const TrainingCase &trainingCase = GetParam();
  ASSERT_TRUE(trainingCase.loadError.empty()) << trainingCase.loadError;
  std::string dir = scratchDirectory(), output, error;
  std::string program = dir + "/train", log = dir + "/log.jsonl", grads = dir + "/grads.npz",
              trained = dir + "/trained.safetensors";
  ASSERT_EQ(run(memcCommand(trainingCase.model, trainingCase.flags, program), dir, output), 0)
      << output;
  // The memory cases exist to run with recomputation: make sure they do.
  bool memoryCase =
      hasFlag(trainingCase.flags, "--vram-budget") || hasFlag(trainingCase.flags, "--remat");
  if (memoryCase)
    EXPECT_NE(output.find("recomputing"), std::string::npos) << output;
  // A data-parallel case runs its ranks under mpirun; rank 0 logs, dumps and saves.
  std::string launcher = trainingCase.ranks > 1 ? mpirunCommand(trainingCase.ranks) : "";
  ASSERT_EQ(run(launcher + program + " --data " + kData + "/" + trainingCase.model + ".data.npz" +
                    " --steps " + std::to_string(trainingCase.steps) + " --log " + log +
                    " --dump-grads " + grads + " --save " + trained,
                dir, output),
            0)
      << output;
  // The budget holds as measured by the runtime, not only as planned.
  if (uint64_t budget = budgetOf(trainingCase.flags))
    EXPECT_LE(readLogPeak(log), budget);
  NamedArrays reference;
  ASSERT_TRUE(readNpz(kData + "/" + trainingCase.model + ".reference.npz", reference, error))
      << error;
  checkGradients(reference, grads);
  checkLosses(reference, log);
  checkUpdates(reference, trained);
}

constexpr const char *kCaseFields =
    "name, model, config (strings), steps (integer), flags (strings), update_tolerance "
    "(number), update_tolerances (object of numbers) and optionally loss_tolerance (number), "
    "gradient_tolerances (object of numbers) and ranks (integer)";

INSTANTIATE_TEST_SUITE_P(
    Cases, TrainingTest, testing::ValuesIn(loadCases("cases.json", parseCase, kCaseFields)),
    [](const testing::TestParamInfo<TrainingCase> &info) { return info.param.name; });

// Models exported in 16 bits (make_sixteen_bit_references.py) train on f32 master weights: the
// gradients memc dumps and the weights it saves are f32, as checkGradients and checkUpdates ask.
INSTANTIATE_TEST_SUITE_P(
    SixteenBitModels, TrainingTest,
    testing::ValuesIn(loadCases("sixteen_bit_cases.json", parseCase, kCaseFields)),
    [](const testing::TestParamInfo<TrainingCase> &info) { return info.param.name; });

/// The export helper's models exported by torch.onnx.export's defaults instead: memc prints
/// the warnings the case names, and its losses then match PyTorch's, or differ from them, as
/// the case says (make_training_references.py, PLAIN_EXPECTATIONS). A model that differs must
/// warn: nothing may train another model than PyTorch's in silence.
class PlainExportRoundTrip : public testing::TestWithParam<TrainingCase> {};

TEST_P(PlainExportRoundTrip, WarnsOrMatchesPyTorch) {
  const TrainingCase &trainingCase = GetParam();
  ASSERT_TRUE(trainingCase.loadError.empty()) << trainingCase.loadError;
  std::string dir = scratchDirectory(), output, error;
  std::string program = dir + "/train", log = dir + "/log.jsonl";
  ASSERT_EQ(run(memcCommand(trainingCase.model, trainingCase.flags, program), dir, output), 0)
      << output;
  for (const std::string &warning : trainingCase.warnings)
    EXPECT_NE(output.find(warning), std::string::npos) << "no warning '" << warning << "':\n"
                                                       << output;
  if (!trainingCase.lossesMatch)
    EXPECT_FALSE(trainingCase.warnings.empty()) << "a model that trains otherwise must warn";
  ASSERT_EQ(run(program + " --data " + kData + "/" + trainingCase.reference + ".data.npz" +
                    " --steps " + std::to_string(trainingCase.steps) + " --log " + log,
                dir, output),
            0)
      << output;
  NamedArrays reference;
  ASSERT_TRUE(readNpz(kData + "/" + trainingCase.reference + ".reference.npz", reference, error))
      << error;
  std::vector<double> errors = lossErrors(reference, trainingCase, log);
  ASSERT_EQ(static_cast<int64_t>(errors.size()), trainingCase.steps);
  double worst = *std::max_element(errors.begin(), errors.end());
  std::printf("%s: largest loss error %.3g\n", trainingCase.name.c_str(), worst);
  if (trainingCase.lossesMatch)
    EXPECT_LE(worst, trainingCase.lossTolerance);
  else
    EXPECT_GT(worst, trainingCase.lossTolerance)
        << "memc now trains this plain export as PyTorch does: say so in PLAIN_EXPECTATIONS";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlainExportRoundTrip,
    testing::ValuesIn(loadCases("plain_cases.json", parsePlainCase,
                                "name, model, reference, config (strings), steps (integer), flags "
                                "and warnings (strings), losses (\"match\" or \"differ\") and "
                                "optionally loss_tolerance (number)")),
    [](const testing::TestParamInfo<TrainingCase> &info) { return info.param.name; });

/// Bad flags to memc and bad data for a training program built from mlp.onnx, with data derived
/// from mlp's data set (input f32[12,16], labels i64[12] in [0, 10), micro-batches of 4).
class TrainingBadInputs : public testing::Test {
protected:
  void SetUp() override {
    dir = scratchDirectory();
    program = dir + "/mlp.train";
    std::string error;
    ASSERT_TRUE(readNpz(kData + "/mlp.data.npz", data, error)) << error;
  }

  void buildProgram() {
    ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, program), dir, output), 0)
        << output;
  }

  /// Trains on `arrays` for 3 steps with a log; returns the exit status.
  int train(const NamedArrays &arrays) {
    std::string path = dir + "/data.npz", error;
    EXPECT_TRUE(writeNpz(path, arrays, /*compress=*/false, error)) << error;
    return run(program + " --data " + path + " --steps 3 --log " + dir + "/log.jsonl", dir, output);
  }

  int64_t *labels() { return find(data, "labels")->as<int64_t>(); }

  std::string dir, program, output;
  NamedArrays data;
};

TEST_F(TrainingBadInputs, LabelOutsideTheClasses) {
  buildProgram();
  labels()[5] = 10; // in the second micro-batch
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("label 10"), std::string::npos) << output;
  EXPECT_NE(output.find("[0, 10)"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, NegativeLabelThatIsNotTheIgnoreIndex) {
  buildProgram();
  labels()[0] = -1;
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("label -1"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, LabelsOfTheWrongType) {
  buildProgram();
  HostArray &labelArray = *find(data, "labels");
  HostArray floats{DType::F32, labelArray.shape, std::vector<uint8_t>(12 * sizeof(float))};
  for (int i = 0; i < 12; ++i)
    floats.as<float>()[i] = static_cast<float>(labelArray.as<int64_t>()[i]);
  labelArray = floats;
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("'labels' is f32[12], expected i64[N]"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, LabelsOfTheWrongShape) {
  buildProgram();
  HostArray &labelArray = *find(data, "labels");
  labelArray = HostArray{DType::I64, {6, 2}, labelArray.bytes};
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("'labels' is i64[6, 2], expected i64[N]"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, LabelsForFewerSamplesThanTheInputs) {
  buildProgram();
  HostArray &labelArray = *find(data, "labels");
  labelArray.shape = {8};
  labelArray.bytes.resize(8 * sizeof(int64_t));
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("'labels' has 8 samples, the other arrays 12"), std::string::npos)
      << output;
}

TEST_F(TrainingBadInputs, ModelInputMissingFromTheData) {
  buildProgram();
  NamedArrays labelsOnly;
  labelsOnly.emplace_back("labels", *find(data, "labels"));
  EXPECT_EQ(train(labelsOnly), 1) << output;
  EXPECT_NE(output.find("'input' is missing (expected f32[N,16])"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, NaNLossStopsTraining) {
  buildProgram();
  HostArray &input = *find(data, "input");
  std::fill(input.as<float>(), input.as<float>() + 12 * 16, INFINITY);
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("the loss is NaN at step 1"), std::string::npos) << output;
  // The log stays JSON: the step that stopped training is logged, its loss is no number.
  std::ifstream log(dir + "/log.jsonl");
  std::string line, error;
  ASSERT_TRUE(std::getline(log, line));
  JsonValue entry;
  EXPECT_TRUE(parseJson(line, entry, error)) << error << "\n" << line;
}

TEST_F(TrainingBadInputs, LossInputThatIsNotAnOutput) {
  EXPECT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy", "--loss-input", "logits"}, program),
                dir, output),
            1);
  EXPECT_NE(output.find("--loss-input 'logits' is not an output of the model (outputs: output)"),
            std::string::npos)
      << output;
}

TEST_F(TrainingBadInputs, FreezeGlobThatMatchesNothing) {
  EXPECT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy", "--freeze", "encoder.*"}, program),
                dir, output),
            1);
  EXPECT_NE(output.find("--freeze 'encoder.*' matches no parameter or buffer name"),
            std::string::npos)
      << output;
}

TEST_F(TrainingBadInputs, LabelsNamedLikeAModelInput) {
  EXPECT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy", "--labels", "input"}, program), dir,
                output),
            1);
  EXPECT_NE(output.find("'input'"), std::string::npos) << output;
}

// gpt2's causal masks are float initializers that reach the logits only through Equal: memc
// warns that their gradient is zero and leaves them out of the optimizer (PlainExportTest).
TEST_F(TrainingBadInputs, ParameterWithoutAPathToTheLossIsNamed) {
  EXPECT_EQ(run(memcCommand("gpt2", {"--loss", "cross_entropy"}, program), dir, output), 0)
      << output;
  EXPECT_NE(output.find("memc: warning: "), std::string::npos) << output;
  for (const char *mask : {"h.0.attn.bias", "h.1.attn.bias"})
    EXPECT_NE(output.find("parameter '" + std::string(mask) +
                          "' has no path to the loss; its gradient is zero"),
              std::string::npos)
        << output;
}

/// The (step, loss) lines of a training log, as written (losses compared exactly).
std::vector<std::pair<int64_t, std::string>> readLogLines(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::pair<int64_t, std::string>> lines;
  std::string line, error;
  while (std::getline(in, line)) {
    JsonValue entry;
    EXPECT_TRUE(parseJson(line, entry, error)) << error;
    const JsonValue *step = entry.find("step");
    size_t loss = line.find("\"loss\": ");
    if (!step || !step->isInteger() || loss == std::string::npos)
      continue;
    lines.emplace_back(step->integer(), line.substr(loss, line.find(',', loss) - loss));
  }
  return lines;
}

TEST_F(TrainingBadInputs, ResumingFromACheckpointReproducesTheUninterruptedRun) {
  buildProgram();
  std::string path = dir + "/data.npz", error;
  ASSERT_TRUE(writeNpz(path, data, /*compress=*/false, error)) << error;
  std::string checkpoints = dir + "/checkpoints";
  std::filesystem::create_directories(checkpoints);
  ASSERT_EQ(
      run(program + " --data " + path + " --steps 5 --log " + dir + "/full.jsonl", dir, output), 0)
      << output;
  ASSERT_EQ(run(program + " --data " + path + " --steps 3 --checkpoint " + checkpoints +
                    " --checkpoint-every 3",
                dir, output),
            0)
      << output;
  ASSERT_TRUE(std::filesystem::exists(checkpoints + "/checkpoint.safetensors"));
  ASSERT_EQ(run(program + " --data " + path + " --steps 5 --resume " + checkpoints + " --log " +
                    dir + "/resumed.jsonl",
                dir, output),
            0)
      << output;
  std::vector<std::pair<int64_t, std::string>> full = readLogLines(dir + "/full.jsonl");
  std::vector<std::pair<int64_t, std::string>> resumed = readLogLines(dir + "/resumed.jsonl");
  ASSERT_EQ(full.size(), 5u);
  ASSERT_EQ(resumed.size(), 2u);
  EXPECT_EQ(resumed[0], full[3]);
  EXPECT_EQ(resumed[1], full[4]);
}

TEST_F(TrainingBadInputs, ResumingFromAMissingCheckpointFails) {
  buildProgram();
  std::string path = dir + "/data.npz", error;
  ASSERT_TRUE(writeNpz(path, data, /*compress=*/false, error)) << error;
  EXPECT_EQ(run(program + " --data " + path + " --resume " + dir + "/nowhere", dir, output), 1);
  EXPECT_NE(output.find("checkpoint.safetensors"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, DropoutMasksFollowTheSeed) {
  // mlp_dropout.onnx keeps nn.Dropout(0.5) (exported in training mode): the masks depend on
  // --seed and the micro-batch, so one seed reproduces a run and another changes it.
  std::string dropoutProgram = dir + "/dropout.train";
  ASSERT_EQ(
      run(memcCommand("mlp_dropout", {"--loss", "cross_entropy"}, dropoutProgram), dir, output), 0)
      << output;
  std::string path = dir + "/data.npz", error;
  ASSERT_TRUE(writeNpz(path, data, /*compress=*/false, error)) << error;
  auto losses = [&](int seed, const std::string &name) {
    std::string log = dir + "/" + name + ".jsonl";
    EXPECT_EQ(run(dropoutProgram + " --data " + path + " --steps 3 --seed " + std::to_string(seed) +
                      " --log " + log,
                  dir, output),
              0)
        << output;
    return readLogLines(log);
  };
  auto first = losses(1, "first"), again = losses(1, "again"), other = losses(2, "other");
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
}

// numpy's default float is float64: data for an f32 input converts with a note naming the array,
// and trains as the float32 data does; float64 labels for an i64 input are refused as f64.
TEST_F(TrainingBadInputs, Float64DataConvertsWithANoteOnlyForFloat32Inputs) {
  buildProgram();
  std::string path = dir + "/f64.npz", error;
  ASSERT_TRUE(memc::testing::writeNpzWithFloat64(path, data, {"input"}, error)) << error;
  ASSERT_EQ(
      run(program + " --data " + path + " --steps 2 --log " + dir + "/f64.jsonl", dir, output), 0)
      << output;
  EXPECT_NE(output.find("mlp.train: note: 'input' is float64 data; memc converts it to float32, "
                        "the type the model takes"),
            std::string::npos)
      << output;
  ASSERT_EQ(train(data), 0) << output;
  std::vector<std::pair<int64_t, std::string>> converted = readLogLines(dir + "/f64.jsonl"),
                                               float32 = readLogLines(dir + "/log.jsonl");
  ASSERT_EQ(converted.size(), 2u);
  EXPECT_EQ(converted[0], float32[0]);
  EXPECT_EQ(converted[1], float32[1]);

  ASSERT_TRUE(memc::testing::writeNpzWithFloat64(path, data, {"labels"}, error)) << error;
  EXPECT_EQ(run(program + " --data " + path, dir, output), 1) << output;
  EXPECT_NE(output.find("'labels' is f64[12], expected i64[N]"), std::string::npos) << output;
}

TEST_F(TrainingBadInputs, Float64DataForAnIntegerInputIsRefusedInInference) {
  std::string inference = dir + "/gpt2.run";
  ASSERT_EQ(run(memcCommand("gpt2", {"--mode=infer"}, inference), dir, output), 0) << output;
  HostArray ids{DType::I64, {2, 16}, std::vector<uint8_t>(32 * sizeof(int64_t))};
  std::string path = dir + "/ids.npz", error;
  ASSERT_TRUE(memc::testing::writeNpzWithFloat64(path, {{"input_ids", ids}}, {"input_ids"}, error))
      << error;
  EXPECT_EQ(run(inference + " --inputs " + path, dir, output), 1) << output;
  EXPECT_NE(output.find("input 'input_ids' is f64[2, 16], expected i64[2, 16] (float64 data "
                        "converts only to float32 inputs)"),
            std::string::npos)
      << output;
}

TEST_F(TrainingBadInputs, FewerSamplesThanOneMicroBatch) {
  buildProgram();
  for (auto &[name, array] : data) {
    array.bytes.resize(array.bytes.size() / array.shape[0] * 3);
    array.shape[0] = 3;
  }
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("the data has 3 samples, fewer than one micro-batch of the program (4 "
                        "samples, axis 0 of its inputs)"),
            std::string::npos)
      << output;
}

// PyTorch's cross_entropy of a batch whose labels are all ignore_index is NaN: training stops
// at that step as it does for a NaN loss, after the steps before it.
TEST_F(TrainingBadInputs, BatchWhoseLabelsAreAllIgnoredStopsTraining) {
  buildProgram();
  std::fill(labels() + 4, labels() + 8, -100); // the second micro-batch
  EXPECT_EQ(train(data), 1) << output;
  EXPECT_NE(output.find("every label of step 2's batch (micro-batch 2) is the ignored index -100: "
                        "its loss is undefined (PyTorch's is NaN); training stopped"),
            std::string::npos)
      << output;
  EXPECT_EQ(readLogLines(dir + "/log.jsonl").size(), 1u);
  std::fill(labels(), labels() + 4, -100); // and the first, which --dump-grads runs first
  std::string path = dir + "/ignored.npz", error;
  ASSERT_TRUE(writeNpz(path, data, /*compress=*/false, error)) << error;
  EXPECT_EQ(run(program + " --data " + path + " --dump-grads " + dir + "/grads.npz", dir, output),
            1);
  EXPECT_NE(output.find("every label of step 1's batch (micro-batch 1) is the ignored index"),
            std::string::npos)
      << output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/grads.npz"));
  labels()[0] = 3;
  labels()[5] = 3; // one label left in each: it trains
  EXPECT_EQ(train(data), 0) << output;
}

class TrainingResume : public TrainingBadInputs {
protected:
  /// A checkpoint of `program` after 3 steps in dir/checkpoints.
  void checkpoint() {
    buildProgram();
    std::string error;
    ASSERT_TRUE(writeNpz(dir + "/data.npz", data, /*compress=*/false, error)) << error;
    checkpoints = dir + "/checkpoints";
    std::filesystem::create_directories(checkpoints);
    ASSERT_EQ(run(program + " --data " + dir + "/data.npz --steps 3 --checkpoint " + checkpoints,
                  dir, output),
              0)
        << output;
  }
  int resume(const std::string &with, const std::string &steps) {
    return run(with + " --data " + dir + "/data.npz --steps " + steps + " --resume " +
                   checkpoints,
               dir, output);
  }
  int resume(const std::string &with, int steps) { return resume(with, std::to_string(steps)); }
  std::string checkpointFile() const { return checkpoints + "/checkpoint.safetensors"; }
  /// Rewrites the checkpoint with `edit` applied to its metadata, resealing its checksums when
  /// `seal` (a checkpoint crafted to pass them) and leaving them as they were otherwise.
  void rewriteCheckpoint(const std::function<void(std::map<std::string, std::string> &)> &edit,
                         bool seal) {
    SafetensorsFile file;
    std::string error;
    ASSERT_TRUE(file.open(checkpointFile(), error)) << error;
    std::vector<TensorRef> tensors;
    for (const SafetensorsTensor &tensor : file.tensors())
      tensors.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.bytes});
    std::map<std::string, std::string> metadata = file.metadata();
    edit(metadata);
    if (seal)
      sealCheckpointMetadata(metadata, tensors);
    std::string bytes;
    ASSERT_TRUE(serializeSafetensors(tensors, metadata, bytes, error)) << error;
    ASSERT_TRUE(writeFileAtomically(checkpointFile(), {bytes}, 0644, error)) << error;
  }
  void rewriteStep(const std::string &step, bool seal) {
    rewriteCheckpoint([&](std::map<std::string, std::string> &metadata) { metadata["step"] = step; },
                      seal);
  }
  std::string checkpoints;
};

// 19 of 20 bit flips once resumed silently, 12 of them with other losses.
TEST_F(TrainingResume, CorruptedCheckpointIsRefusedNamingTheSection) {
  checkpoint();
  std::string good, error;
  ASSERT_TRUE(readFile(checkpointFile(), good, error)) << error;
  std::string flipped = good;
  flipped[flipped.size() - 5] ^= 0x10; // in the last tensor's bytes
  ASSERT_TRUE(writeFileAtomically(checkpointFile(), {flipped}, 0644, error)) << error;
  EXPECT_EQ(resume(program, 5), 1) << output;
  EXPECT_NE(output.find("error: --resume " + checkpoints + ": " + checkpointFile() +
                        ": tensor '"),
            std::string::npos)
      << output;
  EXPECT_NE(output.find("' is corrupted (checksum mismatch)"), std::string::npos) << output;
  std::string edited = good;
  size_t step = edited.find("\"step\":\"3\"");
  ASSERT_NE(step, std::string::npos);
  edited[step + 8] = '1'; // "3" -> "1": would resume from the wrong step
  ASSERT_TRUE(writeFileAtomically(checkpointFile(), {edited}, 0644, error)) << error;
  EXPECT_EQ(resume(program, 5), 1) << output;
  EXPECT_NE(output.find("section 'metadata' is corrupted (checksum mismatch)"), std::string::npos)
      << output;
}

TEST_F(TrainingResume, EditedOrCraftedStepIsRefused) {
  checkpoint();
  rewriteStep("", /*seal=*/false);
  EXPECT_EQ(resume(program, 5), 1) << output;
  EXPECT_NE(output.find("section 'metadata' is corrupted (checksum mismatch)"), std::string::npos)
      << output;
  for (const char *step : {"", "-2", "3x", "18446744073709551617"}) {
    rewriteStep(step, /*seal=*/true);
    EXPECT_EQ(resume(program, 5), 1) << output;
    EXPECT_NE(output.find("the checkpoint's step '" + std::string(step) +
                          "' is not a decimal integer from 0 to 9223372036854775807"),
              std::string::npos)
        << output;
  }
  rewriteStep("9223372036854775807", /*seal=*/true);
  EXPECT_EQ(resume(program, 5), 1) << output;
  EXPECT_NE(output.find("the checkpoint is at step 9223372036854775807, and --steps is 5"),
            std::string::npos)
      << output;
}

TEST_F(TrainingResume, CheckpointWithoutChecksumsIsRefusedAsOlder) {
  checkpoint();
  rewriteCheckpoint(
      [](std::map<std::string, std::string> &metadata) {
        for (auto it = metadata.begin(); it != metadata.end();)
          it = it->first.rfind("crc32c.", 0) == 0 ? metadata.erase(it) : std::next(it);
      },
      /*seal=*/false);
  EXPECT_EQ(resume(program, 5), 1) << output;
  EXPECT_NE(output.find("the checkpoint carries no checksums: an older memc wrote it"),
            std::string::npos)
      << output;
}

TEST_F(TrainingResume, AtOrPastTheStepsIsRefused) {
  checkpoint();
  for (int steps : {3, 2}) {
    EXPECT_EQ(resume(program, steps), 1) << output;
    EXPECT_NE(output.find("the checkpoint is at step 3, and --steps is " + std::to_string(steps) +
                          ": nothing is left to train"),
              std::string::npos)
        << output;
  }
  EXPECT_EQ(resume(program, 4), 0) << output;
}

// The checkpoint carries the program's fingerprint: another optimizer, another learning rate,
// another model or other frozen parameters are refused; another budget (other remat, same
// training) resumes.
TEST_F(TrainingResume, CheckpointOfAnotherProgramIsRefused) {
  checkpoint();
  struct Case {
    std::string model;
    std::vector<std::string> flags;
    std::string message;
  } cases[] = {
      {"mlp",
       {"--loss", "cross_entropy", "--optimizer", "sgd"},
       "training with adamw, this program trains with sgd"},
      {"mlp", {"--loss", "cross_entropy", "--lr", "0.01"}, "training with other training flags"},
      {"mlp", {"--loss", "cross_entropy", "--beta2", "0.99"}, "training with other training flags"},
      {"mlp",
       {"--loss", "cross_entropy", "--freeze", "net.0.*"},
       "training with other training flags"},
      {"mlp_dropout", {"--loss", "cross_entropy"}, "training of model '"},
  };
  for (const Case &c : cases) {
    std::string other = dir + "/other.train";
    ASSERT_EQ(run(memcCommand(c.model, c.flags, other), dir, output), 0) << output;
    EXPECT_EQ(resume(other, 5), 1) << c.message << "\n" << output;
    EXPECT_NE(output.find("--resume " + checkpoints +
                          ": the checkpoint was written by another program, " + c.message),
              std::string::npos)
        << output;
  }
  // The same parameters and flags, but another computation (a Sigmoid for a Relu), is refused;
  // the same model moved elsewhere resumes.
  onnx::ModelProto model;
  std::string bytes, error;
  ASSERT_TRUE(readFile(kFixtures + "/mlp.onnx", bytes, error)) << error;
  ASSERT_TRUE(model.ParseFromString(bytes));
  auto compile = [&](const onnx::ModelProto &source, const std::string &name) {
    std::string path = dir + "/" + name + ".onnx", program = dir + "/" + name + ".train";
    EXPECT_TRUE(writeFileAtomically(path, {source.SerializeAsString()}, 0644, error)) << error;
    EXPECT_EQ(run(kBin + "/memc " + path + " --loss cross_entropy -o " + program, dir, output), 0)
        << output;
    return program;
  };
  std::string moved = compile(model, "moved");
  onnx::NodeProto *relu = nullptr;
  for (onnx::NodeProto &node : *model.mutable_graph()->mutable_node())
    if (node.op_type() == "Relu" && !relu)
      relu = &node;
  ASSERT_TRUE(relu);
  relu->set_op_type("Sigmoid");
  EXPECT_EQ(resume(compile(model, "changed"), 5), 1) << output;
  EXPECT_NE(output.find("the checkpoint was written by another program"), std::string::npos)
      << output;
  EXPECT_EQ(resume(moved, 4), 0) << output;

  std::string budgeted = dir + "/budgeted.train";
  ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy", "--vram-budget", "1MiB"}, budgeted),
                dir, output),
            0)
      << output;
  EXPECT_EQ(resume(budgeted, 4), 0) << output;
}

} // namespace
