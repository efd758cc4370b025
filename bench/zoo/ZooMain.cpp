//===- ZooMain.cpp - memc-zoo command line ---------------------------------===//
//
// Writes OUT.onnx and OUT.onnx.data for one architecture at its published size (or a shrunken test
// version), so benchmarks and end-to-end tests need no downloads and no Python.
//
//===----------------------------------------------------------------------===//

#include "ZooModels.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace memc::zoo {
namespace {

const char *const kUsage =
    "usage: memc-zoo --model NAME --batch B --seq T|dynamic [--weights random|zeros|none]\n"
    "                -o OUT.onnx [--layers N] [--vocab V]\n"
    "\n"
    "Writes an ONNX model (opset 17, torch.onnx.export's node patterns, static shapes\n"
    "unless --seq dynamic) to OUT.onnx and all of its initializers to OUT.onnx.data as\n"
    "ONNX external data (64-byte aligned offsets).\n"
    "\n"
    "  --model NAME     one of the models below\n"
    "  --batch B        batch size baked into the input shape\n"
    "  --seq T          tokens per sequence; for resnet50 the image side (optional, default 224)\n"
    "  --seq dynamic    LLaMA models: input_ids [B, \"sequence\"], a symbolic axis that no\n"
    "                   tensor is sized by, so a compiler can bind any length\n"
    "  --weights MODE   random: parameters ~ N(0, 0.02) (convs: kaiming), norm scales 1, biases 0,\n"
    "                           deterministic per initializer name (default)\n"
    "                   zeros:  parameters all 0; buffers (masks, position ids, RoPE tables,\n"
    "                           BatchNorm statistics) real, so the model still computes correctly\n"
    "                   none:   nothing written; the data file is a hole of the right size, for\n"
    "                           compile-only benchmarks (every value reads as 0)\n"
    "  -o OUT.onnx      output model; the data file is OUT.onnx.data beside it\n"
    "  --layers N       test override: N transformer blocks (resnet50: at most N blocks per stage)\n"
    "  --vocab V        test override: vocabulary of V tokens (transformers only)\n"
    "\n"
    "models:\n";

struct CommandLine {
  std::string model;
  std::string output;
  WeightsMode weights = WeightsMode::Random;
  std::string weightsName = "random";
  ZooOptions options;
};

int usageError(const std::string &message) {
  std::fprintf(stderr, "memc-zoo: error: %s\n(run memc-zoo --help for usage)\n", message.c_str());
  return 1;
}

void printUsage() {
  std::fputs(kUsage, stdout);
  for (const ZooModel &model : zooModels())
    std::printf("  %-10s %s\n", model.name, model.summary);
}

bool parsePositive(const std::string &text, int64_t limit, int64_t &value) {
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || parsed <= 0 || parsed > limit)
    return false;
  value = parsed;
  return true;
}

/// A numeric option and its largest value. The limits keep every size the models derive from them
/// (a vocab x width embedding, a batch x 3 x side x side image) far inside 64 bits, and are beyond
/// any published model: Gemma's vocabulary is 256K tokens.
struct NumericOption {
  int64_t *value;
  int64_t limit;
};

NumericOption numericOption(ZooOptions &options, const std::string &flag) {
  if (flag == "--batch")
    return {&options.batch, int64_t(1) << 20};
  if (flag == "--seq")
    return {&options.seq, int64_t(1) << 20};
  if (flag == "--layers")
    return {&options.layers, int64_t(1) << 16};
  if (flag == "--vocab")
    return {&options.vocab, int64_t(1) << 24};
  return {nullptr, 0};
}

/// Returns -1 when the command line is good, else the exit code (0 after --help, 1 on an error).
int parseCommandLine(int argc, char **argv, CommandLine &cl) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      printUsage();
      return 0;
    }
    if (i + 1 >= argc)
      return usageError("'" + flag + "' needs a value");
    std::string value = argv[++i];
    if (flag == "--model") {
      cl.model = value;
    } else if (flag == "-o") {
      cl.output = value;
    } else if (flag == "--seq" && value == "dynamic") {
      cl.options.dynamicSeq = true;
      cl.options.seq = 0;
    } else if (flag == "--weights") {
      cl.weightsName = value;
      if (value == "random")
        cl.weights = WeightsMode::Random;
      else if (value == "zeros")
        cl.weights = WeightsMode::Zeros;
      else if (value == "none")
        cl.weights = WeightsMode::None;
      else
        return usageError("--weights must be random, zeros or none, not '" + value + "'");
    } else if (NumericOption number = numericOption(cl.options, flag); number.value) {
      if (!parsePositive(value, number.limit, *number.value))
        return usageError(flag + " needs a positive integer of at most " +
                          std::to_string(number.limit) + ", not '" + value + "'");
      if (flag == "--seq")
        cl.options.dynamicSeq = false; // the last --seq wins, as with every option
    } else {
      return usageError("unknown option '" + flag + "'");
    }
  }
  if (cl.model.empty())
    return usageError("--model is required");
  if (cl.options.batch == 0)
    return usageError("--batch is required");
  if (cl.output.empty())
    return usageError("-o OUT.onnx is required");
  return -1;
}

/// Checks --seq against the chosen model and fills in its default.
int resolveSeq(const ZooModel &model, ZooOptions &options) {
  const std::string name = model.name;
  if (options.dynamicSeq) {
    if (model.hasDynamicSeq)
      return -1;
    std::string accepting;
    for (const ZooModel &candidate : zooModels())
      if (candidate.hasDynamicSeq)
        accepting += std::string(accepting.empty() ? "" : ", ") + candidate.name;
    return usageError("--seq dynamic does not apply to " + name + " (only to " + accepting + ")");
  }
  if (options.seq == 0)
    options.seq = model.defaultSeq;
  if (options.seq == 0)
    return usageError("--seq is required for " + name);
  if (model.maxSeq > 0 && options.seq > model.maxSeq)
    return usageError("--seq " + std::to_string(options.seq) + " exceeds " + name + "'s limit of " +
                      std::to_string(model.maxSeq));
  if (options.seq < model.minSeq)
    return usageError(name + " needs --seq of at least " + std::to_string(model.minSeq));
  return -1;
}

/// Checks the options against the chosen model and fills in its defaults.
int resolveForModel(const ZooModel &model, ZooOptions &options) {
  const std::string name = model.name;
  if (int code = resolveSeq(model, options); code >= 0)
    return code;
  if (options.layers > model.depth)
    return usageError(name + " has at most " + std::to_string(model.depth) + " " +
                      model.depthUnit);
  if (options.vocab > 0 && !model.hasVocab)
    return usageError("--vocab does not apply to " + name);
  return -1;
}

std::string dataLocationFor(const std::string &output) {
  size_t slash = output.find_last_of('/');
  return (slash == std::string::npos ? output : output.substr(slash + 1)) + ".data";
}

std::string describe(const CommandLine &cl) {
  std::string text = "memc-zoo --model " + cl.model + " --batch " +
                     std::to_string(cl.options.batch) + " --seq " +
                     (cl.options.dynamicSeq ? "dynamic" : std::to_string(cl.options.seq)) +
                     " --weights " + cl.weightsName;
  if (cl.options.layers > 0)
    text += " --layers " + std::to_string(cl.options.layers);
  if (cl.options.vocab > 0)
    text += " --vocab " + std::to_string(cl.options.vocab);
  return text;
}

int run(int argc, char **argv) {
  const auto start = std::chrono::steady_clock::now();
  CommandLine cl;
  if (int code = parseCommandLine(argc, argv, cl); code >= 0)
    return code;
  const ZooModel *model = nullptr;
  for (const ZooModel &candidate : zooModels())
    if (cl.model == candidate.name)
      model = &candidate;
  if (!model)
    return usageError("unknown model '" + cl.model + "'");
  if (int code = resolveForModel(*model, cl.options); code >= 0)
    return code;

  OnnxGraphBuilder builder(cl.model, dataLocationFor(cl.output));
  model->build(builder, cl.options);
  // The doc string records how to regenerate the model, so a benchmark result can name its input.
  builder.model().set_doc_string(describe(cl));

  // Both files are written beside their final names and renamed only when both are complete, so a
  // failed run (a full disk, a bad folder) leaves nothing behind and never a half-written model.
  const std::string dataPath = cl.output + ".data";
  const std::string partial = ".partial-" + std::to_string(getpid());
  const std::string modelTemporary = cl.output + partial, dataTemporary = dataPath + partial;
  auto fail = [&](const std::string &message) {
    std::remove(modelTemporary.c_str());
    std::remove(dataTemporary.c_str());
    std::fprintf(stderr, "memc-zoo: error: %s\n", message.c_str());
    return 1;
  };
  {
    std::ofstream out(modelTemporary, std::ios::binary | std::ios::trunc);
    if (!out || !builder.model().SerializeToOstream(&out) || !out.flush())
      return fail("cannot write '" + cl.output + "'");
  }
  std::string error;
  if (!writeExternalDataFile(dataTemporary, builder.externalTensors(), builder.externalDataSize(),
                             cl.weights, error))
    return fail(error);
  // The data first: a model never names data that is not there yet.
  if (std::rename(dataTemporary.c_str(), dataPath.c_str()) != 0)
    return fail("cannot write '" + dataPath + "': " + std::strerror(errno));
  if (std::rename(modelTemporary.c_str(), cl.output.c_str()) != 0)
    return fail("cannot write '" + cl.output + "': " + std::strerror(errno));

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %llu parameters, %llu buffer elements, %d nodes, %d initializers\n"
              "wrote %s (%zu bytes) and %s (%llu bytes) in %.2f s\n",
              describe(cl).c_str(), (unsigned long long)builder.parameterCount(),
              (unsigned long long)builder.bufferElementCount(),
              builder.model().graph().node_size(), builder.model().graph().initializer_size(),
              cl.output.c_str(), builder.model().ByteSizeLong(), dataPath.c_str(),
              (unsigned long long)builder.externalDataSize(), seconds);
  return 0;
}

} // namespace
} // namespace memc::zoo

int main(int argc, char **argv) { return memc::zoo::run(argc, argv); }
