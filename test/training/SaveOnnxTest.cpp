//===- SaveOnnxTest.cpp - training programs save the trained ONNX model ---===//
//
// `--save OUT.onnx` writes the source model with the trained weights, in inference form. A saved
// model must be the source model node for node (BatchNormalization and Dropout as module.eval()
// exports them), less the Identity nodes that recreated deduplicated initializers (each such name
// trains on its own and is saved as an initializer of its own), with every trained parameter and
// buffer as an initializer holding exactly the bytes
// `--save OUT.safetensors` writes, and nothing else changed. memc must import it, and its
// forward must be the trained model's: what the source model's plan computes with the trained
// weights, unlike the untrained model's. Also external data (models beyond 2 GiB), models whose
// weights were external, IR version 3 (initializers are graph inputs), programs compiled
// without a template, and malformed input to the writer. ONNX Runtime (onnxruntime-node, which
// tools/test.sh installs with npm) must compute what `memc --mode=infer` computes from a saved
// BatchNorm CNN and a saved Dropout MLP.
//
//===----------------------------------------------------------------------===//
#include "TrainingTestSupport.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Files.h"
#include "runtime/io/Npz.h"
#include "runtime/io/OnnxWriter.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace memc::runtime;
using namespace memc::test;

namespace {

bool loadModel(const std::string &path, onnx::ModelProto &model) {
  std::string bytes, error;
  return readFile(path, bytes, error) && model.ParseFromString(bytes);
}

const onnx::TensorProto *findInitializer(const onnx::ModelProto &model, const std::string &name) {
  for (const onnx::TensorProto &tensor : model.graph().initializer())
    if (tensor.name() == name)
      return &tensor;
  return nullptr;
}

std::string externalField(const onnx::TensorProto &tensor, const std::string &key) {
  for (const onnx::StringStringEntryProto &entry : tensor.external_data())
    if (entry.key() == key)
      return entry.value();
  return "";
}

/// The largest absolute difference of two sets of f32 outputs with equal names and shapes.
double largestDifference(const NamedArrays &a, const NamedArrays &b) {
  EXPECT_EQ(a.size(), b.size());
  double largest = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_EQ(a[i].second.shape, b[i].second.shape);
    if (a[i].second.bytes.size() != b[i].second.bytes.size())
      return INFINITY;
    for (size_t j = 0; j < a[i].second.bytes.size() / sizeof(float); ++j)
      largest = std::max<double>(largest,
                                 std::abs(a[i].second.as<float>()[j] - b[i].second.as<float>()[j]));
  }
  return largest;
}

/// What module.eval() would have exported for `node`: a BatchNormalization without
/// training_mode and its updated-statistics outputs, a Dropout without its training_mode input.
onnx::NodeProto inferenceForm(onnx::NodeProto node) {
  if (node.op_type() == "BatchNormalization") {
    onnx::NodeProto copy = node;
    node.clear_attribute();
    for (const onnx::AttributeProto &attribute : copy.attribute())
      if (attribute.name() != "training_mode")
        *node.add_attribute() = attribute;
    while (node.output_size() > 1)
      node.mutable_output()->RemoveLast();
  }
  if (node.op_type() == "Dropout")
    while (node.input_size() > 2)
      node.mutable_input()->RemoveLast();
  return node;
}

/// The saved model is the source model with the trained initializers: see the file comment.
/// Returns how many Identity nodes it lost.
int checkSavedModel(const onnx::ModelProto &source, const onnx::ModelProto &saved,
                    const SafetensorsFile &trained) {
  std::set<std::string> trainedNames;
  for (const SafetensorsTensor &tensor : trained.tensors()) {
    trainedNames.insert(tensor.name);
    const onnx::TensorProto *initializer = findInitializer(saved, tensor.name);
    if (!initializer) {
      ADD_FAILURE() << "the saved model has no initializer '" << tensor.name << "'";
      continue;
    }
    EXPECT_EQ(initializer->data_type(), onnxDataType(tensor.dtype)) << tensor.name;
    EXPECT_EQ(std::vector<int64_t>(initializer->dims().begin(), initializer->dims().end()),
              tensor.shape)
        << tensor.name;
    EXPECT_EQ(initializer->data_location(), onnx::TensorProto::DEFAULT) << tensor.name;
    EXPECT_TRUE(initializer->raw_data() == tensor.bytes)
        << "'" << tensor.name << "' holds other values than the saved safetensors";
  }
  for (const onnx::TensorProto &initializer : saved.graph().initializer()) {
    if (trainedNames.count(initializer.name()))
      continue;
    const onnx::TensorProto *kept = findInitializer(source, initializer.name());
    EXPECT_TRUE(kept && kept->SerializeAsString() == initializer.SerializeAsString())
        << "'" << initializer.name() << "' is neither trained nor the source's";
  }
  EXPECT_EQ(saved.graph().initializer_size(),
            static_cast<int>(trainedNames.size()) +
                static_cast<int>(std::count_if(
                    source.graph().initializer().begin(), source.graph().initializer().end(),
                    [&](const onnx::TensorProto &t) { return !trainedNames.count(t.name()); })))
      << "initializers repeat or are missing";

  int removed = 0, next = 0;
  for (const onnx::NodeProto &node : source.graph().node()) {
    if (node.op_type() == "Identity" && trainedNames.count(node.output(0))) {
      ++removed;
      continue;
    }
    if (next >= saved.graph().node_size() ||
        saved.graph().node(next).SerializeAsString() != inferenceForm(node).SerializeAsString()) {
      ADD_FAILURE() << "the saved model lacks or changed node '" << node.name() << "'";
      return removed;
    }
    ++next;
  }
  EXPECT_EQ(next, saved.graph().node_size()) << "the saved model has nodes of its own";

  for (int i = 0; i < saved.graph().input_size(); ++i)
    if (i < source.graph().input_size())
      EXPECT_EQ(saved.graph().input(i).SerializeAsString(),
                source.graph().input(i).SerializeAsString());
    else
      EXPECT_TRUE(trainedNames.count(saved.graph().input(i).name()))
          << "input '" << saved.graph().input(i).name() << "' is no trained initializer";
  onnx::GraphProto sourceRest = source.graph(), savedRest = saved.graph();
  for (onnx::GraphProto *graph : {&sourceRest, &savedRest}) {
    graph->clear_node();
    graph->clear_initializer();
    graph->clear_input();
  }
  EXPECT_EQ(savedRest.SerializeAsString(), sourceRest.SerializeAsString())
      << "outputs, value_info or other graph fields changed";
  onnx::ModelProto sourceModel = source, savedModel = saved;
  sourceModel.clear_graph();
  savedModel.clear_graph();
  EXPECT_EQ(savedModel.SerializeAsString(), sourceModel.SerializeAsString())
      << "IR version, opsets or metadata changed";
  return removed;
}

class TrainingSavesOnnx : public testing::Test {
protected:
  void SetUp() override { dir = scratchDirectory(); }

  /// Builds PROGRAM (dir/train) from `modelPath` with `flags`, then trains it `steps` steps
  /// on `dataPath` twice, saving dir/trained.onnx and dir/trained.safetensors.
  void train(const std::string &modelPath, const std::vector<std::string> &flags,
             const std::string &dataPath, int steps) {
    std::string command = kBin + "/memc " + modelPath;
    for (const std::string &flag : flags)
      command += " '" + flag + "'";
    ASSERT_EQ(run(command + " -o " + program(), dir, output), 0) << output;
    for (const char *saved : {"/trained.onnx", "/trained.safetensors"})
      ASSERT_EQ(run(program() + " --data " + dataPath + " --steps " + std::to_string(steps) +
                        " --save " + dir + saved,
                    dir, output),
                0)
          << output;
  }

  /// The outputs of `memc MODEL --mode=infer` on the inputs of FIXTURE.io.npz.
  NamedArrays infer(const std::string &modelPath, const std::string &fixture) {
    NamedArrays inputs, outputs;
    std::string inputsPath = dir + "/inputs.npz", outputsPath = dir + "/outputs.npz";
    EXPECT_TRUE(readInputs(fixture, inputsPath));
    EXPECT_EQ(run(kBin + "/memc " + modelPath + " --mode=infer -o " + dir + "/infer", dir, output),
              0)
        << output;
    EXPECT_EQ(run(dir + "/infer --inputs " + inputsPath + " --outputs " + outputsPath, dir, output),
              0)
        << output;
    EXPECT_TRUE(readNpz(outputsPath, outputs, error)) << error;
    return outputs;
  }

  /// Writes the inputs of FIXTURE.io.npz (which also holds its outputs) to `path`.
  bool readInputs(const std::string &fixture, const std::string &path) {
    NamedArrays all, inputs;
    onnx::ModelProto model;
    if (!readNpz(kFixtures + "/" + fixture + ".io.npz", all, error) ||
        !loadModel(kFixtures + "/" + fixture + ".onnx", model))
      return false;
    for (const onnx::ValueInfoProto &input : model.graph().input())
      for (auto &[name, array] : all)
        if (name == input.name())
          inputs.emplace_back(name, array);
    return writeNpz(path, inputs, /*compress=*/false, error);
  }

  /// The plan of the program at `path`.
  memc::plan::Plan readPlan(const std::string &path) {
    Bundle bundle;
    memc::plan::Plan plan;
    EXPECT_EQ(readBundle(path, bundle, error), BundleStatus::Found) << error;
    EXPECT_TRUE(plan.ParseFromArray(bundle.plan.data(), static_cast<int>(bundle.plan.size())));
    return plan;
  }

  /// onnx.checker with shape inference, where python3-onnx is installed (tools/setup.sh).
  void checkWithOnnxChecker(const std::string &path) {
    if (run("/usr/bin/python3 -c 'import onnx'", dir, output) != 0) {
      std::printf("python3-onnx is not installed: onnx.checker skipped for %s\n", path.c_str());
      return;
    }
    EXPECT_EQ(run("/usr/bin/python3 -c 'import onnx, sys; onnx.checker.check_model("
                  "onnx.load(sys.argv[1]), full_check=True)' " +
                      path,
                  dir, output),
              0)
        << output;
  }

  std::string program() const { return dir + "/train"; }

  std::string dir, output, error;
};

TEST_F(TrainingSavesOnnx, Gpt2WithDeduplicatedAndTiedWeights) {
  ASSERT_NO_FATAL_FAILURE(train(kFixtures + "/gpt2.onnx",
                                {"--loss", "cross_entropy", "--freeze", "h.*.attn.bias"},
                                kData + "/gpt2.data.npz", 3));
  onnx::ModelProto source, saved;
  ASSERT_TRUE(loadModel(kFixtures + "/gpt2.onnx", source));
  ASSERT_TRUE(loadModel(dir + "/trained.onnx", saved));
  SafetensorsFile trained;
  ASSERT_TRUE(trained.open(dir + "/trained.safetensors", error)) << error;
  // torch.onnx.export recreated 9 LayerNorm, bias and mask tensors from equal ones. The tied
  // embedding stays one initializer that the Gather and the lm_head Transpose both read.
  EXPECT_EQ(checkSavedModel(source, saved, trained), 9);
  EXPECT_TRUE(findInitializer(saved, "wte.weight"));
  // Deduplicated names start equal and train apart.
  const onnx::TensorProto *final = findInitializer(saved, "ln_f.weight");
  const onnx::TensorProto *first = findInitializer(saved, "h.0.ln_1.weight");
  ASSERT_TRUE(final && first);
  EXPECT_NE(final->raw_data(), first->raw_data());
  checkWithOnnxChecker(dir + "/trained.onnx");

  NamedArrays untrained = infer(kFixtures + "/gpt2.onnx", "gpt2");
  NamedArrays fromOnnx = infer(dir + "/trained.onnx", "gpt2");
  EXPECT_GT(largestDifference(fromOnnx, untrained), 1e-2) << "the saved model is untrained";

  // The source model's plan with the trained weights, each parameter from its own tensor.
  ASSERT_EQ(run(kBin + "/memc " + kFixtures + "/gpt2.onnx --mode=infer -o " + dir + "/source", dir,
                output),
            0)
      << output;
  memc::plan::Plan plan = readPlan(dir + "/source");
  for (memc::plan::Binding &parameter : *plan.mutable_parameters())
    parameter.set_source(parameter.name());
  std::string planPath = dir + "/source.plan";
  ASSERT_TRUE(writeFileAtomically(planPath, {plan.SerializeAsString()}, 0644, error)) << error;
  ASSERT_EQ(run(kBin + "/memc-runner --plan " + planPath + " --weights " + dir +
                    "/trained.safetensors --inputs " + dir + "/inputs.npz --outputs " + dir +
                    "/expected.npz",
                dir, output),
            0)
      << output;
  NamedArrays expected;
  ASSERT_TRUE(readNpz(dir + "/expected.npz", expected, error)) << error;
  EXPECT_LE(largestDifference(fromOnnx, expected), 1e-5);
}

TEST_F(TrainingSavesOnnx, ExternalDataBeyondTheProtobufLimit) {
  ASSERT_NO_FATAL_FAILURE(train(kFixtures + "/gpt2.onnx",
                                {"--loss", "cross_entropy", "--freeze", "h.*.attn.bias"},
                                kData + "/gpt2.data.npz", 2));
  // The program's own template and initializers, written as a model beyond the limit would be.
  memc::plan::Plan plan = readPlan(program());
  SafetensorsFile trained;
  ASSERT_TRUE(trained.open(dir + "/trained.safetensors", error)) << error;
  std::vector<OnnxTensor> tensors;
  for (const memc::plan::OnnxInitializer &initializer : plan.training().onnx_initializers()) {
    const SafetensorsTensor *tensor = trained.find(initializer.name());
    ASSERT_TRUE(tensor) << initializer.name();
    tensors.push_back({tensor->name, onnxDataType(tensor->dtype), tensor->shape, tensor->bytes});
  }
  OnnxWriteOptions options;
  options.maxEmbeddedBytes = 0;
  std::string path = dir + "/external.onnx";
  ASSERT_TRUE(writeOnnxModel(path, plan.training().onnx_template(), tensors, options, error))
      << error;

  onnx::ModelProto external, embedded;
  ASSERT_TRUE(loadModel(path, external));
  ASSERT_TRUE(loadModel(dir + "/trained.onnx", embedded));
  std::string data;
  ASSERT_TRUE(readFile(path + ".data", data, error)) << error;
  for (const SafetensorsTensor &tensor : trained.tensors()) {
    const onnx::TensorProto *initializer = findInitializer(external, tensor.name);
    ASSERT_TRUE(initializer) << tensor.name;
    EXPECT_EQ(initializer->data_location(), onnx::TensorProto::EXTERNAL);
    EXPECT_FALSE(initializer->has_raw_data());
    EXPECT_EQ(externalField(*initializer, "location"), "external.onnx.data");
    uint64_t offset = std::stoull(externalField(*initializer, "offset"));
    uint64_t length = std::stoull(externalField(*initializer, "length"));
    ASSERT_LE(offset + length, data.size()) << tensor.name;
    EXPECT_TRUE(std::string_view(data).substr(offset, length) == tensor.bytes) << tensor.name;
  }
  // Apart from where the bytes are, the same model as the embedded save.
  for (onnx::ModelProto *model : {&external, &embedded})
    model->mutable_graph()->clear_initializer();
  EXPECT_EQ(external.SerializeAsString(), embedded.SerializeAsString());
  checkWithOnnxChecker(path);
  EXPECT_EQ(largestDifference(infer(path, "gpt2"), infer(dir + "/trained.onnx", "gpt2")), 0);
}

TEST_F(TrainingSavesOnnx, ModelWithExternalWeightsSavesASelfContainedOne) {
  ASSERT_NO_FATAL_FAILURE(train(kFixtures + "/mlp_external.onnx", {"--loss", "cross_entropy"},
                                kData + "/mlp.data.npz", 2));
  onnx::ModelProto source, saved;
  ASSERT_TRUE(loadModel(kFixtures + "/mlp_external.onnx", source));
  ASSERT_TRUE(loadModel(dir + "/trained.onnx", saved));
  SafetensorsFile trained;
  ASSERT_TRUE(trained.open(dir + "/trained.safetensors", error)) << error;
  EXPECT_EQ(checkSavedModel(source, saved, trained), 0);
  for (const onnx::TensorProto &initializer : saved.graph().initializer())
    EXPECT_EQ(initializer.external_data_size(), 0) << initializer.name();
  EXPECT_FALSE(std::filesystem::exists(dir + "/trained.onnx.data"));
  EXPECT_GT(largestDifference(infer(dir + "/trained.onnx", "mlp"),
                              infer(kFixtures + "/mlp_external.onnx", "mlp")),
            1e-4);
}

// Before IR version 4 initializers were graph inputs too: the recreated ones become inputs.
TEST_F(TrainingSavesOnnx, IrVersion3DeclaresRecreatedInitializersAsInputs) {
  onnx::ModelProto source;
  ASSERT_TRUE(loadModel(kFixtures + "/dedup_identity.onnx", source));
  source.set_ir_version(3);
  for (const onnx::TensorProto &initializer : source.graph().initializer()) {
    onnx::ValueInfoProto *input = source.mutable_graph()->add_input();
    input->set_name(initializer.name());
    auto *type = input->mutable_type()->mutable_tensor_type();
    type->set_elem_type(initializer.data_type());
    for (int64_t dim : initializer.dims())
      type->mutable_shape()->add_dim()->set_dim_value(dim);
  }
  std::string modelPath = dir + "/ir3.onnx", dataPath = dir + "/data.npz";
  ASSERT_TRUE(writeFileAtomically(modelPath, {source.SerializeAsString()}, 0644, error)) << error;
  HostArray x{DType::F32, {6, 32}, std::vector<uint8_t>(6 * 32 * sizeof(float))};
  HostArray labels = x;
  for (int i = 0; i < 6 * 32; ++i) {
    x.as<float>()[i] = std::sin(0.37f * i);
    labels.as<float>()[i] = std::cos(0.11f * i);
  }
  ASSERT_TRUE(writeNpz(dataPath, {{"x", x}, {"labels", labels}}, /*compress=*/false, error))
      << error;
  ASSERT_NO_FATAL_FAILURE(train(modelPath, {"--loss", "mse", "--lr", "0.01"}, dataPath, 3));

  onnx::ModelProto saved;
  ASSERT_TRUE(loadModel(dir + "/trained.onnx", saved));
  SafetensorsFile trained;
  ASSERT_TRUE(trained.open(dir + "/trained.safetensors", error)) << error;
  EXPECT_EQ(checkSavedModel(source, saved, trained), 1);
  const onnx::ValueInfoProto &recreated = saved.graph().input(saved.graph().input_size() - 1);
  EXPECT_EQ(recreated.name(), "ln2.weight");
  EXPECT_EQ(recreated.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  ASSERT_EQ(recreated.type().tensor_type().shape().dim_size(), 1);
  EXPECT_EQ(recreated.type().tensor_type().shape().dim(0).dim_value(), 32);
  EXPECT_NE(findInitializer(saved, "ln1.weight")->raw_data(),
            findInitializer(saved, "ln2.weight")->raw_data());
  checkWithOnnxChecker(dir + "/trained.onnx");
  ASSERT_EQ(run(kBin + "/memc " + dir + "/trained.onnx", dir, output), 0) << output;
}

// Programs compiled before memc saved ONNX models carry no template: --save OUT.onnx is refused
// before the first step, and .safetensors still works.
TEST_F(TrainingSavesOnnx, ProgramWithoutATemplateRefusesBeforeTraining) {
  ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, program()), dir, output), 0)
      << output;
  Bundle bundle;
  ASSERT_EQ(readBundle(program(), bundle, error), BundleStatus::Found) << error;
  memc::plan::Plan plan;
  ASSERT_TRUE(plan.ParseFromArray(bundle.plan.data(), static_cast<int>(bundle.plan.size())));
  ASSERT_FALSE(plan.training().onnx_template().empty());
  plan.mutable_training()->clear_onnx_template();
  plan.mutable_training()->clear_onnx_initializers();
  std::string old = dir + "/old";
  ASSERT_TRUE(
      writeBundle(kBin + "/memc-runner", old, plan.SerializeAsString(), bundle.weights, error))
      << error;
  std::string train = old + " --data " + kData + "/mlp.data.npz --steps 2 --save " + dir;
  EXPECT_EQ(run(train + "/trained.onnx", dir, output), 1);
  EXPECT_NE(output.find("--save " + dir + "/trained.onnx: this program cannot save ONNX models"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("step 1"), std::string::npos) << "refused only after training:\n" << output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/trained.onnx"));
  EXPECT_EQ(run(train + "/trained.safetensors", dir, output), 0) << output;
}

int64_t elementCount(const HostArray &array) {
  int64_t count = 1;
  for (int64_t dim : array.shape)
    count *= dim;
  return count;
}

/// `count` samples of `shape` (the first dimension left out) with values in [-1, 1], and class
/// labels below `classes`.
NamedArrays classificationData(const std::string &input, std::vector<int64_t> shape, int64_t count,
                               int64_t classes) {
  HostArray samples, labels;
  shape.insert(shape.begin(), count);
  samples.shape = shape;
  samples.bytes.resize(elementCount(samples) * sizeof(float));
  for (int64_t i = 0; i < elementCount(samples); ++i)
    samples.as<float>()[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
  labels.dtype = DType::I64;
  labels.shape = {count};
  labels.bytes.resize(count * sizeof(int64_t));
  for (int64_t i = 0; i < count; ++i)
    labels.as<int64_t>()[i] = (i * 3) % classes;
  return {{input, samples}, {"labels", labels}};
}

/// Trains `fixture` (float input `input` of sample shape `shape`, micro-batch `batch`) 3 steps
/// and saves it as ONNX; ONNX Runtime and `memc --mode=infer` must compute the same outputs from
/// the saved model, which holds the inference form of `op`.
void checkAgainstOnnxRuntime(const std::string &fixture, const std::string &input,
                             const std::vector<int64_t> &shape, int64_t batch,
                             const std::string &outputName, const std::string &op) {
  std::string dir = scratchDirectory(), output, error;
  std::string ortModules = MEMC_ORT_NODE_MODULES;
  ASSERT_TRUE(std::filesystem::exists(ortModules + "/onnxruntime-node"))
      << "onnxruntime-node is not installed in " << ortModules
      << ": tools/test.sh installs it (npm install --ignore-scripts)";
  std::string dims = std::to_string(batch);
  for (int64_t dim : shape)
    dims += "x" + std::to_string(dim);
  NamedArrays data = classificationData(input, shape, 2 * batch, 4);
  ASSERT_TRUE(writeNpz(dir + "/data.npz", data, /*compress=*/false, error)) << error;
  ASSERT_EQ(run(memcCommand(fixture,
                            {"--loss", "cross_entropy", "--lr", "0.05", "--input-shape",
                             input + "=" + dims},
                            dir + "/train"),
                dir, output),
            0)
      << output;
  std::string saved = dir + "/trained.onnx";
  ASSERT_EQ(run(dir + "/train --data " + dir + "/data.npz --steps 3 --save " + saved, dir, output),
            0)
      << output;
  onnx::ModelProto model;
  ASSERT_TRUE(loadModel(saved, model));
  int found = 0;
  for (const onnx::NodeProto &node : model.graph().node())
    if (node.op_type() == op) {
      ++found;
      EXPECT_EQ(inferenceForm(node).SerializeAsString(), node.SerializeAsString())
          << op << " '" << node.name() << "' is saved in training form";
    }
  EXPECT_GT(found, 0) << "the saved model has no " << op;

  // One micro-batch, as a float32 file for ONNX Runtime and an npz for memc.
  HostArray batchInput = data[0].second;
  batchInput.shape[0] = batch;
  batchInput.bytes.resize(elementCount(batchInput) * sizeof(float));
  ASSERT_TRUE(writeFileAtomically(dir + "/input.f32",
                                  {std::string(batchInput.bytes.begin(), batchInput.bytes.end())},
                                  0644, error))
      << error;
  ASSERT_TRUE(writeNpz(dir + "/inputs.npz", {{input, batchInput}}, false, error)) << error;
  auto runOrt = [&](const std::string &inputDims, const std::string &inputFile,
                    const std::string &outputFile) {
    return run("NODE_PATH=" + ortModules + " node " + MEMC_TRAINING_TEST_DIR + "/ort_infer.js " +
                   saved + " " + input + " " + inputDims + " " + dir + inputFile + " " +
                   outputName + " " + dir + outputFile,
               dir, output);
  };
  ASSERT_EQ(runOrt(dims, "/input.f32", "/ort.f32"), 0) << output;
  ASSERT_EQ(run(kBin + "/memc " + saved + " --mode=infer --input-shape " + input + "=" + dims +
                    " -o " + dir + "/infer",
                dir, output),
            0)
      << output;
  ASSERT_EQ(run(dir + "/infer --inputs " + dir + "/inputs.npz --outputs " + dir + "/outputs.npz",
                dir, output),
            0)
      << output;
  NamedArrays memcOutputs;
  std::string ortBytes;
  ASSERT_TRUE(readNpz(dir + "/outputs.npz", memcOutputs, error)) << error;
  ASSERT_TRUE(readFile(dir + "/ort.f32", ortBytes, error)) << error;
  ASSERT_EQ(memcOutputs.size(), 1u);
  const HostArray &expected = memcOutputs[0].second;
  ASSERT_EQ(ortBytes.size(), expected.bytes.size());
  const float *ort = reinterpret_cast<const float *>(ortBytes.data());
  double largest = 0, scale = 0;
  for (int64_t i = 0; i < elementCount(expected); ++i) {
    largest = std::max<double>(largest, std::abs(ort[i] - expected.as<float>()[i]));
    scale = std::max<double>(scale, std::abs(expected.as<float>()[i]));
  }
  EXPECT_GT(scale, 0);
  EXPECT_LE(largest, 1e-5 * std::max(1.0, scale)) << "ONNX Runtime and memc differ";

  // In inference form each sample's outputs are its own: batch statistics or dropout would
  // make the first sample's outputs change with the rest of its batch.
  HostArray changed = batchInput;
  int64_t sampleElements = elementCount(batchInput) / batch;
  for (int64_t i = sampleElements; i < elementCount(changed); ++i)
    changed.as<float>()[i] = 2.0f - 3.0f * changed.as<float>()[i];
  ASSERT_TRUE(writeFileAtomically(
      dir + "/changed.f32", {std::string(changed.bytes.begin(), changed.bytes.end())}, 0644, error))
      << error;
  ASSERT_EQ(runOrt(dims, "/changed.f32", "/changed_ort.f32"), 0) << output;
  std::string changedBytes;
  ASSERT_TRUE(readFile(dir + "/changed_ort.f32", changedBytes, error)) << error;
  ASSERT_EQ(changedBytes.size(), ortBytes.size());
  const float *withOthers = reinterpret_cast<const float *>(changedBytes.data());
  double sampleDifference = 0;
  for (size_t i = 0; i < ortBytes.size() / sizeof(float) / batch; ++i)
    sampleDifference = std::max<double>(sampleDifference, std::abs(withOthers[i] - ort[i]));
  EXPECT_LE(sampleDifference, 1e-5 * std::max(1.0, scale))
      << "the saved model's outputs for a sample depend on the rest of its batch";
}

TEST(TrainingSavesOnnxForInference, BatchNormCnnRunsInOnnxRuntime) {
  // Exported by the helper from eval() state: BatchNormalization in training form, whose
  // trained running statistics the saved model must normalize with.
  checkAgainstOnnxRuntime("helper_cnn", "input", {3, 8, 8}, 2, "logits", "BatchNormalization");
}

TEST(TrainingSavesOnnxForInference, DropoutMlpRunsInOnnxRuntime) {
  checkAgainstOnnxRuntime("mlp_dropout", "input", {16}, 4, "output", "Dropout");
}

TEST_F(TrainingSavesOnnx, SaveNamesAFormatByItsExtension) {
  ASSERT_EQ(run(memcCommand("mlp", {"--loss", "cross_entropy"}, program()), dir, output), 0)
      << output;
  EXPECT_EQ(
      run(program() + " --data " + kData + "/mlp.data.npz --steps 1 --save " + dir + "/trained.pt",
          dir, output),
      1);
  EXPECT_NE(output.find("--save " + dir + "/trained.pt: the extension says neither format"),
            std::string::npos)
      << output;
  EXPECT_EQ(output.find("step 1"), std::string::npos) << "refused only after training:\n" << output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/trained.pt"));
}

TEST(TrainingOnnxWriter, RejectsMalformedInput) {
  std::string dir = scratchDirectory(), path = dir + "/model.onnx", error;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.mutable_graph()->set_name("g");
  std::string modelBytes = model.SerializeAsString();
  std::vector<float> values(6);
  std::string_view bytes(reinterpret_cast<const char *>(values.data()), 24);
  auto refuses = [&](std::string_view templateBytes, const std::vector<OnnxTensor> &tensors,
                     const std::string &message) {
    error.clear();
    EXPECT_FALSE(writeOnnxModel(path, templateBytes, tensors, {}, error));
    EXPECT_NE(error.find(message), std::string::npos) << error;
  };
  refuses("", {}, "has no graph");
  refuses(std::string("\x3a\x10", 2), {}, "truncated");
  refuses(modelBytes + modelBytes, {}, "more than one graph");
  refuses(modelBytes, {{"w", 1, {2, 2}, bytes}}, "'w' is f32[2, 2] but has 24 bytes");
  refuses(modelBytes, {{"w", 11, {6}, bytes}}, "data type 11");
  refuses(modelBytes, {{"w", 1, {6}, bytes}, {"w", 1, {6}, bytes}}, "'w' is given twice");
  EXPECT_FALSE(std::filesystem::exists(path));

  ASSERT_TRUE(writeOnnxModel(path, modelBytes, {{"w", 1, {2, 3}, bytes}}, {}, error)) << error;
  onnx::ModelProto written;
  ASSERT_TRUE(loadModel(path, written));
  EXPECT_EQ(written.ir_version(), 8);
  EXPECT_EQ(written.graph().name(), "g");
  ASSERT_EQ(written.graph().initializer_size(), 1);
  EXPECT_EQ(written.graph().initializer(0).raw_data(), std::string(bytes));
}

} // namespace
