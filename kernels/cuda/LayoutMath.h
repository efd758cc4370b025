//===- LayoutMath.h - index arithmetic of the CUDA layout kernels -*- C++ -*-===//
//
// Where each element of a layout op comes from, as the CUDA kernels compute it per thread
// (MEMC_HOST_DEVICE) and as the host tests check it against the CPU kernels, and the plain C++
// that sets the numbers up from a call (run by the launches and by the target's limits):
//  - StridedIndex: transpose, broadcast_to, slice and slice_grad are one strided view with
//    different strides, merged as the CPU's StridedLayout merges them so that the per-element
//    unravel runs over as few dimensions as possible. A view whose innermost run is contiguous
//    on both sides moves wider units (up to 16 bytes) when sizes and addresses allow.
//  - TransposeTiles: a transpose whose innermost output dimension is strided in the input goes
//    through 32x32 tiles (the tile is staged in shared memory), so both sides stay coalesced.
//  - PieceBlocks: concat and split move, per outer index, one contiguous block per piece.
//  - GatherIndex: gather and gather_grad's [outer, count, inner] <-> [outer, dim, inner].
//  - top_k's order: values first (larger or smaller), NaN above every number, ties by the
//    lower index; a total order, so "the best element after the previous one" selects the next.
// Index is int64_t, or uint32_t where every index and offset of the call is below 2^32: 32-bit
// division is several times cheaper on the GPU, and offsets computed modulo 2^32 (negative
// strides wrap) are exact once they land in the tensor.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_LAYOUTMATH_H
#define MEMC_KERNELS_CUDA_LAYOUTMATH_H

#include "kernels/ElementVisitors.h"
#include "kernels/HostDevice.h"
#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/StridedLayout.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace memc::kernels::cuda {

/// Most dimensions a strided view keeps after merging: the kernels take it by value.
constexpr int kMaxLayoutRank = 8;

/// Edge of a transpose tile.
constexpr int64_t kTransposeTile = 32;

/// Most elements top_k selects per line (one warp-wide scan of the line per selected element).
constexpr int64_t kMaxTopK = 1024;

//===----------------------------------------------------------------------===//
// Strided views
//===----------------------------------------------------------------------===//

/// Element i of a dense output sits at offset(i) = base + sum_d index_d * strides[d] in the
/// other tensor, index the row-major unravel of i over dims.
struct StridedIndex {
  int32_t rank = 1;
  int64_t dims[kMaxLayoutRank] = {1};
  int64_t strides[kMaxLayoutRank] = {0};
  int64_t base = 0;
};

template <typename Index>
MEMC_HOST_DEVICE inline Index stridedOffset(const StridedIndex &map, Index i) {
  Index offset = static_cast<Index>(map.base);
  for (int d = map.rank - 1; d > 0; --d) {
    Index dim = static_cast<Index>(map.dims[d]);
    offset += i % dim * static_cast<Index>(map.strides[d]);
    i /= dim;
  }
  return offset + i * static_cast<Index>(map.strides[0]);
}

/// The view of `output` read through `strides` from `base`, merged; false when more than
/// kMaxLayoutRank dimensions remain.
inline bool mergedIndex(const Shape &output, const Shape &strides, int64_t base,
                        StridedIndex &map) {
  StridedLayout<1> layout(output, {strides});
  const Shape &dims = layout.mergedDims(), &merged = layout.mergedStrides(0);
  if (dims.size() > static_cast<size_t>(kMaxLayoutRank))
    return false;
  map.rank = static_cast<int32_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    map.dims[d] = dims[d];
    map.strides[d] = merged[d];
  }
  map.base = base;
  return true;
}

/// transpose: output element i reads the input at offset(i).
inline bool transposeIndex(const KernelCall &call, StridedIndex &map) {
  std::vector<int64_t> perm;
  attributesOf(call).getInts("perm", perm);
  Shape inputStrides = contiguousStrides(call.inputs[0].shape), strides;
  for (int64_t dim : perm)
    strides.push_back(inputStrides[dim]);
  return mergedIndex(call.outputs[0].shape, strides, 0, map);
}

/// broadcast_to: output element i reads the input at offset(i) (stride 0 where it broadcasts).
inline bool broadcastIndex(const KernelCall &call, StridedIndex &map) {
  const Shape &output = call.outputs[0].shape;
  return mergedIndex(output, broadcastStrides(output, call.inputs[0].shape), 0, map);
}

/// The slice of `whole` the call's starts and steps take, seen from the dense `sliced`: slice
/// reads whole[offset(i)] (sliced: the output, whole: the input); slice_grad writes there
/// (sliced: the gradient, whole: the result). `sliced` must not be empty (a start may then be
/// outside the dimension).
inline bool sliceIndex(const KernelCall &call, const Shape &sliced, const Shape &whole,
                       StridedIndex &map) {
  std::vector<int64_t> starts, steps;
  attributesOf(call).getInts("starts", starts);
  attributesOf(call).getInts("steps", steps);
  Shape wholeStrides = contiguousStrides(whole), strides;
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) {
    base += starts[d] * wholeStrides[d];
    strides.push_back(boundedSliceStep(steps[d], whole[d]) * wholeStrides[d]);
  }
  return mergedIndex(sliced, strides, base, map);
}

/// The widest unit (16, 8, 4, 2 or 1 bytes) that divides every one of `quantities` (byte
/// counts, byte offsets and addresses).
inline int64_t widestUnit(std::initializer_list<uint64_t> quantities) {
  for (uint64_t unit = 16; unit > 1; unit /= 2) {
    bool divides = true;
    for (uint64_t quantity : quantities)
      divides = divides && quantity % unit == 0;
    if (divides)
      return static_cast<int64_t>(unit);
  }
  return 1;
}

inline uint64_t addressOf(const void *pointer) { return reinterpret_cast<uintptr_t>(pointer); }

/// Rewrites `map` (over elements of `elementBytes`) to move the widest unit its innermost
/// contiguous run, its other strides, its base and both tensors' addresses allow, and returns
/// the unit's bytes (elementBytes when the innermost run is strided).
inline int64_t widenInnerRun(StridedIndex &map, int64_t elementBytes, const void *a,
                             const void *b) {
  int last = map.rank - 1;
  if (map.strides[last] != 1)
    return elementBytes;
  int64_t unit =
      widestUnit({static_cast<uint64_t>(map.dims[last] * elementBytes),
                  static_cast<uint64_t>(map.base * elementBytes), addressOf(a), addressOf(b)});
  for (int d = 0; d < last; ++d)
    unit = std::min(unit, widestUnit({static_cast<uint64_t>(map.strides[d] * elementBytes)}));
  unit = std::max(unit, elementBytes);
  int64_t scale = unit / elementBytes;
  map.dims[last] /= scale;
  for (int d = 0; d < last; ++d)
    map.strides[d] /= scale;
  map.base /= scale;
  return unit;
}

/// Whether every index and offset of a call whose tensors have `a` and `b` units fits uint32_t.
inline bool fitsIn32Bits(int64_t a, int64_t b) {
  return a <= int64_t{UINT32_MAX} && b <= int64_t{UINT32_MAX};
}

//===----------------------------------------------------------------------===//
// Tiled transpose
//===----------------------------------------------------------------------===//

/// A transpose as a batch of [rows, cols] tiles: rows is the output dimension contiguous in the
/// input, cols the innermost output dimension; the batch is every other merged dimension.
struct TransposeTiles {
  int32_t batchRank = 0;
  int64_t batchDims[kMaxLayoutRank] = {};
  int64_t batchInStrides[kMaxLayoutRank] = {};
  int64_t batchOutStrides[kMaxLayoutRank] = {};
  int64_t rows = 0, cols = 0;
  int64_t colInStride = 0;  // input stride of cols (rows have input stride 1)
  int64_t rowOutStride = 0; // output stride of rows (cols have output stride 1)
  int64_t rowTiles = 0, colTiles = 0, tasks = 0;
};

/// The tiles of the transpose `map` (transposeIndex), as the CPU tiles it: true when its
/// innermost output dimension is strided in the input and another dimension is contiguous there.
inline bool transposeTiles(const StridedIndex &map, TransposeTiles &tiles) {
  int last = map.rank - 1, unit = -1;
  if (map.strides[last] == 1)
    return false;
  for (int d = 0; d < last && unit < 0; ++d)
    if (map.strides[d] == 1)
      unit = d;
  if (unit < 0)
    return false;
  Shape outStrides = contiguousStrides(Shape(map.dims, map.dims + map.rank));
  tiles = TransposeTiles();
  int64_t batch = 1;
  for (int d = 0; d < last; ++d) {
    if (d == unit)
      continue;
    tiles.batchDims[tiles.batchRank] = map.dims[d];
    tiles.batchInStrides[tiles.batchRank] = map.strides[d];
    tiles.batchOutStrides[tiles.batchRank] = outStrides[d];
    ++tiles.batchRank;
    batch *= map.dims[d];
  }
  tiles.rows = map.dims[unit];
  tiles.cols = map.dims[last];
  tiles.colInStride = map.strides[last];
  tiles.rowOutStride = outStrides[unit];
  tiles.rowTiles = (tiles.rows + kTransposeTile - 1) / kTransposeTile;
  tiles.colTiles = (tiles.cols + kTransposeTile - 1) / kTransposeTile;
  tiles.tasks = batch * tiles.rowTiles * tiles.colTiles;
  return true;
}

/// Where tile `task` starts: element (row + i, col + j) of it is input[in + i + j *
/// colInStride] and output[out + i * rowOutStride + j].
struct TileOrigin {
  int64_t in = 0, out = 0, row = 0, col = 0;
};

MEMC_HOST_DEVICE inline TileOrigin tileOrigin(const TransposeTiles &tiles, int64_t task) {
  int64_t perBatch = tiles.rowTiles * tiles.colTiles, tile = task % perBatch;
  int64_t rest = task / perBatch;
  TileOrigin origin;
  for (int d = tiles.batchRank - 1; d >= 0; --d) {
    int64_t index = rest % tiles.batchDims[d];
    rest /= tiles.batchDims[d];
    origin.in += index * tiles.batchInStrides[d];
    origin.out += index * tiles.batchOutStrides[d];
  }
  origin.row = tile / tiles.colTiles * kTransposeTile;
  origin.col = tile % tiles.colTiles * kTransposeTile;
  origin.in += origin.row + origin.col * tiles.colInStride;
  origin.out += origin.row * tiles.rowOutStride + origin.col;
  return origin;
}

//===----------------------------------------------------------------------===//
// concat, split
//===----------------------------------------------------------------------===//

/// One piece of a concat or split, in units: for each outer index a block of pieceRow units,
/// at `start` within the joined tensor's rows of joinedRow units.
struct PieceBlocks {
  int64_t pieceRow = 0, joinedRow = 0, start = 0;
};

/// Unit i of the piece is unit joinedOffset(i) of the joined tensor.
template <typename Index>
MEMC_HOST_DEVICE inline Index joinedOffset(const PieceBlocks &blocks, Index i) {
  Index row = static_cast<Index>(blocks.pieceRow);
  return i / row * static_cast<Index>(blocks.joinedRow) + static_cast<Index>(blocks.start) +
         i % row;
}

/// The blocks of `piece`, which starts at position `offset` along `axis` of `joined`, in the widest
/// unit both tensors allow; `unitBytes` receives it.
inline PieceBlocks pieceBlocks(const TensorView &joined, const TensorView &piece, int64_t axis,
                               int64_t offset, int64_t &unitBytes) {
  int64_t element = static_cast<int64_t>(dtypeSize(joined.dtype));
  AxisExtents extents = extentsAroundAxis(joined.shape, axis);
  PieceBlocks blocks{piece.shape[axis] * extents.inner * element,
                     extents.length * extents.inner * element, offset * extents.inner * element};
  unitBytes = widestUnit(
      {static_cast<uint64_t>(blocks.pieceRow), static_cast<uint64_t>(blocks.joinedRow),
       static_cast<uint64_t>(blocks.start), addressOf(joined.data), addressOf(piece.data)});
  blocks.pieceRow /= unitBytes;
  blocks.joinedRow /= unitBytes;
  blocks.start /= unitBytes;
  return blocks;
}

//===----------------------------------------------------------------------===//
// gather, gather_grad
//===----------------------------------------------------------------------===//

/// data [outer, dim, inner] and the gathered [outer, count, inner] (inner in units).
struct GatherIndex {
  int64_t count = 0, dim = 0, inner = 1;
};

/// The row an index takes, counting negative indices from the end; false when it is outside
/// [-dim, dim).
MEMC_HOST_DEVICE inline bool indexRow(int64_t index, int64_t dim, int64_t &row) {
  row = index < 0 ? index + dim : index;
  return index >= -dim && index < dim;
}

/// The index position gathered unit e comes from.
template <typename Index>
MEMC_HOST_DEVICE inline Index gatherPosition(const GatherIndex &gather, Index e) {
  return e / static_cast<Index>(gather.inner) % static_cast<Index>(gather.count);
}

/// The data unit gathered unit e reads when its index takes `row`.
template <typename Index>
MEMC_HOST_DEVICE inline Index gatherSource(const GatherIndex &gather, Index e, Index row) {
  Index inner = static_cast<Index>(gather.inner);
  Index outer = e / inner / static_cast<Index>(gather.count);
  return (outer * static_cast<Index>(gather.dim) + row) * inner + e % inner;
}

/// The gather of `data` along `axis` by `indices` into `gathered`, inner in units of
/// `unitBytes`: with `widen` the widest both tensors allow (gather moves bits), else the
/// element (gather_grad adds elements).
inline GatherIndex gatherIndex(const TensorView &data, const TensorView &indices,
                               const TensorView &gathered, int64_t axis, bool widen,
                               int64_t &unitBytes) {
  AxisExtents extents = extentsAroundAxis(data.shape, axis);
  int64_t element = static_cast<int64_t>(dtypeSize(data.dtype));
  unitBytes = widen
                  ? std::max(element, widestUnit({static_cast<uint64_t>(extents.inner * element),
                                                  addressOf(data.data), addressOf(gathered.data)}))
                  : element;
  return GatherIndex{indices.numElements(), extents.length, extents.inner * element / unitBytes};
}

/// gather_grad's scratch: for f16/bf16, the f32 sums of the result, rounded once at the end.
inline float *carveGatherGradSums(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].dtype == DType::F32)
    return nullptr;
  return carver.take<float>(call.outputs[0].numElements());
}

//===----------------------------------------------------------------------===//
// top_k
//===----------------------------------------------------------------------===//

/// A line element as top_k ranks it; index < 0 is no element (before any selection).
template <typename C> struct Ranked {
  C value;
  int64_t index;
};

template <typename C> MEMC_HOST_DEVICE inline bool isNaNValue(C value) {
  if constexpr (std::is_floating_point<C>::value)
    return value != value;
  else
    return false;
}

/// Whether `a` comes before `b` among the selected: the larger value first (the smaller
/// without `largest`), NaN above every number, equal values by the lower index.
template <typename C>
MEMC_HOST_DEVICE inline bool topKBefore(const Ranked<C> &a, const Ranked<C> &b, bool largest) {
  bool aNaN = isNaNValue(a.value), bNaN = isNaNValue(b.value);
  if (aNaN != bNaN)
    return largest ? aNaN : bNaN;
  if (!aNaN && a.value != b.value)
    return largest ? a.value > b.value : a.value < b.value;
  return a.index < b.index;
}

/// The one of `a` and `b` that comes first (either may be no element).
template <typename C>
MEMC_HOST_DEVICE inline Ranked<C> topKFirst(const Ranked<C> &a, const Ranked<C> &b, bool largest) {
  if (a.index < 0)
    return b;
  if (b.index < 0)
    return a;
  return topKBefore(b, a, largest) ? b : a;
}

/// Whether `candidate` may be the next selected after `previous` (no element: none selected).
template <typename C>
MEMC_HOST_DEVICE inline bool topKAfter(const Ranked<C> &previous, const Ranked<C> &candidate,
                                       bool largest) {
  return previous.index < 0 || topKBefore(previous, candidate, largest);
}

//===----------------------------------------------------------------------===//
// Moving units
//===----------------------------------------------------------------------===//

/// 16 bytes, moved with one vector load and store.
struct alignas(16) Bytes16 {
  uint64_t low, high;
};

/// fn(TypeTag<U>{}) with U the unsigned type of `bytes` (1, 2, 4, 8 or 16) bytes.
template <typename Fn> decltype(auto) visitUnit(int64_t bytes, Fn &&fn) {
  switch (bytes) {
  case 16:
    return fn(TypeTag<Bytes16>{});
  case 8:
    return fn(TypeTag<uint64_t>{});
  case 4:
    return fn(TypeTag<uint32_t>{});
  case 2:
    return fn(TypeTag<uint16_t>{});
  default:
    return fn(TypeTag<uint8_t>{});
  }
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_LAYOUTMATH_H
