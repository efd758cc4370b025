//===- HostileModelFuzzTest.cpp - generated models that ask for unbounded work ===//
//
// Where ModelFuzzTest damages good models, this generates valid-looking ones of the classes that
// once crashed or ran without bound (issue 22): Loops nested up to 45 deep (past protobuf's parse
// depth), nested Loops whose trip counts multiply past the import budget, Loops stacking large
// Ranges into scan outputs, Resize with huge, tiny, negative or non-finite scales and sizes, and
// ConstantOfShape / Expand / Tile / Range of huge or overflowing shapes. Fixed seeds. Each model
// runs through memc (import, and for those that import an inference compile); each run must end
// with exit 0 or a clean "memc: error:". Sizes are drawn either well inside the budgets or far
// past them, so no run does minutes of legitimate work. The counts are printed for
// docs/reliability.md.
//
//===----------------------------------------------------------------------===//
#include "MemcProcess.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <random>

using namespace memc::fuzz;

namespace {

constexpr int kCasesPerGenerator = 40;

template <typename T> const T &choose(const std::vector<T> &values, std::mt19937_64 &random) {
  return values[random() % values.size()];
}

/// A tensor type: element type and, when `dims` is given, the shape.
void setType(onnx::ValueInfoProto &value, const std::string &name, int32_t elemType,
             const std::vector<int64_t> *dims) {
  value.set_name(name);
  onnx::TypeProto_Tensor &tensor = *value.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(elemType);
  if (dims)
    for (int64_t dim : *dims)
      tensor.mutable_shape()->add_dim()->set_dim_value(dim);
}

void addInput(onnx::GraphProto &graph, const std::string &name, int32_t elemType,
              std::vector<int64_t> dims) {
  setType(*graph.add_input(), name, elemType, &dims);
}

/// Outputs are declared without a shape: what memc computes is what is being tested.
void addOutput(onnx::GraphProto &graph, const std::string &name, int32_t elemType) {
  setType(*graph.add_output(), name, elemType, nullptr);
}

onnx::NodeProto &addNode(onnx::GraphProto &graph, const std::string &op,
                         const std::vector<std::string> &inputs,
                         const std::vector<std::string> &outputs) {
  onnx::NodeProto &node = *graph.add_node();
  node.set_op_type(op);
  node.set_name(outputs.front() + "_node");
  for (const std::string &input : inputs)
    node.add_input(input);
  for (const std::string &output : outputs)
    node.add_output(output);
  return node;
}

void addInt64s(onnx::GraphProto &graph, const std::string &name,
               const std::vector<int64_t> &values) {
  onnx::TensorProto &tensor = *graph.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::INT64);
  tensor.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t value : values)
    tensor.add_int64_data(value);
}

/// A float initializer: 1-D, or a scalar when `scalar`.
void addFloats(onnx::GraphProto &graph, const std::string &name, const std::vector<float> &values,
               bool scalar = false) {
  onnx::TensorProto &tensor = *graph.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(onnx::TensorProto::FLOAT);
  if (!scalar)
    tensor.add_dims(static_cast<int64_t>(values.size()));
  for (float value : values)
    tensor.add_float_data(value);
}

/// A Constant node of one int64 (memc reads no initializers inside a Loop body, so bodies and
/// the graphs around them spell their scalars this way, as torch.onnx.export does).
void addScalarConstant(onnx::GraphProto &graph, const std::string &name, int64_t value) {
  onnx::AttributeProto &attr = *addNode(graph, "Constant", {}, {name}).add_attribute();
  attr.set_name("value");
  attr.set_type(onnx::AttributeProto::TENSOR);
  attr.mutable_t()->set_data_type(onnx::TensorProto::INT64);
  attr.mutable_t()->add_int64_data(value);
}

/// A Loop body with the iteration and condition inputs, the condition passed through, and
/// `carried` float [2, 4] values (each input NAME, output NAME_next).
onnx::GraphProto loopBody(const std::vector<std::string> &carried) {
  onnx::GraphProto body;
  body.set_name("body");
  addInput(body, "i", onnx::TensorProto::INT64, {});
  addInput(body, "cond_in", onnx::TensorProto::BOOL, {});
  addNode(body, "Identity", {"cond_in"}, {"cond_out"});
  setType(*body.add_output(), "cond_out", onnx::TensorProto::BOOL, nullptr);
  for (const std::string &name : carried) {
    addInput(body, name, onnx::TensorProto::FLOAT, {2, 4});
    addOutput(body, name + "_next", onnx::TensorProto::FLOAT);
  }
  return body;
}

/// Appends to `graph` a Loop of `trip` iterations over `body`.
void addLoop(onnx::GraphProto &graph, const std::string &name, int64_t trip,
             const onnx::GraphProto &body, const std::vector<std::string> &inputs,
             const std::vector<std::string> &outputs) {
  addScalarConstant(graph, name + "_trip", trip);
  std::vector<std::string> loopInputs = {name + "_trip", ""};
  loopInputs.insert(loopInputs.end(), inputs.begin(), inputs.end());
  onnx::NodeProto &loop = addNode(graph, "Loop", loopInputs, outputs);
  onnx::AttributeProto &attr = *loop.add_attribute();
  attr.set_name("body");
  attr.set_type(onnx::AttributeProto::GRAPH);
  *attr.mutable_g() = body;
}

onnx::ModelProto modelOf(onnx::GraphProto graph) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  graph.set_name("hostile");
  *model.mutable_graph() = std::move(graph);
  return model;
}

/// Trip counts: a few, or far more than the import budget's 2^18 unrolled nodes.
const std::vector<int64_t> kTrips = {1, 1, 2, 3, 16, int64_t(1) << 20, int64_t(1) << 40};

/// Loops nested 1 to 45 deep (beyond about 33, deeper than protobuf parses). Where the trip
/// counts multiply to more than a few thousand iterations the outermost one is made huge, so a
/// model is either small work or far past the budget, never minutes of real work.
onnx::ModelProto nestedLoops(std::mt19937_64 &random) {
  std::vector<int64_t> trips(1 + random() % 45);
  double iterations = 1;
  for (int64_t &trip : trips) {
    trip = choose(kTrips, random);
    iterations *= static_cast<double>(trip);
  }
  if (iterations > 4096 && iterations < double(int64_t(1) << 30))
    trips.back() = int64_t(1) << 40;
  onnx::GraphProto body = loopBody({"v"});
  addNode(body, "Neg", {"v"}, {"v_next"});
  for (size_t level = 0; level + 1 < trips.size(); ++level) {
    onnx::GraphProto outer = loopBody({"v"});
    addLoop(outer, "level" + std::to_string(level), trips[level], body, {"v"}, {"v_next"});
    body = std::move(outer);
  }
  onnx::GraphProto graph;
  addInput(graph, "x", onnx::TensorProto::FLOAT, {2, 4});
  addLoop(graph, "top", trips.back(), body, {"x"}, {"y"});
  addOutput(graph, "y", onnx::TensorProto::FLOAT);
  return modelOf(std::move(graph));
}

/// One or two nested Loops whose body stacks a Range into a scan output: at most 2^16 elements
/// in all, or a Range past the folding budget (2^26), or trips past the unroll budget.
onnx::ModelProto loopScans(std::mt19937_64 &random) {
  const std::vector<int64_t> trips = {1, 2, 16, int64_t(1) << 20, int64_t(1) << 40};
  onnx::GraphProto body = loopBody({});
  addScalarConstant(body, "zero", 0);
  addScalarConstant(body, "one", 1);
  addScalarConstant(body, "limit", int64_t(1) << choose(std::vector<int>{2, 8, 27, 28}, random));
  addNode(body, "Range", {"zero", "limit", "one"}, {"r"});
  addOutput(body, "r", onnx::TensorProto::INT64);
  if (random() % 2) {
    onnx::GraphProto outer = loopBody({});
    addLoop(outer, "inner", choose(trips, random), body, {}, {"stacked_inner"});
    addOutput(outer, "stacked_inner", onnx::TensorProto::INT64);
    body = std::move(outer);
  }
  onnx::GraphProto graph;
  addInput(graph, "x", onnx::TensorProto::FLOAT, {2, 4});
  addLoop(graph, "scan_loop", choose(trips, random), body, {}, {"stacked"});
  addNode(graph, "Cast", {"stacked"}, {"s"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto to;
    to.set_name("to");
    to.set_type(onnx::AttributeProto::INT);
    to.set_i(onnx::TensorProto::FLOAT);
    return to;
  }());
  addNode(graph, "ReduceSum", {"s"}, {"total"});
  addNode(graph, "Add", {"x", "total"}, {"y"});
  addOutput(graph, "y", onnx::TensorProto::FLOAT);
  return modelOf(std::move(graph));
}

/// Resize of a [1, 1, 4, 4] input by scales (huge, tiny, zero, negative, infinite, NaN, or
/// ordinary) or by sizes (zero, negative, ordinary, huge).
onnx::ModelProto resizes(std::mt19937_64 &random) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> scales = {0.0f, -1.0f, 1e-30f, 0.25f, 2.0f, 3.0f, 1e3f,
                                     1e7f, 1e10f, 3e18f,  1e19f, inf,  -inf, std::nanf("")};
  const std::vector<int64_t> sizes = {0,
                                      -5,
                                      1,
                                      8,
                                      int64_t(1) << 24,
                                      int64_t(1) << 25,
                                      int64_t(1) << 40,
                                      std::numeric_limits<int64_t>::max()};
  onnx::GraphProto graph;
  addInput(graph, "x", onnx::TensorProto::FLOAT, {1, 1, 4, 4});
  onnx::NodeProto *resize;
  if (random() % 2) {
    addFloats(graph, "scales", {1.0f, 1.0f, choose(scales, random), choose(scales, random)});
    resize = &addNode(graph, "Resize", {"x", "", "scales"}, {"y"});
  } else {
    addInt64s(graph, "sizes", {1, 1, choose(sizes, random), choose(sizes, random)});
    resize = &addNode(graph, "Resize", {"x", "", "", "sizes"}, {"y"});
  }
  onnx::AttributeProto &mode = *resize->add_attribute();
  mode.set_name("mode");
  mode.set_type(onnx::AttributeProto::STRING);
  mode.set_s(random() % 2 ? "nearest" : "linear");
  addOutput(graph, "y", onnx::TensorProto::FLOAT);
  return modelOf(std::move(graph));
}

/// ConstantOfShape, Expand, Tile or Range asked for huge element counts, some of whose
/// products overflow 64 bits, reduced to a scalar so nothing else holds them.
onnx::ModelProto hugeShapes(std::mt19937_64 &random) {
  auto dim = [&] {
    return random() % 4 == 0 ? std::numeric_limits<int64_t>::max() : int64_t(1) << (random() % 63);
  };
  std::vector<int64_t> shape(1 + random() % 4);
  for (int64_t &d : shape)
    d = dim();
  onnx::GraphProto graph;
  addInput(graph, "x", onnx::TensorProto::FLOAT, {2, 4});
  switch (random() % 4) {
  case 0:
    addInt64s(graph, "shape", shape);
    addNode(graph, "ConstantOfShape", {"shape"}, {"big"});
    break;
  case 1: // broadcast against x's [2, 4]
    shape.push_back(2);
    shape.push_back(4);
    addInt64s(graph, "shape", shape);
    addNode(graph, "Expand", {"x", "shape"}, {"big"});
    break;
  case 2:
    addInt64s(graph, "repeats", {dim(), dim()});
    addNode(graph, "Tile", {"x", "repeats"}, {"big"});
    break;
  default:
    addFloats(graph, "start", {0.0f}, /*scalar=*/true);
    addFloats(graph, "delta", {1.0f}, true);
    addFloats(graph, "limit", {static_cast<float>(dim())}, true);
    addNode(graph, "Range", {"start", "limit", "delta"}, {"big"});
  }
  addNode(graph, "ReduceSum", {"big"}, {"total"});
  addNode(graph, "Add", {"x", "total"}, {"y"});
  addOutput(graph, "y", onnx::TensorProto::FLOAT);
  return modelOf(std::move(graph));
}

struct Generator {
  const char *name;
  std::function<onnx::ModelProto(std::mt19937_64 &)> make;
};

TEST(HostileModelFuzz, GeneratedBlowupsFailCleanly) {
  const std::vector<Generator> generators = {{"nested loops", nestedLoops},
                                             {"loops with scans", loopScans},
                                             {"resize scales and sizes", resizes},
                                             {"huge shapes", hugeShapes}};
  std::string dir = ::testing::TempDir() + "memc-hostile-model-fuzz";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  struct Case {
    std::string path;
    size_t generator;
  };
  std::vector<Case> cases;
  for (size_t g = 0; g < generators.size(); ++g) {
    std::mt19937_64 random(0x4057113 + g);
    for (int i = 0; i < kCasesPerGenerator; ++i) {
      std::string path = dir + "/" + std::to_string(g) + "." + std::to_string(i) + ".onnx";
      std::ofstream(path, std::ios::binary) << generators[g].make(random).SerializeAsString();
      cases.push_back({path, g});
    }
  }

  // MEMC_FUZZ_VERBOSE=1 prints what memc said of each case.
  const bool verbose = std::getenv("MEMC_FUZZ_VERBOSE") != nullptr;
  std::mutex mutex;
  std::vector<std::array<int, 6>> counts(generators.size());
  std::vector<std::string> failures;
  forEachOnTwoThreads(cases.size(), dir, [&](size_t c, const std::string &log) {
    Outcome outcome = runMemc({cases[c].path}, log);
    if (outcome.kind == Outcome::Success)
      outcome = runMemc({cases[c].path, "--mode=infer", "-o", cases[c].path + ".run"}, log);
    std::lock_guard<std::mutex> lock(mutex);
    ++counts[cases[c].generator][outcome.kind];
    if (verbose)
      std::printf("%s: %s\n", cases[c].path.c_str(),
                  outcome.kind == Outcome::Success ? "compiled" : outcome.detail.c_str());
    if (outcome.kind != Outcome::Success && outcome.kind != Outcome::CleanError)
      failures.push_back(cases[c].path + ": " + outcome.detail);
  });
  for (size_t g = 0; g < generators.size(); ++g) {
    const std::array<int, 6> &n = counts[g];
    std::printf("hostile model fuzz, %s: %d tried, %d compiled, %d clean errors, %d crashes, "
                "%d hangs, %d internal, %d unclear\n",
                generators[g].name, kCasesPerGenerator, n[Outcome::Success], n[Outcome::CleanError],
                n[Outcome::Crash], n[Outcome::Hang], n[Outcome::Internal], n[Outcome::Unclear]);
    // Each generator must produce both kinds, or it has stopped reaching the limits (or the
    // ordinary cases stopped compiling).
    EXPECT_GT(n[Outcome::CleanError], 0) << generators[g].name;
    EXPECT_GT(n[Outcome::Success], 0) << generators[g].name;
  }
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
}

} // namespace
