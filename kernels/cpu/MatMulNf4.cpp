//===- MatMulNf4.cpp - products with an NF4 weight ------------------------===//
//
// matmul_nf4: the output a tile of kNf4TileColumns columns at a time, tiles spread over the
// slots. A tile's panel of the weight (its columns of op(W), K deep) is dequantized into the
// slot's scratch (NormalFloat4.h) and multiplied through OpenBLAS sgemm: an f32 lhs in one
// product over all rows, a 16-bit lhs kNf4TileRows rows at a time widened to f32 and the tile's
// sums rounded once (MatMulNf4Workspace.h). The weight is never whole in f32.
//
//===----------------------------------------------------------------------===//
#include "kernels/NormalFloat4.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/MatMulNf4Workspace.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <memory>

namespace memc::kernels {

namespace {

/// The absmax of the call's weight, plain or double-quantized.
Nf4Absmax absmaxOf(const KernelCall &call) {
  if (call.inputs.size() == 3)
    return Nf4Absmax{call.inputs[2].as<float>()};
  return doubleQuantizedAbsmax(call.inputs[2].as<uint8_t>(), call.inputs[3].as<float>(),
                               *call.inputs[4].as<float>());
}

/// Columns [column0, column0 + count) of op(W), K deep, into `panel`: [count, K] (read
/// transposed by the product) when W is [N, K], [K, count] when it is [K, N].
void dequantizePanel(const MatMulNf4Dims &dims, const uint8_t *packed, const Nf4Absmax &absmax,
                     int64_t column0, int64_t count, float *panel) {
  static const Nf4Pairs pairs = makeNf4Pairs();
  if (dims.transposeRhs) {
    dequantizeNf4(packed, absmax, column0 * dims.depth, count * dims.depth, panel, &pairs);
    return;
  }
  for (int64_t p = 0; p < dims.depth; ++p)
    dequantizeNf4(packed, absmax, p * dims.columns + column0, count, panel + p * count, &pairs);
}

template <typename T>
void multiplyTile(const MatMulNf4Dims &dims, const MatMulNf4Scratch &scratch, float *slot,
                  const T *lhs, const float *panel, int64_t column0, int64_t count, T *out) {
  const GemmTransposes transposes{false, dims.transposeRhs};
  const int64_t ldb = dims.transposeRhs ? dims.depth : count;
  if constexpr (std::is_same_v<T, float>) {
    gemmSerial(dims.rows, count, dims.depth, lhs, dims.depth, panel, ldb, out + column0,
               dims.columns, transposes);
  } else {
    float *rows = slot + scratch.panelFloats, *sums = rows + scratch.rowFloats;
    for (int64_t row0 = 0; row0 < dims.rows; row0 += kNf4TileRows) {
      const int64_t height = std::min(kNf4TileRows, dims.rows - row0);
      const T *source = lhs + row0 * dims.depth;
      for (int64_t i = 0; i < height * dims.depth; ++i)
        rows[i] = Element<T>::load(source[i]);
      gemmSerial(height, count, dims.depth, rows, dims.depth, panel, ldb, sums, count,
                 transposes);
      for (int64_t i = 0; i < height; ++i)
        for (int64_t j = 0; j < count; ++j)
          out[(row0 + i) * dims.columns + column0 + j] = Element<T>::store(sums[i * count + j]);
    }
  }
}

bool runMatMulNf4(KernelContext &context, const KernelCall &call) {
  const TensorView &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  MatMulNf4Dims dims(call);
  WorkspaceCarver carver(call);
  MatMulNf4Scratch scratch = carveMatMulNf4(call, carver);
  if (!carver.fits(context))
    return false;
  const uint8_t *packed = call.inputs[1].as<uint8_t>();
  const Nf4Absmax absmax = absmaxOf(call);
  visitFloat(output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallelForSlots(0, dims.tiles(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
      float *slotScratch = scratch.slots + slot * scratch.slotFloats;
      for (int64_t tile = begin; tile < end; ++tile) {
        const int64_t column0 = tile * kNf4TileColumns;
        const int64_t count = std::min(kNf4TileColumns, dims.columns - column0);
        dequantizePanel(dims, packed, absmax, column0, count, slotScratch);
        multiplyTile<T>(dims, scratch, slotScratch, call.inputs[0].as<T>(), slotScratch, column0,
                        count, output.as<T>());
      }
    });
  });
  return true;
}

} // namespace

void addMatMulNf4Kernels(KernelRuns &table) { table["matmul_nf4"] = &runMatMulNf4; }

} // namespace memc::kernels
