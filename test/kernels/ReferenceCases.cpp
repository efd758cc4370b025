//===- ReferenceCases.cpp - reading references.txt ------------------------===//
#include "ReferenceCases.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace memc::kernels::testing {

namespace {

DType parseDType(const std::string &name) {
  static const std::map<std::string, DType> names = {{"f32", DType::F32},   {"f16", DType::F16},
                                                     {"bf16", DType::BF16}, {"i64", DType::I64},
                                                     {"i32", DType::I32},   {"i1", DType::Bool},
                                                     {"ui8", DType::U8}};
  auto it = names.find(name);
  if (it == names.end())
    throw std::runtime_error("unknown dtype " + name);
  return it->second;
}

OwnedTensor parseTensor(std::istringstream &line) {
  std::string dtypeName;
  int64_t rank;
  line >> dtypeName >> rank;
  Shape shape(rank);
  for (int64_t &dim : shape)
    line >> dim;
  OwnedTensor t(parseDType(dtypeName), shape);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    std::string token;
    line >> token;
    switch (t.dtype) {
    case DType::F32:
      t.as<float>()[i] = std::strtof(token.c_str(), nullptr);
      break;
    case DType::F16:
    case DType::BF16:
      t.as<uint16_t>()[i] = static_cast<uint16_t>(std::stoul(token));
      break;
    case DType::I64:
      t.as<int64_t>()[i] = std::stoll(token);
      break;
    case DType::I32:
      t.as<int32_t>()[i] = static_cast<int32_t>(std::stol(token));
      break;
    case DType::Bool:
      t.as<uint8_t>()[i] = token == "1";
      break;
    case DType::U8: // max_pool_with_argmax's window taps
      t.as<uint8_t>()[i] = static_cast<uint8_t>(std::stoul(token));
      break;
    default: // storage-only types: no kernel computes them
      break;
    }
  }
  if (!line)
    throw std::runtime_error("truncated tensor");
  return t;
}

void parseAttribute(std::istringstream &line, Attributes &attributes) {
  std::string name, kind;
  line >> name >> kind;
  if (kind == "i") {
    int64_t value;
    line >> value;
    attributes.set(name, value);
  } else if (kind == "f") {
    std::string token;
    line >> token;
    attributes.set(name, std::strtod(token.c_str(), nullptr));
  } else if (kind == "ints") {
    size_t count;
    line >> count;
    std::vector<int64_t> values(count);
    for (int64_t &value : values)
      line >> value;
    attributes.set(name, values);
  } else if (kind == "s") {
    std::string value;
    line >> value;
    attributes.set(name, value);
  } else {
    throw std::runtime_error("unknown attribute kind " + kind);
  }
}

std::vector<ReferenceCase> loadReferences() {
  const char *chosen = std::getenv("MEMC_KERNEL_REFERENCES");
  const std::string path = chosen && *chosen ? chosen : MEMC_KERNEL_REFERENCES;
  std::ifstream file(path);
  if (!file)
    throw std::runtime_error("cannot open " + path);
  std::vector<ReferenceCase> cases;
  std::string text;
  while (std::getline(file, text)) {
    std::istringstream line(text);
    std::string tag;
    line >> tag;
    if (tag.empty() || tag[0] == '#')
      continue;
    if (tag == "case") {
      cases.emplace_back();
      line >> cases.back().name >> cases.back().kernel;
    } else if (tag == "attr") {
      parseAttribute(line, cases.back().attributes);
    } else if (tag == "in") {
      cases.back().inputs.push_back(parseTensor(line));
    } else if (tag == "out") {
      cases.back().outputs.push_back(parseTensor(line));
    } else if (tag == "tol") {
      line >> cases.back().rtol >> cases.back().atol;
    } else if (tag != "end") {
      throw std::runtime_error("unknown record " + tag);
    }
  }
  return cases;
}

} // namespace

const std::vector<ReferenceCase> &references() {
  static const std::vector<ReferenceCase> cases = loadReferences();
  return cases;
}

void referenceTolerance(const ReferenceCase &c, DType dtype, double &rtol, double &atol) {
  switch (dtype) {
  case DType::F32:
    rtol = 1e-5, atol = 1e-6;
    break;
  case DType::F16: // two units in the last place
    rtol = 2e-3, atol = 1e-5;
    break;
  case DType::BF16:
    rtol = 1.6e-2, atol = 1e-5;
    break;
  default:
    rtol = atol = 0;
  }
  if (c.rtol >= 0 && isFloating(dtype))
    rtol = c.rtol, atol = c.atol;
}

const std::set<std::string> &inPlaceKernels() {
  static const std::set<std::string> kernels = {
      "neg",     "exp",         "log",        "sqrt",       "reciprocal", "erf",          "tanh",
      "sigmoid", "relu",        "not",        "gelu",       "clip",       "trilu",        "dropout",
      "add",     "sub",         "mul",        "div",        "pow",        "where",        "cast",
      "softmax", "log_softmax", "layer_norm", "rms_norm",   "batch_norm", "abs",          "sin",
      "cos",     "softplus",    "hard_swish", "leaky_relu", "elu",        "hard_sigmoid", "max",
      "min",     "prelu",       "bias_gelu"};
  return kernels;
}

bool canAlias(const OwnedTensor &input, const OwnedTensor &output) {
  return input.shape == output.shape && dtypeSize(input.dtype) == dtypeSize(output.dtype);
}

std::vector<ReferenceCase> inPlaceCases() {
  std::vector<ReferenceCase> cases;
  for (const ReferenceCase &c : references())
    if (inPlaceKernels().count(c.kernel) &&
        std::any_of(c.inputs.begin(), c.inputs.end(),
                    [&](const OwnedTensor &input) { return canAlias(input, c.outputs[0]); }))
      cases.push_back(c);
  return cases;
}

} // namespace memc::kernels::testing
