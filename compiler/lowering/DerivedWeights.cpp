//===- DerivedWeights.cpp - initial values memc makes ---------------------===//
#include "compiler/lowering/DerivedWeights.h"

#include "dialects/memc/ElementTypes.h"
#include "dialects/memc/MemcDialect.h"
#include "kernels/DropoutMask.h"
#include "kernels/NormalFloat4.h"
#include "runtime/support/FloatConversion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

using namespace mlir;

namespace memc {

namespace {

using kernels::DType;

StoredTensor inlineTensor(const std::string &name, DType dtype, std::vector<int64_t> shape,
                          const void *data, size_t bytes) {
  StoredTensor tensor;
  tensor.name = name;
  tensor.dataType = tensor.modelDataType = kernels::dtypeRow(dtype).onnxDataType;
  tensor.shape = std::move(shape);
  tensor.inlineBytes.assign(static_cast<const char *>(data),
                            static_cast<const char *>(data) + bytes);
  tensor.length = bytes;
  return tensor;
}

/// f32 values stored as `dtype` (the argument's: a 16-bit model's adapters are 16-bit).
StoredTensor floatTensor(const std::string &name, DType dtype, std::vector<int64_t> shape,
                         const std::vector<float> &values) {
  if (dtype == DType::F32)
    return inlineTensor(name, dtype, std::move(shape), values.data(), values.size() * 4);
  std::vector<uint8_t> narrowed = runtime::convertFloats(
      DType::F32, reinterpret_cast<const uint8_t *>(values.data()), values.size(), dtype);
  return inlineTensor(name, dtype, std::move(shape), narrowed.data(), narrowed.size());
}

/// The stored weight `name` as f32.
bool readFloats(const WeightStore &weights, const std::string &name, std::vector<float> &out,
                std::string &error) {
  const StoredTensor *stored = weights.find(name);
  const kernels::DTypeInfo *type = stored ? kernels::findOnnxDType(stored->dataType) : nullptr;
  if (!type || !runtime::convertibleFloats(type->dtype, DType::F32)) {
    error = "cannot quantize '" + name + "': the model has no f32, f16 or bf16 initializer of "
            "that name";
    return false;
  }
  std::vector<char> bytes;
  if (!weights.read(*stored, bytes, error))
    return false;
  const uint64_t count = bytes.size() / (kernels::dtypeBits(type->dtype) / 8);
  std::vector<uint8_t> widened = runtime::convertFloats(
      type->dtype, reinterpret_cast<const uint8_t *>(bytes.data()), count, DType::F32);
  out.resize(count);
  std::memcpy(out.data(), widened.data(), count * sizeof(float));
  return true;
}

/// One weight's NF4 parts, quantized on the first read of any and handed out one at a time, so
/// that none stays in memory once the program writer has written it.
struct Nf4Parts {
  bool made = false;
  std::vector<char> parts[4]; // packed, absmax (or its codes), nested absmax, nested offset

  template <typename T> static std::vector<char> bytesOf(const T *data, size_t count) {
    const char *begin = reinterpret_cast<const char *>(data);
    return std::vector<char>(begin, begin + count * sizeof(T));
  }

  bool make(const WeightStore &source, const std::string &from, bool doubleQuantization,
            std::string &error) {
    std::vector<float> values;
    if (!readFloats(source, from, values, error))
      return false;
    kernels::Nf4Layout layout{static_cast<int64_t>(values.size())};
    std::vector<uint8_t> packed(layout.packedBytes());
    std::vector<float> absmax(layout.blocks());
    // Blocks are independent and whole blocks write whole bytes: the threads' ranges of blocks
    // give the serial result.
    const int64_t blocks = layout.blocks();
    const int64_t threads =
        std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, blocks / 4096 + 1);
    std::vector<std::thread> workers;
    for (int64_t t = 0; t < threads; ++t) {
      const int64_t first = blocks * t / threads, last = blocks * (t + 1) / threads;
      workers.emplace_back([&, first, last] {
        const int64_t begin = first * kernels::kNf4Block;
        const int64_t end = std::min(last * kernels::kNf4Block, layout.count);
        kernels::quantizeNf4(values.data() + begin, end - begin, packed.data() + begin / 2,
                             absmax.data() + first);
      });
    }
    for (std::thread &worker : workers)
      worker.join();
    parts[0] = bytesOf(packed.data(), packed.size());
    if (!doubleQuantization) {
      parts[1] = bytesOf(absmax.data(), absmax.size());
    } else {
      std::vector<uint8_t> codes(layout.blocks());
      std::vector<float> scales(layout.absmaxBlocks());
      float offset = kernels::quantizeNf4Absmax(kernels::dynamicCode(true), absmax.data(),
                                                layout.blocks(), codes.data(), scales.data());
      parts[1] = bytesOf(codes.data(), codes.size());
      parts[2] = bytesOf(scales.data(), scales.size());
      parts[3] = bytesOf(&offset, 1);
    }
    made = true;
    return true;
  }
};

/// The store entries of stored weight `from`'s NF4 parts under `name` (bitsandbytes' names),
/// made when first read from `source` (the store as the model had it).
void addNf4(std::shared_ptr<const WeightStore> source, const std::string &from,
            const std::string &name, int64_t count, bool doubleQuantization, WeightStore &weights) {
  kernels::Nf4Layout layout{count};
  auto parts = std::make_shared<Nf4Parts>();
  auto add = [&](int part, const std::string &partName, DType dtype, std::vector<int64_t> shape,
                 uint64_t bytes) {
    StoredTensor tensor;
    tensor.name = partName;
    tensor.dataType = tensor.modelDataType = kernels::dtypeRow(dtype).onnxDataType;
    tensor.shape = std::move(shape);
    tensor.length = bytes;
    tensor.make = [=](std::vector<char> &out, std::string &error) {
      if (!parts->made && !parts->make(*source, from, doubleQuantization, error))
        return false;
      out = std::move(parts->parts[part]);
      return true;
    };
    weights.add(std::move(tensor));
  };
  add(0, name, DType::U8, {layout.packedBytes()}, layout.packedBytes());
  if (!doubleQuantization) {
    add(1, name + ".absmax", DType::F32, {layout.blocks()}, layout.blocks() * 4);
    return;
  }
  add(1, name + ".absmax", DType::U8, {layout.blocks()}, layout.blocks());
  add(2, name + ".nested_absmax", DType::F32, {layout.absmaxBlocks()}, layout.absmaxBlocks() * 4);
  add(3, name + ".nested_offset", DType::F32, {}, 4);
}

} // namespace

float kaimingUniform(uint64_t seed, const std::string &name, int64_t in, int64_t index) {
  // FNV-1a of the name: a few lines to reproduce in a reference (make_qlora_reference.py).
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : name)
    hash = (hash ^ c) * 0x100000001b3ull;
  const uint64_t key = kernels::mix64(seed ^ hash);
  const uint64_t bits =
      kernels::mix64(key + (static_cast<uint64_t>(index) + 1) * 0x9e3779b97f4a7c15ull);
  const double uniform = static_cast<double>(bits >> 11) * 0x1.0p-53; // [0, 1)
  // gain sqrt(2 / (1 + a^2)) with a = sqrt(5), times sqrt(3 / fan_in): 1 / sqrt(fan_in).
  return static_cast<float>((2.0 * uniform - 1.0) / std::sqrt(static_cast<double>(in)));
}

bool addDerivedWeights(func::FuncOp forward, uint64_t seed, WeightStore &weights,
                       std::string &error) {
  // Quantized weights are read from the store as the model had it, before any replacement,
  // when the program writer reads their parts.
  std::shared_ptr<const WeightStore> original;
  for (BlockArgument argument : forward.getArguments()) {
    unsigned index = argument.getArgNumber();
    auto derived = forward.getArgAttrOfType<StringAttr>(index, kDerivedAttr);
    auto name = forward.getArgAttrOfType<StringAttr>(index, kParamNameAttr);
    if (!derived || !name)
      continue;
    auto type = cast<RankedTensorType>(argument.getType());
    std::vector<int64_t> shape(type.getShape().begin(), type.getShape().end());
    std::optional<DType> dtype = dtypeOf(type);
    if (derived.getValue() == "kaiming_uniform" || derived.getValue() == "zeros") {
      std::vector<float> values(type.getNumElements(), 0.0f);
      if (derived.getValue() == "kaiming_uniform")
        for (int64_t i = 0; i < type.getNumElements(); ++i)
          values[i] = kaimingUniform(seed, name.str(), shape[1], i);
      weights.add(floatTensor(name.str(), *dtype, shape, values));
    } else if (derived.getValue() == "nf4") {
      if (!original)
        original = std::make_shared<const WeightStore>(weights);
      auto from = forward.getArgAttrOfType<StringAttr>(index, kDerivedFromAttr);
      const StoredTensor *stored = original->find(from.str());
      if (!stored) {
        error = "cannot quantize '" + from.str() + "': the model has no initializer of that name";
        return false;
      }
      int64_t count = 1;
      for (int64_t dim : stored->shape)
        count *= dim;
      // The absmax argument follows the packed one; its type says which form it has.
      auto absmax = cast<RankedTensorType>(forward.getArgument(index + 1).getType());
      addNf4(original, from.str(), name.str(), count, !absmax.getElementType().isF32(), weights);
    }
    // The other NF4 parts were added with their packed weight.
  }
  return true;
}

} // namespace memc
