//===- SaveAdapter.cpp - LoRA adapters in PEFT's format -------------------===//
#include "runtime/train/SaveAdapter.h"
#include "runtime/io/Files.h"
#include "runtime/io/Json.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/Plan.pb.h"
#include "runtime/support/FloatConversion.h"

#include <cstdio>
#include <sys/stat.h>

namespace memc::runtime {

namespace {

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() > suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string configJson(const plan::LoraAdapters &lora) {
  std::string modules;
  for (const std::string &module : lora.target_modules())
    modules += (modules.empty() ? "" : ", ") + jsonQuote(module);
  char numbers[128];
  std::snprintf(numbers, sizeof(numbers), "\"r\": %lld,\n  \"lora_alpha\": %.17g,\n"
                                          "  \"lora_dropout\": %.17g,\n",
                static_cast<long long>(lora.rank()), lora.alpha(), lora.dropout());
  // PEFT has one flag for all modules: set when every adapted weight is stored [in, out].
  bool fanInFanOut = !lora.fan_in_fan_out().empty();
  for (bool each : lora.fan_in_fan_out())
    fanInFanOut = fanInFanOut && each;
  return "{\n  \"peft_type\": \"LORA\",\n  " + std::string(numbers) +
         "  \"target_modules\": [" + modules + "],\n  \"bias\": \"none\",\n"
         "  \"fan_in_fan_out\": " + (fanInFanOut ? "true" : "false") +
         ",\n  \"inference_mode\": true,\n"
         "  \"base_model_name_or_path\": null,\n  \"task_type\": null\n}\n";
}

} // namespace

std::vector<std::string> adapterFiles(const std::string &dir) {
  return {dir + "/adapter_model.safetensors", dir + "/adapter_config.json"};
}

bool checkSaveAdapter(const plan::Training &training, const std::string &dir, std::string &error) {
  if (!training.has_lora() || training.lora().target_modules().empty()) {
    error = "--save-adapter: this program trains no LoRA adapters (memc --lora-rank R "
            "--lora-targets ... compiles one that does); --save writes its parameters";
    return false;
  }
  struct stat info;
  if (::stat(dir.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) {
    error = "--save-adapter " + dir + ": not a folder (it names a folder to write the adapter's "
            "two files into)";
    return false;
  }
  if (::stat(dir.c_str(), &info) != 0 && ::mkdir(dir.c_str(), 0777) != 0) {
    error = "--save-adapter " + dir + ": cannot make the folder (its parent must exist)";
    return false;
  }
  for (const std::string &file : adapterFiles(dir))
    if (!prepareOutputFile(file, error)) {
      error = "--save-adapter: " + error;
      return false;
    }
  return true;
}

bool saveAdapter(const NamedArrays &parameters, const plan::Training &training,
                 const std::string &dir, std::string &error) {
  std::vector<HostArray> widened;
  widened.reserve(parameters.size());
  std::vector<std::string> names;
  for (const auto &[name, array] : parameters) {
    if (!endsWith(name, ".lora_A.weight") && !endsWith(name, ".lora_B.weight"))
      continue;
    // A 16-bit model's adapters train as f32 master weights already; PEFT loads f32 into any.
    HostArray value = array;
    if (value.dtype != DType::F32) {
      value.bytes = convertFloats(value.dtype, value.bytes.data(),
                                  value.bytes.size() / elementSize(value.dtype), DType::F32);
      value.dtype = DType::F32;
    }
    widened.push_back(std::move(value));
    names.push_back("base_model.model." + name);
  }
  std::vector<TensorRef> tensors;
  for (size_t i = 0; i < names.size(); ++i)
    tensors.push_back(tensorRef(names[i], widened[i]));
  const std::vector<std::string> files = adapterFiles(dir);
  const std::string config = configJson(training.lora());
  return writeSafetensors(files[0], tensors, {{"format", "pt"}, {"producer", "memc"}}, error) &&
         writeFileAtomically(files[1], {config}, 0666, error);
}

} // namespace memc::runtime
