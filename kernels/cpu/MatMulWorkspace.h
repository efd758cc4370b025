//===- MatMulWorkspace.h - the CPU workspace of matmul -----------*- C++ -*-===//
//
// The scratch layout of matmul: what the run functions carve from call.workspace
// and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both (Workspace.h).
// Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_MATMULWORKSPACE_H
#define MEMC_KERNELS_CPU_MATMULWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/OneDnnMatMul.h"
#include "kernels/cpu/StridedLayout.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace memc::kernels {

/// The call's transpose flags (absent is false; the check accepts only 0 and 1).
inline MatMulTransposes matmulTransposesOf(const KernelCall &call) {
  const Attributes &attributes = attributesOf(call);
  return {attributes.intOr("transpose_lhs", 0) == 1, attributes.intOr("transpose_rhs", 0) == 1};
}

/// The operands' shapes after numpy's 1-D promotion, and the product's dimensions.
struct MatMulDims {
  Shape lhsBatch, rhsBatch, batch;
  int64_t m = 0, n = 0, k = 0;
  int64_t batchCount = 1;
  MatMulTransposes transposes;

  explicit MatMulDims(const KernelCall &call)
      : MatMulDims(call.inputs[0].shape, call.inputs[1].shape, matmulTransposesOf(call)) {}

  MatMulDims(const Shape &lhs, const Shape &rhs, MatMulTransposes transposes = {})
      : transposes(transposes) {
    Shape a = lhs, b = rhs;
    if (a.size() == 1)
      a.insert(a.begin(), 1);
    if (b.size() == 1)
      b.push_back(1);
    if (transposes.lhs)
      std::swap(a[a.size() - 2], a.back());
    if (transposes.rhs)
      std::swap(b[b.size() - 2], b.back());
    m = a[a.size() - 2];
    k = a.back();
    n = b.back();
    lhsBatch.assign(a.begin(), a.end() - 2);
    rhsBatch.assign(b.begin(), b.end() - 2);
    std::string unused;
    broadcastShapes({lhsBatch, rhsBatch}, batch, unused);
    for (int64_t dim : batch)
      batchCount *= dim;
  }

  /// Leading dimensions of the operands as stored: a transposed lhs is [K,M], rhs [N,K].
  int64_t lda() const { return transposes.lhs ? m : k; }
  int64_t ldb() const { return transposes.rhs ? k : n; }

  /// A batch that shares one right-hand matrix and does not broadcast the left: one tall
  /// product of the stacked rows (not when lhs is transposed: its rows are then columns).
  bool stacksRows() const {
    if (transposes.lhs)
      return false;
    int64_t lhsCount = 1, rhsCount = 1;
    for (int64_t dim : lhsBatch)
      lhsCount *= dim;
    for (int64_t dim : rhsBatch)
      rhsCount *= dim;
    return rhsCount == 1 && lhsCount == batchCount && batchCount * m <= kMaxGemmDimension;
  }

  /// Fills `pairs` (batchCount of them) with, for each batch of the result, the batch indices
  /// of lhs and rhs it multiplies.
  void batchPairs(std::pair<int64_t, int64_t> *pairs) const {
    StridedLayout<2> layout = broadcastLayout<2>(batch, {&lhsBatch, &rhsBatch});
    layout.forEachRun(0, layout.numElements(),
                      [&](int64_t, const std::array<int64_t, 2> &offsets, int64_t count) {
                        for (int64_t i = 0; i < count; ++i)
                          *pairs++ = {offsets[0] + i * layout.innerStride(0),
                                      offsets[1] + i * layout.innerStride(1)};
                      });
  }
};

/// A 16-bit product (each of a batch; a stacked one as one tall product) is computed a tile of
/// the result at a time: block by block along K, the tile's rows of A and columns of B are widened into f32
/// scratch of its slot and multiplied by sgemm into the tile's f32 sums, which are rounded into
/// the result once, so no operand is widened whole and the scratch does not grow with K.
constexpr int64_t kWideningTile = 128;
constexpr int64_t kWideningDepth = 256;

struct WideningTiles {
  int64_t tileRows = 0, tileColumns = 0, depth = 0; // a tile's extent (smaller for a smaller product)
  int64_t products = 0, rows = 0; // products of `rows` rows: 1 of all rows when stacked
  int64_t rowTiles = 0, columnTiles = 0;
  int64_t slots = 0;
  int64_t slotFloats = 0; // A rows, B columns and the f32 result of one tile

  int64_t tilesPerProduct() const { return rowTiles * columnTiles; }
  int64_t count() const { return products * tilesPerProduct(); }
};

inline WideningTiles wideningTiles(const MatMulDims &dims) {
  WideningTiles tiles;
  bool stacked = dims.stacksRows();
  tiles.products = stacked ? 1 : dims.batchCount;
  int64_t m = tiles.rows = stacked ? dims.batchCount * dims.m : dims.m;
  tiles.tileRows = std::min(kWideningTile, m);
  tiles.tileColumns = std::min(kWideningTile, dims.n);
  tiles.rowTiles = (m + tiles.tileRows - 1) / tiles.tileRows;
  tiles.columnTiles = (dims.n + tiles.tileColumns - 1) / tiles.tileColumns;
  tiles.slots = workspaceSlots(0, tiles.count(), 1);
  tiles.depth = std::min(kWideningDepth, dims.k);
  tiles.slotFloats = tiles.tileRows * tiles.depth + tiles.depth * tiles.tileColumns +
                     tiles.tileRows * tiles.tileColumns;
  return tiles;
}

/// Whether matmul computes this call tile by tile (16-bit floats), when oneDNN does not run it.
inline bool widensPerTile(const KernelCall &call) {
  return call.outputs[0].dtype != DType::F32 && isFloating(call.outputs[0].dtype);
}

struct MatMulScratch {
  std::optional<OneDnnMatMulBlocks> oneDnn; // set when oneDNN runs the call (oneDnnMatMul)
  uint8_t *oneDnnScratchpads = nullptr;     // oneDnn->slots of oneDnn->slotBytes
  FloatOperands operands;
  float *tiles = nullptr; // WideningTiles::slots slots of slotFloats, when widensPerTile
  std::pair<int64_t, int64_t> *pairs = nullptr; // null for a stacked float product
};

inline MatMulScratch carveMatMul(const KernelCall &call, WorkspaceCarver &carver) {
  MatMulScratch scratch;
  if (call.outputs[0].numElements() == 0)
    return scratch;
  if ((scratch.oneDnn = oneDnnMatMul(call))) {
    scratch.oneDnnScratchpads =
        carver.take<uint8_t>(scratch.oneDnn->slots * static_cast<int64_t>(scratch.oneDnn->slotBytes));
    if (scratch.oneDnn->products > 1)
      scratch.pairs = carver.take<std::pair<int64_t, int64_t>>(scratch.oneDnn->products);
    return scratch;
  }
  MatMulDims dims(call);
  bool floating = isFloating(call.outputs[0].dtype);
  if (widensPerTile(call)) {
    WideningTiles tiles = wideningTiles(dims);
    scratch.tiles = carver.take<float>(tiles.slots * tiles.slotFloats);
  } else if (floating)
    scratch.operands = carveFloatOperands(call, carver);
  if (!floating || !dims.stacksRows())
    scratch.pairs = carver.take<std::pair<int64_t, int64_t>>(dims.batchCount);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_MATMULWORKSPACE_H
