//===- SaveTrained.cpp - the trained weights a run saves ------------------===//
#include "runtime/train/SaveTrained.h"
#include "runtime/train/MergedAdapters.h"
#include "runtime/exec/Executor.h"
#include "runtime/io/Files.h"
#include "runtime/io/OnnxWriter.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/PlanLoader.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/FloatConversion.h"

#include <list>
#include <map>
#include <string_view>
#include <vector>

namespace memc::runtime {
namespace {

bool hasExtension(const std::string &path, std::string_view extension) {
  return path.size() > extension.size() &&
         path.compare(path.size() - extension.size(), extension.size(), extension) == 0;
}

bool isOnnxPath(const std::string &path) { return hasExtension(path, ".onnx"); }

/// The initializers of the plan's ONNX template, each checked against the parameter or buffer
/// binding of its name; their bytes are views of `values` (readParameters' arrays, in binding
/// order) when given. A 16-bit model's f32 master weights (MasterWeights.h) are narrowed in
/// `values` to the initializer's type, so the saved model keeps its own types. A LoRA program's
/// adapted and NF4 weights are merged (MergedAdapters.h) into `merged`.
bool onnxInitializers(const plan::Training &training, const LoadedPlan &plan, NamedArrays *values,
                      std::list<HostArray> &merged, std::vector<OnnxTensor> &tensors,
                      std::string &error) {
  if (training.onnx_template().empty()) {
    error = "this program cannot save ONNX models: memc compiled it without the model's "
            "template (before saving ONNX was supported); --save a .safetensors file, or "
            "compile the program again";
    return false;
  }
  std::map<std::string_view, size_t> bindingOf;
  for (size_t i = 0; i < plan.parameters.size(); ++i)
    if (plan::bindingKindInfo(plan.parameters[i].kind).modelWeight)
      bindingOf[plan.parameters[i].name] = i;
  for (const plan::OnnxInitializer &initializer : training.onnx_initializers()) {
    if (isMergedWeight(training, plan, initializer, error)) {
      if (!error.empty())
        return false;
      OnnxTensor tensor{initializer.name(),
                        initializer.data_type(),
                        {initializer.dims().begin(), initializer.dims().end()},
                        {}};
      DType declared;
      if (!dtypeFromOnnx(tensor.dataType, declared) || !convertibleFloats(DType::F32, declared)) {
        error = "the saved weight '" + initializer.name() + "' is not a float tensor";
        return false;
      }
      if (values) {
        HostArray &weight = merged.emplace_back();
        if (!mergedWeight(training, plan, initializer, *values, weight, error))
          return false;
        if (declared != DType::F32) {
          weight.bytes = convertFloats(DType::F32, weight.bytes.data(),
                                       weight.bytes.size() / sizeof(float), declared);
          weight.dtype = declared;
        }
        tensor.bytes = {reinterpret_cast<const char *>(weight.bytes.data()), weight.bytes.size()};
      }
      tensors.push_back(std::move(tensor));
      continue;
    }
    auto found = bindingOf.find(initializer.name());
    if (found == bindingOf.end()) {
      error = "the plan's ONNX initializer '" + initializer.name() +
              "' is not a parameter or buffer of the plan";
      return false;
    }
    const PlanBinding &binding = plan.parameters[found->second];
    const PlanBuffer &buffer = plan.buffers[binding.buffer];
    // A ZeRO stage 3 parameter is saved whole (readWholeParameters).
    const std::vector<int64_t> &shape = binding.shardOf.empty() ? buffer.shape : binding.shardOf;
    OnnxTensor tensor{initializer.name(),
                      initializer.data_type(),
                      {initializer.dims().begin(), initializer.dims().end()},
                      {}};
    DType declared = buffer.dtype;
    bool narrowed = dtypeFromOnnx(tensor.dataType, declared) && declared != buffer.dtype &&
                    convertibleFloats(buffer.dtype, declared);
    if ((!narrowed && tensor.dataType != onnxDataType(buffer.dtype)) ||
        tensor.dims != shape) {
      error = "the plan's ONNX initializer '" + initializer.name() + "' (data type " +
              std::to_string(tensor.dataType) + ", dims " + shapeString(tensor.dims) +
              ") does not match its parameter, " + dtypeString(buffer.dtype) +
              shapeString(shape);
      return false;
    }
    if (values) {
      HostArray &value = (*values)[found->second].second;
      if (narrowed && value.dtype != declared) {
        value.bytes = convertFloats(value.dtype, value.bytes.data(),
                                    value.bytes.size() / elementSize(value.dtype), declared);
        value.dtype = declared;
      }
      tensor.bytes = {reinterpret_cast<const char *>(value.bytes.data()), value.bytes.size()};
    }
    tensors.push_back(std::move(tensor));
  }
  return true;
}

/// How many model weights are 16-bit in the model but held in f32 by the plan (master weights).
size_t masterWeightCount(const plan::Training &training, const LoadedPlan &plan) {
  std::map<std::string_view, DType> held;
  for (const PlanBinding &binding : plan.parameters)
    held[binding.name] = plan.buffers[binding.buffer].dtype;
  size_t count = 0;
  for (const plan::OnnxInitializer &initializer : training.onnx_initializers()) {
    DType declared;
    auto found = held.find(initializer.name());
    count += found != held.end() && dtypeFromOnnx(initializer.data_type(), declared) &&
             declared != found->second && convertibleFloats(found->second, declared);
  }
  return count;
}

/// What a safetensors save writes: (the parameter binding's index, a name) for every model weight,
/// under its own name and each of its saved aliases (the other state_dict names of a tie).
std::vector<std::pair<size_t, std::string>> safetensorsEntries(const plan::Training &training,
                                                               const LoadedPlan &plan) {
  std::vector<std::pair<size_t, std::string>> entries;
  for (size_t i = 0; i < plan.parameters.size(); ++i)
    if (plan::bindingKindInfo(plan.parameters[i].kind).modelWeight) {
      entries.emplace_back(i, plan.parameters[i].name);
      for (const plan::SavedAlias &alias : training.saved_aliases())
        if (alias.name() == plan.parameters[i].name)
          entries.emplace_back(i, alias.alias());
    }
  return entries;
}

} // namespace

std::vector<std::string> filesSavedTo(const std::string &path) {
  if (isOnnxPath(path))
    return {path, onnxExternalDataPath(path)};
  return {path};
}

bool checkSavePath(const plan::Training &training, const LoadedPlan &plan, const std::string &path,
                   std::string &error) {
  if (!prepareOutputFile(path, error))
    return false;
  if (!isOnnxPath(path) && !hasExtension(path, ".safetensors")) {
    error = "--save " + path +
            ": the extension says neither format: name an ONNX model "
            "(.onnx) or a safetensors file (.safetensors)";
    return false;
  }
  // Whatever the save would refuse at the end, refused before the first step.
  if (isOnnxPath(path)) {
    std::vector<OnnxTensor> unused;
    std::list<HostArray> none;
    if (onnxInitializers(training, plan, nullptr, none, unused, error))
      return true;
    error = "--save " + path + ": " + error;
    return false;
  }
  std::vector<std::pair<size_t, std::string>> entries = safetensorsEntries(training, plan);
  std::vector<std::string_view> names;
  for (const auto &entry : entries)
    names.push_back(entry.second);
  if (!checkTensorNames(names, error)) {
    error = "--save " + path + ": " + error;
    return false;
  }
  return true;
}

bool saveParameters(NamedArrays &parameters, const LoadedPlan &plan,
                    const plan::Training &training, const std::string &path,
                    const std::function<void(const std::string &)> &note, std::string &error) {
  if (isOnnxPath(path)) {
    std::vector<OnnxTensor> tensors;
    std::list<HostArray> merged;
    return onnxInitializers(training, plan, &parameters, merged, tensors, error) &&
           writeOnnxModel(path, training.onnx_template(), tensors, {}, error);
  }
  if (size_t count = masterWeightCount(training, plan))
    note("--save " + path + ": " + std::to_string(count) +
         " parameters are 16-bit in the model; they are saved as the f32 master weights "
         "the optimizer updated (load_state_dict converts them to the model's type; "
         "--save OUT.onnx keeps the model's types)");
  std::vector<TensorRef> tensors;
  for (const auto &[index, name] : safetensorsEntries(training, plan))
    tensors.push_back(tensorRef(name, parameters[index].second));
  return writeSafetensors(path, tensors, {{"format", "pt"}, {"producer", "memc"}}, error);
}

} // namespace memc::runtime
