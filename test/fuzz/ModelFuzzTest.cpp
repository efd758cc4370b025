//===- ModelFuzzTest.cpp - damaged ONNX models fail cleanly ---------------===//
//
// Mutates the small fixture models, at the byte level (flipped bytes, truncation) and in their
// structure (dropped inputs and initializers, attributes of the wrong type, huge and negative
// dims, duplicate names, wrong element types), with fixed seeds, and runs memc on each: import,
// and for those that import, a short compile (--mode=infer, or training with --loss mse). Every
// run must end with exit 0, or exit 1 with a "memc: error:" message: never a signal, a hang (runs
// are killed after a generous 30 s that only a real hang reaches) or an "internal:" message. The
// counts are printed for docs/reliability.md.
//
//===----------------------------------------------------------------------===//
#include "MemcProcess.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>

using namespace memc::fuzz;

namespace {

constexpr int kCasesPerModel = 64;

const char *const kModels[] = {"mlp",
                               "resnet_bn",
                               "gpt2",
                               "bert",
                               "llama",
                               "dedup_identity",
                               "optional_inputs",
                               "slice_huge_step"};

/// One structural mutation of `model`, chosen by `random`.
void mutateStructure(onnx::ModelProto &model, std::mt19937_64 &random) {
  onnx::GraphProto &graph = *model.mutable_graph();
  auto pick = [&](int count) {
    return count > 0 ? static_cast<int>(random() % static_cast<uint64_t>(count)) : -1;
  };
  const int64_t hugeDims[] = {int64_t{1} << 40, INT64_MAX, int64_t{1} << 31, 0};
  switch (random() % 12) {
  case 0: // drop a node's input
    if (int n = pick(graph.node_size()); n >= 0 && graph.node(n).input_size() > 0) {
      auto *inputs = graph.mutable_node(n)->mutable_input();
      inputs->erase(inputs->begin() + pick(inputs->size()));
    }
    break;
  case 1: // drop a graph input or an initializer
    if (random() % 2 && graph.input_size() > 0)
      graph.mutable_input()->erase(graph.mutable_input()->begin() + pick(graph.input_size()));
    else if (graph.initializer_size() > 0)
      graph.mutable_initializer()->erase(graph.mutable_initializer()->begin() +
                                         pick(graph.initializer_size()));
    break;
  case 2: // an attribute of another type
    for (int tries = 0; tries < 8; ++tries)
      if (int n = pick(graph.node_size()); n >= 0 && graph.node(n).attribute_size() > 0) {
        onnx::AttributeProto &attr =
            *graph.mutable_node(n)->mutable_attribute(pick(graph.node(n).attribute_size()));
        const onnx::AttributeProto::AttributeType types[] = {
            onnx::AttributeProto::FLOAT, onnx::AttributeProto::INT, onnx::AttributeProto::STRING,
            onnx::AttributeProto::INTS, onnx::AttributeProto::TENSOR};
        attr.set_type(types[random() % 5]);
        attr.set_i(static_cast<int64_t>(random()));
        attr.set_f(1.5f);
        break;
      }
    break;
  case 3: // a huge dim on a graph input or an initializer
  case 4: // a negative dim
    if (random() % 2 && graph.input_size() > 0) {
      auto *shape = graph.mutable_input(pick(graph.input_size()))
                        ->mutable_type()
                        ->mutable_tensor_type()
                        ->mutable_shape();
      if (shape->dim_size() > 0)
        shape->mutable_dim(pick(shape->dim_size()))
            ->set_dim_value(random() % 10 < 5 ? hugeDims[random() % 4]
                                              : -static_cast<int64_t>(random() % 5 + 1));
    } else if (graph.initializer_size() > 0) {
      onnx::TensorProto &tensor = *graph.mutable_initializer(pick(graph.initializer_size()));
      if (tensor.dims_size() > 0)
        tensor.set_dims(pick(tensor.dims_size()),
                        random() % 2 ? hugeDims[random() % 4] : -static_cast<int64_t>(2));
    }
    break;
  case 5: // duplicate names: a node writes a value another already writes or an input's name
    if (int a = pick(graph.node_size()), b = pick(graph.node_size());
        a >= 0 && graph.node(a).output_size() > 0 && graph.node(b).input_size() > 0)
      graph.mutable_node(a)->set_output(0, graph.node(b).input(0));
    break;
  case 6: // a graph output or input declared twice
    if (random() % 2)
      *graph.add_output() = graph.output(0);
    else if (graph.input_size() > 0)
      *graph.add_input() = graph.input(0);
    break;
  case 7: // another element type on an input or an initializer
    if (graph.input_size() > 0 && random() % 2)
      graph.mutable_input(pick(graph.input_size()))
          ->mutable_type()
          ->mutable_tensor_type()
          ->set_elem_type(static_cast<int32_t>(random() % 17));
    else if (graph.initializer_size() > 0)
      graph.mutable_initializer(pick(graph.initializer_size()))
          ->set_data_type(static_cast<int32_t>(random() % 17));
    break;
  case 8: // a node reads a value defined later, or one that does not exist
    if (int n = pick(graph.node_size()); n >= 0 && graph.node(n).input_size() > 0)
      graph.mutable_node(n)->set_input(pick(graph.node(n).input_size()),
                                       random() % 2 ? "no_such_value"
                                                    : graph.node(graph.node_size() - 1).output(0));
    break;
  case 9: // another op in the node's place, its inputs and attributes unchanged
    if (int n = pick(graph.node_size()); n >= 0) {
      const char *types[] = {"Reshape", "Slice", "Gather", "Concat",  "MatMul", "Conv",
                             "Split",   "Where", "Range",  "Softmax", "Expand", "Transpose"};
      graph.mutable_node(n)->set_op_type(types[random() % std::size(types)]);
    }
    break;
  case 10: // an initializer's data cut short, or its dims changed under it
    if (int t = pick(graph.initializer_size()); t >= 0) {
      onnx::TensorProto &tensor = *graph.mutable_initializer(t);
      if (tensor.has_raw_data() && random() % 2)
        tensor.mutable_raw_data()->resize(tensor.raw_data().size() / 2);
      else
        tensor.add_dims(static_cast<int64_t>(random() % 3 + 2));
    }
    break;
  default: // an integer attribute far out of range (axes, perms, sizes)
    for (int tries = 0; tries < 8; ++tries)
      if (int n = pick(graph.node_size()); n >= 0 && graph.node(n).attribute_size() > 0) {
        onnx::AttributeProto &attr =
            *graph.mutable_node(n)->mutable_attribute(pick(graph.node(n).attribute_size()));
        if (attr.type() == onnx::AttributeProto::INT)
          attr.set_i(random() % 2 ? INT64_MAX : INT64_MIN);
        else if (attr.type() == onnx::AttributeProto::INTS && attr.ints_size() > 0)
          attr.set_ints(pick(attr.ints_size()), random() % 2 ? INT64_MAX : -(int64_t{1} << 40));
        else
          continue;
        break;
      }
  }
}

/// The variant `index` of `bytes` (a serialized model): one in four byte flips or a truncation
/// (which ImportFuzzTest tries in bulk in-process; here they also compile), the others one to
/// three structural mutations.
std::string mutate(const std::string &bytes, int index, std::mt19937_64 &random) {
  std::string variant = bytes;
  switch (index % 8) {
  case 0: {
    int flips = 1 + static_cast<int>(random() % 8);
    for (int i = 0; i < flips; ++i)
      variant[random() % variant.size()] ^= static_cast<char>(1 << (random() % 8));
    return variant;
  }
  case 4:
    variant.resize(random() % variant.size());
    return variant;
  default: {
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes))
      return variant;
    for (int mutations = 1 + static_cast<int>(random() % 3); mutations > 0; --mutations)
      mutateStructure(model, random);
    return model.SerializeAsString();
  }
  }
}

TEST(ModelFuzz, DamagedModelsFailCleanly) {
  std::string dir = ::testing::TempDir() + "memc-model-fuzz";
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  struct Case {
    std::string path, model;
  };
  std::vector<Case> cases;
  for (const char *model : kModels) {
    std::string bytes = readFile(std::string(MEMC_FIXTURES_DIR "/") + model + ".onnx");
    ASSERT_FALSE(bytes.empty()) << model;
    std::mt19937_64 random(std::hash<std::string>{}(model) ^ 0x5eed);
    for (int i = 0; i < kCasesPerModel; ++i) {
      std::string path = dir + "/" + model + "." + std::to_string(i) + ".onnx";
      std::ofstream(path, std::ios::binary) << mutate(bytes, i, random);
      cases.push_back({path, model});
    }
  }

  std::mutex mutex;
  int counts[6] = {};
  std::vector<std::string> failures;
  forEachOnTwoThreads(cases.size(), dir, [&](size_t c, const std::string &log) {
    Outcome outcome = runMemc({cases[c].path}, log);
    // What imports also compiles: every other case for inference, the rest for training.
    if (outcome.kind == Outcome::Success)
      outcome = runMemc(c % 2 ? std::vector<std::string>{cases[c].path, "--mode=infer", "-o",
                                                         cases[c].path + ".run"}
                              : std::vector<std::string>{cases[c].path, "--loss", "mse", "-o",
                                                         cases[c].path + ".train"},
                        log);
    std::lock_guard<std::mutex> lock(mutex);
    ++counts[outcome.kind];
    if (outcome.kind != Outcome::Success && outcome.kind != Outcome::CleanError)
      failures.push_back(cases[c].path + ": " + outcome.detail);
  });
  std::printf("model fuzz: %zu tried, %d compiled, %d clean errors, %d crashes, %d hangs, "
              "%d internal, %d unclear\n",
              cases.size(), counts[Outcome::Success], counts[Outcome::CleanError],
              counts[Outcome::Crash], counts[Outcome::Hang], counts[Outcome::Internal],
              counts[Outcome::Unclear]);
  for (const std::string &failure : failures)
    ADD_FAILURE() << failure;
  EXPECT_GE(counts[Outcome::CleanError], static_cast<int>(cases.size()) / 4)
      << "too few mutations were refused: the fuzzer no longer damages the models";
}

} // namespace
