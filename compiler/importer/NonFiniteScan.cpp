//===- NonFiniteScan.cpp - whether a stored tensor holds inf or NaN -------===//
#include "compiler/importer/NonFiniteScan.h"
#include "compiler/importer/OnnxTypes.h"
#include "compiler/importer/WeightStore.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace memc {

namespace {

/// Whether any of `count` little-endian elements of `Bits` width has all its exponent bits set
/// (an inf or a NaN), `exponent` being the exponent's mask.
template <typename Bits> bool anyExponentAllOnes(const char *data, uint64_t count, Bits exponent) {
  bool found = false;
  for (uint64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, data + i * sizeof(Bits), sizeof(Bits));
    found |= (bits & exponent) == exponent;
  }
  return found;
}

} // namespace

bool holdsNonFiniteValue(const WeightStore &weights, const StoredTensor &tensor, bool &result,
                         std::string &error) {
  result = false;
  // The exponent masks, for this little-endian host.
  bool (*scan)(const char *, uint64_t) = nullptr;
  switch (tensor.dataType) {
  case onnx::TensorProto::FLOAT:
    scan = [](const char *data, uint64_t n) {
      return anyExponentAllOnes<uint32_t>(data, n, 0x7f800000u);
    };
    break;
  case onnx::TensorProto::DOUBLE:
    scan = [](const char *data, uint64_t n) {
      return anyExponentAllOnes<uint64_t>(data, n, 0x7ff0000000000000ull);
    };
    break;
  case onnx::TensorProto::FLOAT16:
    scan = [](const char *data, uint64_t n) {
      return anyExponentAllOnes<uint16_t>(data, n, 0x7c00);
    };
    break;
  case onnx::TensorProto::BFLOAT16:
    scan = [](const char *data, uint64_t n) {
      return anyExponentAllOnes<uint16_t>(data, n, 0x7f80);
    };
    break;
  default:
    return true; // not a floating type
  }
  uint64_t elementSize = onnxElementSize(tensor.dataType);
  uint64_t size = tensor.byteSize();
  constexpr uint64_t kChunkBytes = 1 << 20;
  std::vector<char> chunk;
  for (uint64_t offset = 0; offset < size && !result; offset += kChunkBytes) {
    uint64_t length = std::min(size - offset, kChunkBytes);
    if (!weights.readRange(tensor, offset, length, chunk, error))
      return false;
    result = scan(chunk.data(), length / elementSize);
  }
  return true;
}

} // namespace memc
