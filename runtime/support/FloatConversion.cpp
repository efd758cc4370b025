//===- FloatConversion.cpp - f32 <-> f16 / bf16 at the file boundary ------===//
#include "runtime/support/FloatConversion.h"

#include "kernels/Float16.h"

#include <cstring>

namespace memc::runtime {
namespace {

bool isConvertible(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

float toFloat(DType dtype, const uint8_t *element) {
  float value;
  uint16_t bits;
  if (dtype == DType::F32) {
    std::memcpy(&value, element, 4);
    return value;
  }
  std::memcpy(&bits, element, 2);
  return dtype == DType::F16 ? kernels::halfToFloat(bits) : kernels::bfloat16ToFloat(bits);
}

void fromFloat(DType dtype, float value, uint8_t *element) {
  if (dtype == DType::F32) {
    std::memcpy(element, &value, 4);
    return;
  }
  uint16_t bits =
      dtype == DType::F16 ? kernels::floatToHalf(value) : kernels::floatToBFloat16(value);
  std::memcpy(element, &bits, 2);
}

} // namespace

bool convertibleFloats(DType from, DType to) { return isConvertible(from) && isConvertible(to); }

std::vector<uint8_t> convertFloats(DType from, const uint8_t *bytes, uint64_t count, DType to) {
  size_t inSize = elementSize(from), outSize = elementSize(to);
  std::vector<uint8_t> out(count * outSize);
  for (uint64_t i = 0; i < count; ++i)
    fromFloat(to, toFloat(from, bytes + i * inSize), out.data() + i * outSize);
  return out;
}

} // namespace memc::runtime
