//===- ExportMetadata.cpp - what memc's export helper records ----------------===//
//
// The helper's keys are JSON values in metadata_props. A model carries either all of them or
// none; anything in between, or JSON memc cannot read, is a broken file and an import error
// rather than a silent fall-back to the guesses for plain exports.
//
//===----------------------------------------------------------------------===//
#include "compiler/importer/ExportMetadata.h"
#include "compiler/importer/OnnxTypes.h"
#include "runtime/io/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <vector>

namespace memc {
namespace {

constexpr const char *kVersionKey = "memc.export_version";
constexpr const char *kParametersKey = "memc.parameters";
constexpr const char *kBuffersKey = "memc.buffers";
constexpr const char *kPaddingKey = "memc.padding_idx";
constexpr const char *kExampleShapesKey = "memc.example_shapes";
constexpr const char *kTiedKey = "memc.tied";
// Written by the helper for the dynamic batch axis; memc reads the axis off the graph for now.
constexpr const char *kBatchAxisKey = "memc.batch_axis";
constexpr const char *kSupportedVersion = "1";
constexpr const char *kKnownKeys[] = {kVersionKey, kParametersKey,    kBuffersKey, kPaddingKey,
                                      kTiedKey,    kExampleShapesKey, kBatchAxisKey};

using runtime::JsonValue;

/// Parses the JSON `value` of `key` into `parsed`, with the runtime's strict reader: bounded
/// nesting (a value of 100,000 `[` must not exhaust the stack) and no duplicate object keys.
bool parseJson(const std::string &key, const std::string &value, JsonValue &parsed,
               std::string &error) {
  std::string why;
  if (runtime::parseJson(value, parsed, why))
    return true;
  error = "metadata_props '" + key + "' is not valid JSON (" + why + ")";
  return false;
}

/// Whether `name`, which `key` lists, is one of the model's initializers.
bool checkInitializer(const std::string &key, const std::string &name,
                      const std::set<std::string> &initializers, std::string &error) {
  if (initializers.count(name))
    return true;
  error =
      "metadata_props '" + key + "' names '" + name + "', which is not an initializer of the model";
  return false;
}

/// Reads `key`'s JSON list of initializer names into `names`, checking that each is one.
bool readNameList(const std::string &key, const std::string &value,
                  const std::set<std::string> &initializers, std::set<std::string> &names,
                  std::string &error) {
  JsonValue parsed;
  if (!parseJson(key, value, parsed, error))
    return false;
  if (!parsed.isArray()) {
    error = "metadata_props '" + key + "' must be a JSON list of initializer names";
    return false;
  }
  for (const JsonValue &entry : parsed.elements()) {
    if (!entry.isString()) {
      error = "metadata_props '" + key + "' must be a JSON list of initializer names";
      return false;
    }
    if (!checkInitializer(key, entry.string(), initializers, error))
      return false;
    names.insert(entry.string());
  }
  return true;
}

/// Reads the JSON object {initializer name: row} of `key` into `rows`.
bool readPaddingRows(const std::string &key, const std::string &value,
                     const std::set<std::string> &initializers,
                     std::map<std::string, int64_t> &rows, std::string &error) {
  JsonValue parsed;
  if (!parseJson(key, value, parsed, error))
    return false;
  if (!parsed.isObject()) {
    error = "metadata_props '" + key + "' must be a JSON object {embedding weight name: row}";
    return false;
  }
  for (const auto &[name, row] : parsed.members()) {
    if (!row.isInteger() || row.integer() < 0) {
      error = "metadata_props '" + key + "' gives '" + name +
              "' a row that is not a non-negative integer";
      return false;
    }
    if (!checkInitializer(key, name, initializers, error))
      return false;
    rows[name] = row.integer();
  }
  return true;
}

/// Reads the JSON object {graph input: [dims]} of `key` into `shapes`.
bool readExampleShapes(const std::string &key, const std::string &value,
                       const std::set<std::string> &inputs,
                       std::map<std::string, std::vector<int64_t>> &shapes, std::string &error) {
  JsonValue parsed;
  if (!parseJson(key, value, parsed, error))
    return false;
  if (!parsed.isObject()) {
    error = "metadata_props '" + key + "' must be a JSON object {graph input: [dims]}";
    return false;
  }
  for (const auto &[name, dims] : parsed.members()) {
    bool positive = dims.isArray();
    std::vector<int64_t> shape;
    for (size_t i = 0; positive && i < dims.elements().size(); ++i) {
      const JsonValue &dim = dims.elements()[i];
      positive = dim.isInteger() && dim.integer() > 0;
      shape.push_back(dim.integer());
    }
    if (!positive) {
      error = "metadata_props '" + key + "' gives '" + name +
              "' a shape that is not a list of positive integers";
      return false;
    }
    if (!inputs.count(name)) {
      error = "metadata_props '" + key + "' names '" + name +
              "', which is not a graph input of the model";
      return false;
    }
    shapes[name] = std::move(shape);
  }
  return true;
}

/// Reads `key`'s JSON list of tied groups (lists of names) into `groups`: the first name of each
/// is an initializer, the others are not.
bool readTiedGroups(const std::string &key, const std::string &value,
                    const std::set<std::string> &initializers,
                    std::vector<std::vector<std::string>> &groups, std::string &error) {
  JsonValue parsed;
  if (!parseJson(key, value, parsed, error))
    return false;
  bool wellFormed = parsed.isArray();
  std::set<std::string> aliases;
  for (size_t g = 0; wellFormed && g < parsed.elements().size(); ++g) {
    const JsonValue &group = parsed.elements()[g];
    wellFormed = group.isArray() && group.elements().size() >= 2;
    std::vector<std::string> names;
    for (size_t i = 0; wellFormed && i < group.elements().size(); ++i) {
      wellFormed = group.elements()[i].isString();
      names.push_back(group.elements()[i].string());
    }
    if (!wellFormed)
      break;
    if (!checkInitializer(key, names[0], initializers, error))
      return false;
    for (size_t i = 1; i < names.size(); ++i) {
      // --save writes each name as a safetensors tensor: refused here, not after training.
      if (names[i].empty() || names[i] == "__metadata__" || !aliases.insert(names[i]).second) {
        error = "metadata_props '" + key + "' names \"" + names[i] + "\" as a tied name" +
                (names[i].empty() || names[i] == "__metadata__"
                     ? ", which a safetensors file cannot hold"
                     : " twice");
        return false;
      }
      if (initializers.count(names[i])) {
        error = "metadata_props '" + key + "' ties '" + names[i] + "' to '" + names[0] +
                "', but the model holds both as initializers, which would train apart (export "
                "the model again with python/memc_export.py, without constant folding)";
        return false;
      }
    }
    groups.push_back(std::move(names));
  }
  if (!wellFormed) {
    error = "metadata_props '" + key + "' must be a JSON list of lists of two or more names";
    return false;
  }
  return true;
}

} // namespace

bool readExportMetadata(const onnx::ModelProto &model, std::optional<ExportMetadata> &metadata,
                        std::string &error) {
  metadata.reset();
  std::map<std::string, std::string> props;
  for (const onnx::StringStringEntryProto &entry : model.metadata_props())
    if (llvm::StringRef(entry.key()).starts_with("memc.") &&
        !props.emplace(entry.key(), entry.value()).second) {
      error = "metadata_props has '" + entry.key() +
              "' twice (which one counts is undefined; onnx.checker refuses such files)";
      return false;
    }
  if (props.empty())
    return true;

  auto version = props.find(kVersionKey);
  if (version == props.end()) {
    error = std::string("metadata_props has memc.* keys but no '") + kVersionKey +
            "' (write the model with python/memc_export.py)";
    return false;
  }
  JsonValue parsedVersion;
  if (!parseJson(kVersionKey, version->second, parsedVersion, error))
    return false;
  if (!parsedVersion.isString() || parsedVersion.string() != kSupportedVersion) {
    error = std::string("metadata_props '") + kVersionKey + "' is " + version->second +
            "; this memc reads version \"" + kSupportedVersion + "\"";
    return false;
  }
  auto parameters = props.find(kParametersKey);
  if (parameters == props.end()) {
    error = std::string("metadata_props has no '") + kParametersKey + "'";
    return false;
  }

  std::set<std::string> initializers;
  for (const onnx::TensorProto &initializer : model.graph().initializer())
    initializers.insert(initializer.name());
  ExportMetadata read;
  for (const auto &entry : props)
    if (!llvm::is_contained(kKnownKeys, entry.first))
      read.unknownKeys.push_back(entry.first);
  if (!readNameList(kParametersKey, parameters->second, initializers, read.parameters, error))
    return false;
  for (const onnx::TensorProto &initializer : model.graph().initializer())
    if (read.parameters.count(initializer.name()) && !isFloatingOnnxType(initializer.data_type())) {
      error = std::string("metadata_props '") + kParametersKey + "' names '" + initializer.name() +
              "', an " + onnxDataTypeName(initializer.data_type()) +
              " initializer, which cannot train";
      return false;
    }
  // Buffers are every initializer that is not a parameter; the list is checked, not needed.
  if (auto buffers = props.find(kBuffersKey); buffers != props.end()) {
    std::set<std::string> bufferNames;
    if (!readNameList(kBuffersKey, buffers->second, initializers, bufferNames, error))
      return false;
    for (const std::string &name : bufferNames)
      if (read.parameters.count(name)) {
        error = "metadata_props lists '" + name + "' in both '" + kParametersKey + "' and '" +
                kBuffersKey + "'";
        return false;
      }
  }
  if (auto padding = props.find(kPaddingKey); padding != props.end())
    if (!readPaddingRows(kPaddingKey, padding->second, initializers, read.paddingRows, error))
      return false;
  if (auto tied = props.find(kTiedKey); tied != props.end())
    if (!readTiedGroups(kTiedKey, tied->second, initializers, read.tied, error))
      return false;
  if (auto shapes = props.find(kExampleShapesKey); shapes != props.end()) {
    std::set<std::string> inputs;
    for (const onnx::ValueInfoProto &input : model.graph().input())
      inputs.insert(input.name());
    if (!readExampleShapes(kExampleShapesKey, shapes->second, inputs, read.exampleShapes, error))
      return false;
  }
  metadata = std::move(read);
  return true;
}

} // namespace memc
