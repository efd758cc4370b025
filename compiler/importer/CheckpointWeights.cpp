//===- CheckpointWeights.cpp - parameters from a Hugging Face checkpoint --===//
#include "compiler/importer/CheckpointWeights.h"

#include "dialects/memc/MemcDialect.h"
#include "runtime/io/Files.h"
#include "runtime/io/Json.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/DTypes.h"

#include <map>
#include <set>
#include <sys/stat.h>

using namespace mlir;

namespace memc {

namespace {

bool isDirectory(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// `flag` names the file in messages: "--weights-from-map F: ...".
bool parseJsonFile(const std::string &flag, const std::string &path, runtime::JsonValue &value,
                   std::string &error) {
  std::string text;
  if (runtime::readFile(path, text, error) && runtime::parseJson(text, value, error))
    return true;
  error = flag + " " + path + ": " + error;
  return false;
}

/// The checkpoint's safetensors files: the one named, the one in a folder, or an index's shards
/// (each once, in the index's order).
bool checkpointFiles(const std::string &path, std::vector<std::string> &files,
                     std::string &error) {
  std::string index = path;
  if (isDirectory(path)) {
    index = path + "/model.safetensors.index.json";
    if (!exists(index)) {
      if (!exists(path + "/model.safetensors")) {
        error = "--weights-from " + path +
                ": the folder has neither model.safetensors nor model.safetensors.index.json";
        return false;
      }
      files = {path + "/model.safetensors"};
      return true;
    }
  } else if (!llvm::StringRef(path).ends_with(".json")) {
    files = {path};
    return true;
  }
  runtime::JsonValue parsed;
  if (!parseJsonFile("--weights-from", index, parsed, error))
    return false;
  const runtime::JsonValue *map = parsed.find("weight_map");
  if (!map || !map->isObject()) {
    error = "--weights-from " + index + ": no \"weight_map\" object (a sharded checkpoint's "
            "index maps each tensor to its file)";
    return false;
  }
  std::set<std::string> seen;
  for (const auto &[name, file] : map->members()) {
    if (!file.isString() || file.string().empty() || file.string().find('/') != std::string::npos) {
      error = "--weights-from " + index + ": tensor '" + name +
              "' maps to no file beside the index";
      return false;
    }
    if (seen.insert(file.string()).second)
      files.push_back(folderOf(index) + "/" + file.string());
  }
  return true;
}

/// --weights-from-map: checkpoint name -> model name, or "" to drop it.
bool readRenames(const std::string &mapPath, std::map<std::string, std::string> &renames,
                 std::string &error) {
  if (mapPath.empty())
    return true;
  runtime::JsonValue parsed;
  if (!parseJsonFile("--weights-from-map", mapPath, parsed, error))
    return false;
  if (!parsed.isObject()) {
    error = "--weights-from-map " + mapPath +
            ": expected a JSON object {\"checkpoint name\": \"model name\" or null}";
    return false;
  }
  for (const auto &[from, to] : parsed.members()) {
    if (!to.isString() && to.kind() != runtime::JsonValue::Kind::Null) {
      error = "--weights-from-map " + mapPath + ": '" + from + "' maps to neither a name nor null";
      return false;
    }
    renames[from] = to.isString() ? to.string() : "";
  }
  return true;
}

/// A parameter or buffer of the model: its argument, kind and the store entry holding its
/// values (another's where the exporter stored equal initializers once).
struct ModelWeight {
  unsigned argument;
  plan::BindingKind kind;
  std::string stored;
  bool bound = false;
};

} // namespace

bool bindCheckpointWeights(func::FuncOp forward, const std::string &path,
                           const std::string &mapPath, WeightStore &weights, std::string &error) {
  std::vector<std::string> files;
  std::map<std::string, std::string> renames;
  if (!checkpointFiles(path, files, error) || !readRenames(mapPath, renames, error))
    return false;
  std::map<std::string, ModelWeight> model;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, kParamNameAttr);
    auto kind = forward.getArgAttrOfType<StringAttr>(i, kParamKindAttr);
    auto source = forward.getArgAttrOfType<StringAttr>(i, kParamSourceAttr);
    if (name && kind)
      model[name.str()] = {i, plan::bindingKindNamed(kind.getValue()),
                           source ? source.str() : name.str()};
  }
  for (const std::string &file : files) {
    std::unique_ptr<runtime::MappedFile> mapped = runtime::MappedFile::open(file, error);
    runtime::SafetensorsFile checkpoint;
    if (!mapped || !checkpoint.parse(mapped->bytes(), error)) {
      error = "--weights-from " + file + ": " + error;
      return false;
    }
    for (const runtime::SafetensorsTensor &tensor : checkpoint.tensors()) {
      auto renamed = renames.find(tensor.name);
      const std::string name = renamed == renames.end() ? tensor.name : renamed->second;
      if (name.empty())
        continue; // dropped by the map
      auto found = model.find(name);
      if (found == model.end()) {
        error = "--weights-from " + file + ": '" + tensor.name +
                "' is no parameter or buffer of the model" +
                (renamed == renames.end() ? "" : " (renamed '" + name + "' by the map)") +
                " (--weights-from-map renames or drops it)";
        return false;
      }
      const StoredTensor *stored = weights.find(found->second.stored);
      const kernels::DTypeInfo *type = kernels::findDType(tensor.dtype);
      if (!tensor.supported || !type || type->kind != kernels::DTypeKind::Float) {
        error = "--weights-from " + file + ": '" + tensor.name + "' is " + tensor.dtypeName +
                "; memc reads F32, F16 and BF16 weights";
        return false;
      }
      if (!stored || stored->shape != tensor.shape) {
        error = "--weights-from " + file + ": '" + tensor.name + "' has shape " +
                runtime::shapeString(tensor.shape) + ", the model's '" + name + "' " +
                (stored ? runtime::shapeString(stored->shape) : std::string("none"));
        return false;
      }
      // Its own entry, named after it: tensors the exporter stored once (equal norm scales)
      // may differ in a trained checkpoint.
      StoredTensor rebound = *stored;
      rebound.name = name;
      forward.removeArgAttr(found->second.argument, kParamSourceAttr);
      rebound.dataType = type->onnxDataType;
      rebound.file = file;
      rebound.offset = static_cast<uint64_t>(tensor.bytes.data() - mapped->bytes().data());
      rebound.length = tensor.bytes.size();
      rebound.inlineBytes.clear();
      weights.add(std::move(rebound));
      found->second.bound = true;
    }
  }
  std::vector<std::string> missing;
  for (const auto &[name, weight] : model)
    if (!weight.bound && weight.kind == plan::KIND_PARAMETER)
      missing.push_back(name);
  if (missing.empty())
    return true;
  error = "--weights-from " + path + ": the checkpoint has no '" + missing.front() + "'";
  if (missing.size() > 1)
    error += " (nor " + std::to_string(missing.size() - 1) + " other parameters)";
  error += "; --weights-from-map renames a checkpoint's tensors to the model's names";
  return false;
}

} // namespace memc
