//===- ProgramWriter.cpp - plan + weights -> one executable ---------------===//
#include "compiler/lowering/ProgramWriter.h"
#include "compiler/importer/WeightStore.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Files.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/FloatConversion.h"

#include <map>
#include <memory>
#include <set>

namespace memc {

namespace {

/// The plan's weights file in parts: its prefix (header), then each source tensor's bytes where
/// they lie, a view of the model's mapped file where the program stores the model's own bytes,
/// or of `converted` (typed-field data, 16-bit values widened to the plan's f32).
struct WeightParts {
  std::map<std::string, std::unique_ptr<runtime::MappedFile>> mapped;
  std::vector<std::vector<char>> converted;
  std::string prefix;
  std::vector<std::string_view> parts;
};

bool layOutWeights(const plan::Plan &plan, const WeightStore &weights, WeightParts &out,
                   std::string &error) {
  // The runtime initializes each parameter from its source tensor: store each source once.
  out.converted.resize(plan.parameters_size());
  std::vector<runtime::TensorRef> tensors;
  std::set<std::string> written;
  for (int i = 0; i < plan.parameters_size(); ++i) {
    const plan::Binding &binding = plan.parameters(i);
    const std::string &source = binding.source().empty() ? binding.name() : binding.source();
    if (!plan::bindingKindInfo(binding.kind()).modelWeight || !written.insert(source).second)
      continue;
    const StoredTensor *stored = weights.find(source);
    if (!stored) {
      error = "parameter '" + binding.name() + "': the model has no initializer '" + source + "'";
      return false;
    }
    const plan::Buffer &buffer = plan.buffers(binding.buffer());
    auto dtype = static_cast<runtime::DType>(buffer.dtype());
    // A 16-bit model's parameters train in f32 (MasterWeights.h): its values widen exactly.
    const kernels::DTypeInfo *storedType = kernels::findOnnxDType(stored->dataType);
    const bool widens = storedType && storedType->dtype != dtype &&
                        runtime::convertibleFloats(storedType->dtype, dtype);
    std::string_view bytes;
    std::vector<char> &storage = out.converted[i];
    if (!stored->file.empty() && !widens && stored->length > 0) {
      std::unique_ptr<runtime::MappedFile> &file = out.mapped[stored->file];
      if (!file && !(file = runtime::MappedFile::open(stored->file, error)))
        return false;
      if (stored->offset + stored->length > file->bytes().size()) {
        error = "parameter '" + binding.name() + "': its data in " + stored->file +
                " ends past the file";
        return false;
      }
      bytes = file->bytes().substr(stored->offset, stored->length);
    } else {
      if (!weights.read(*stored, storage, error))
        return false;
      if (widens) {
        uint64_t count = storage.size() / runtime::elementSize(storedType->dtype);
        std::vector<uint8_t> widened = runtime::convertFloats(
            storedType->dtype, reinterpret_cast<const uint8_t *>(storage.data()), count, dtype);
        storage.assign(widened.begin(), widened.end());
      }
      bytes = std::string_view(storage.data(), storage.size());
    }
    // A ZeRO stage 3 parameter's buffer is a rank's shard; the program carries it whole.
    std::vector<int64_t> shape(buffer.shape().begin(), buffer.shape().end());
    if (binding.shard_of_size() > 0)
      shape.assign(binding.shard_of().begin(), binding.shard_of().end());
    uint64_t expected = runtime::elementSize(dtype);
    for (int64_t dim : shape)
      expected *= static_cast<uint64_t>(dim);
    if (bytes.size() != expected) {
      error = "parameter '" + binding.name() + "' holds " + std::to_string(bytes.size()) +
              " bytes, its plan buffer " + std::to_string(expected);
      return false;
    }
    runtime::TensorRef tensor;
    tensor.name = source;
    tensor.dtype = dtype;
    tensor.shape = std::move(shape);
    tensor.bytes = bytes;
    tensors.push_back(std::move(tensor));
  }
  std::map<std::string, std::string> metadata = {{"format", "pt"}, {"producer", "memc"},
                                                 {"model", plan.model()}};
  if (!runtime::safetensorsPrefix(tensors, metadata, out.prefix, error))
    return false;
  out.parts.push_back(out.prefix);
  for (const runtime::TensorRef &tensor : tensors)
    out.parts.push_back(tensor.bytes);
  return true;
}

} // namespace

bool serializeWeights(const plan::Plan &plan, const WeightStore &weights, std::string &out,
                      std::string &error) {
  WeightParts laidOut;
  if (!layOutWeights(plan, weights, laidOut, error))
    return false;
  out.clear();
  for (std::string_view part : laidOut.parts)
    out += part;
  return true;
}

bool writeProgram(const plan::Plan &plan, const WeightStore &weights,
                  const std::string &runnerPath, const std::string &outPath,
                  std::string &error) {
  std::string planBytes;
  if (!plan.SerializeToString(&planBytes)) {
    error = "cannot serialize the plan";
    return false;
  }
  // The weights are written from the model's mapped files: a model larger than memory is
  // never copied into it.
  WeightParts weightParts;
  return layOutWeights(plan, weights, weightParts, error) &&
         runtime::writeBundle(runnerPath, outPath, planBytes, weightParts.parts, error);
}

} // namespace memc
