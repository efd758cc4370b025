//===- Nf4TestWeights.h - NF4-quantized weights for kernel tests -*- C++ -*-===//
//
// A weight quantized as matmul_nf4 takes it (packed codes, then the plain absmax or the double
// quantization's codes, scales and offset) with its values dequantized on the CPU: what the CPU
// test (MatMulNf4Test) and the CUDA test (cuda/MatMulMathTest) compare products against.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_KERNELS_NF4TESTWEIGHTS_H
#define MEMC_TEST_KERNELS_NF4TESTWEIGHTS_H

#include "KernelTestSupport.h"

#include "kernels/DynamicQuantization.h"
#include "kernels/NormalFloat4.h"

namespace memc::kernels::testing {

struct Nf4Weight {
  std::vector<OwnedTensor> operands; // packed, then the absmax's one or three tensors
  std::vector<float> dequantized;
};

/// `rows` x `columns` of `values` quantized to NF4, with double quantization if asked.
inline Nf4Weight quantizedWeight(const float *values, int64_t rows, int64_t columns,
                                 bool doubleQuantization) {
  Nf4Layout layout{rows * columns};
  Nf4Weight weight;
  OwnedTensor packed(DType::U8, {layout.packedBytes()});
  std::vector<float> absmax(layout.blocks());
  quantizeNf4(values, layout.count, packed.as<uint8_t>(), absmax.data());
  weight.operands.push_back(std::move(packed));
  Nf4Absmax scales;
  if (doubleQuantization) {
    OwnedTensor codes(DType::U8, {layout.blocks()});
    OwnedTensor nested(DType::F32, {layout.absmaxBlocks()});
    float offset = quantizeNf4Absmax(dynamicCode(true), absmax.data(), layout.blocks(),
                                     codes.as<uint8_t>(), nested.as<float>());
    weight.operands.push_back(std::move(codes));
    weight.operands.push_back(std::move(nested));
    weight.operands.push_back(f32({}, {offset}));
    scales = doubleQuantizedAbsmax(weight.operands[1].as<uint8_t>(),
                                   weight.operands[2].as<float>(), offset);
  } else {
    weight.operands.push_back(tensor(DType::F32, {layout.blocks()},
                                     std::vector<double>(absmax.begin(), absmax.end())));
    scales = Nf4Absmax{weight.operands[1].as<float>()};
  }
  weight.dequantized.resize(layout.count);
  dequantizeNf4(weight.operands[0].as<uint8_t>(), scales, 0, layout.count,
                weight.dequantized.data());
  return weight;
}

} // namespace memc::kernels::testing

#endif // MEMC_TEST_KERNELS_NF4TESTWEIGHTS_H
