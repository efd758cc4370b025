//===- ProgramWriter.cpp - plan + weights -> one executable ---------------===//
#include "compiler/lowering/ProgramWriter.h"
#include "compiler/importer/WeightStore.h"
#include "runtime/bundle/Bundle.h"
#include "runtime/io/Safetensors.h"
#include "runtime/plan/PlanVocabulary.h"
#include "runtime/support/FloatConversion.h"

#include <map>
#include <set>

namespace memc {

bool serializeWeights(const plan::Plan &plan, const WeightStore &weights, std::string &out,
                      std::string &error) {
  // The runtime initializes each parameter from its source tensor: store each source once.
  std::vector<std::vector<char>> storage(plan.parameters_size());
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
    if (!weights.read(*stored, storage[i], error))
      return false;
    auto dtype = static_cast<runtime::DType>(buffer.dtype());
    // A 16-bit model's parameters train in f32 (MasterWeights.h): its values widen exactly.
    const kernels::DTypeInfo *storedType = kernels::findOnnxDType(stored->dataType);
    if (storedType && storedType->dtype != dtype &&
        runtime::convertibleFloats(storedType->dtype, dtype)) {
      uint64_t count = storage[i].size() / runtime::elementSize(storedType->dtype);
      std::vector<uint8_t> widened = runtime::convertFloats(
          storedType->dtype, reinterpret_cast<const uint8_t *>(storage[i].data()), count, dtype);
      storage[i].assign(widened.begin(), widened.end());
    }
    // A ZeRO stage 3 parameter's buffer is a rank's shard; the program carries it whole.
    std::vector<int64_t> shape(buffer.shape().begin(), buffer.shape().end());
    if (binding.shard_of_size() > 0)
      shape.assign(binding.shard_of().begin(), binding.shard_of().end());
    uint64_t bytes = runtime::elementSize(dtype);
    for (int64_t dim : shape)
      bytes *= static_cast<uint64_t>(dim);
    if (storage[i].size() != bytes) {
      error = "parameter '" + binding.name() + "' holds " + std::to_string(storage[i].size()) +
              " bytes, its plan buffer " + std::to_string(bytes);
      return false;
    }
    runtime::TensorRef tensor;
    tensor.name = source;
    tensor.dtype = dtype;
    tensor.shape = std::move(shape);
    tensor.bytes = std::string_view(storage[i].data(), storage[i].size());
    tensors.push_back(std::move(tensor));
  }
  std::map<std::string, std::string> metadata = {{"format", "pt"}, {"producer", "memc"},
                                                 {"model", plan.model()}};
  return runtime::serializeSafetensors(tensors, metadata, out, error);
}

bool writeProgram(const plan::Plan &plan, const WeightStore &weights,
                  const std::string &runnerPath, const std::string &outPath,
                  std::string &error) {
  std::string planBytes, weightsBytes;
  if (!plan.SerializeToString(&planBytes)) {
    error = "cannot serialize the plan";
    return false;
  }
  if (!serializeWeights(plan, weights, weightsBytes, error))
    return false;
  return runtime::writeBundle(runnerPath, outPath, planBytes, weightsBytes, error);
}

} // namespace memc
