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

/// The plan's weights file in parts, each made when it is written: the safetensors prefix
/// (header), then each source tensor's bytes, a view of the model's mapped file where the program
/// stores the model's own bytes, or made from the store one tensor at a time (typed-field data,
/// another float type converted to the plan's, a tensor memc derives such as an NF4 weight).
struct WeightParts {
  std::map<std::string, std::shared_ptr<runtime::MappedFile>> mapped;
  std::string prefix;
  std::vector<runtime::WeightsPart> parts;
};

bool layOutWeights(const plan::Plan &plan, const WeightStore &weights, WeightParts &out,
                   std::string &error) {
  // The runtime initializes each parameter from its source tensor: store each source once.
  std::vector<runtime::TensorHeader> tensors;
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
    // A 16-bit model's parameters train in f32 (MasterWeights.h): its values widen exactly;
    // --weights-from may bind another float type (CheckpointWeights.h).
    const kernels::DTypeInfo *storedType = kernels::findOnnxDType(stored->dataType);
    const bool converts = storedType && storedType->dtype != dtype &&
                          runtime::convertibleFloats(storedType->dtype, dtype);
    // A ZeRO stage 3 parameter's buffer is a rank's shard; the program carries it whole.
    std::vector<int64_t> shape(buffer.shape().begin(), buffer.shape().end());
    if (binding.shard_of_size() > 0)
      shape.assign(binding.shard_of().begin(), binding.shard_of().end());
    uint64_t expected = runtime::elementSize(dtype);
    for (int64_t dim : shape)
      expected *= static_cast<uint64_t>(dim);
    const uint64_t storedBytes =
        converts ? stored->byteSize() / runtime::elementSize(storedType->dtype) *
                       runtime::elementSize(dtype)
                 : stored->byteSize();
    if (storedBytes != expected) {
      error = "parameter '" + binding.name() + "' holds " + std::to_string(storedBytes) +
              " bytes, its plan buffer " + std::to_string(expected);
      return false;
    }
    runtime::WeightsPart part;
    part.size = expected;
    if (!stored->file.empty() && !converts && stored->length > 0) {
      std::shared_ptr<runtime::MappedFile> &file = out.mapped[stored->file];
      if (!file && !(file = runtime::MappedFile::open(stored->file, error)))
        return false;
      if (stored->offset + stored->length > file->bytes().size()) {
        error = "parameter '" + binding.name() + "': its data in " + stored->file +
                " ends past the file";
        return false;
      }
      std::string_view bytes = file->bytes().substr(stored->offset, stored->length);
      part.make = [bytes](std::vector<char> &, std::string_view &out, std::string &) {
        out = bytes;
        return true;
      };
    } else {
      part.make = [&weights, stored, converts, storedType, dtype](
                      std::vector<char> &scratch, std::string_view &out, std::string &error) {
        if (!weights.read(*stored, scratch, error))
          return false;
        if (converts) {
          uint64_t count = scratch.size() / runtime::elementSize(storedType->dtype);
          std::vector<uint8_t> converted = runtime::convertFloats(
              storedType->dtype, reinterpret_cast<const uint8_t *>(scratch.data()), count, dtype);
          scratch.assign(converted.begin(), converted.end());
        }
        out = std::string_view(scratch.data(), scratch.size());
        return true;
      };
    }
    out.parts.push_back(std::move(part));
    tensors.push_back({source, dtype, std::move(shape), expected});
  }
  std::map<std::string, std::string> metadata = {{"format", "pt"}, {"producer", "memc"},
                                                 {"model", plan.model()}};
  if (!runtime::safetensorsPrefix(tensors, metadata, out.prefix, error))
    return false;
  std::string_view prefix = out.prefix;
  out.parts.insert(out.parts.begin(),
                   {prefix.size(), [prefix](std::vector<char> &, std::string_view &bytes,
                                            std::string &) {
                      bytes = prefix;
                      return true;
                    }});
  return true;
}

} // namespace

bool serializeWeights(const plan::Plan &plan, const WeightStore &weights, std::string &out,
                      std::string &error) {
  WeightParts laidOut;
  if (!layOutWeights(plan, weights, laidOut, error))
    return false;
  out.clear();
  std::vector<char> scratch;
  for (const runtime::WeightsPart &part : laidOut.parts) {
    std::string_view bytes;
    if (!part.make(scratch, bytes, error))
      return false;
    out += bytes;
  }
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
  // The weights are written from the model's mapped files, and what must be made (converted,
  // quantized) one tensor at a time: a model larger than memory is never copied into it.
  WeightParts weightParts;
  return layOutWeights(plan, weights, weightParts, error) &&
         runtime::writeBundle(runnerPath, outPath, planBytes, weightParts.parts, error);
}

} // namespace memc
