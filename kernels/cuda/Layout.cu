//===- Layout.cu - the CUDA kernels that move elements without computing --===//
//
// transpose, reshape, copy, offload, reload, broadcast_to, slice, slice_grad, concat and split
// (gather, gather_grad and top_k, which read or produce indices, are in Indexing.cu). They move
// bits, never values: each kernel is instantiated per unit size (1, 2, 4, 8 or 16 bytes), not
// per dtype, so it takes every element type and keeps NaN payloads and bool bytes as they are.
// The index arithmetic is LayoutMath.h's, which the host tests check against the CPU kernels.
//
// Whole-buffer copies (reshape, copy, and offload/reload between the device and the pinned,
// mapped host region) are cudaMemcpyAsync on the stream, which picks the direction from the
// addresses. transpose, broadcast_to, slice and slice_grad are one strided kernel; a transpose
// that would read strided along its innermost output dimension goes through shared-memory
// tiles instead. None needs a workspace.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"
#include "kernels/cuda/LayoutMath.h"

#include <string>

namespace memc::kernels {

void addIndexingCudaKernels(CudaKernelRuns &runs); // Indexing.cu

namespace cuda {
namespace {

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// dense[i] = strided[offset(i)], or with IntoStrided strided[offset(i)] = dense[i], for the
/// `count` units of the dense tensor.
template <typename Unit, typename Index, bool IntoStrided>
__global__ void moveStrided(Unit *dense, Unit *strided, StridedIndex map, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    Index offset = stridedOffset<Index>(map, static_cast<Index>(i));
    if constexpr (IntoStrided)
      strided[offset] = dense[i];
    else
      dense[i] = strided[offset];
  }
}

/// Rows of a tile per pass of a tiled-transpose block (its threads are kTransposeTile x this).
constexpr int kTileRowsPerPass = 8;

/// One tile per block iteration: read along the input's contiguous rows into shared memory,
/// written out along the output's contiguous columns. The padding column keeps the column
/// reads of the tile free of bank conflicts.
template <typename T>
__global__ void transposeTiled(const T *__restrict__ x, T *__restrict__ y, TransposeTiles tiles) {
  __shared__ T tile[kTransposeTile][kTransposeTile + 1];
  for (int64_t task = blockIdx.x; task < tiles.tasks; task += gridDim.x) {
    TileOrigin origin = tileOrigin(tiles, task);
    int rows = static_cast<int>(min(kTransposeTile, tiles.rows - origin.row));
    int cols = static_cast<int>(min(kTransposeTile, tiles.cols - origin.col));
    int lane = threadIdx.x;
    for (int j = threadIdx.y; j < cols; j += kTileRowsPerPass)
      if (lane < rows)
        tile[j][lane] = x[origin.in + lane + j * tiles.colInStride];
    __syncthreads();
    for (int i = threadIdx.y; i < rows; i += kTileRowsPerPass)
      if (lane < cols)
        y[origin.out + i * tiles.rowOutStride + lane] = tile[lane][i];
    __syncthreads();
  }
}

/// joined[joinedOffset(i)] = piece[i] (IntoJoined) or the reverse, for the piece's `count` units.
template <typename Unit, typename Index, bool IntoJoined>
__global__ void movePiece(Unit *joined, Unit *piece, PieceBlocks blocks, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    Index at = joinedOffset<Index>(blocks, static_cast<Index>(i));
    if constexpr (IntoJoined)
      joined[at] = piece[i];
    else
      piece[i] = joined[at];
  }
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

int64_t elementBytesOf(const TensorView &tensor) {
  return static_cast<int64_t>(dtypeSize(tensor.dtype));
}

/// The run's answer to a view the target's limits refuse (LayoutTarget.cpp): plans are
/// checked against them when they load, so only a call made around the loader gets here.
bool tooManyDimensions(KernelContext &context, const char *op) {
  return context.fail(std::string(op) + ": the CUDA kernel takes views of at most " +
                      std::to_string(kMaxLayoutRank) + " dimensions after merging");
}

/// moveStrided over the `dense` tensor's `denseCount` elements of `elementBytes`, in the widest
/// unit the view allows; `stridedCount` elements are reachable through the map.
template <bool IntoStrided>
bool launchStrided(KernelContext &context, const char *op, StridedIndex map, void *dense,
                   void *strided, int64_t denseCount, int64_t stridedCount, int64_t elementBytes) {
  int64_t unitBytes = widenInnerRun(map, elementBytes, dense, strided);
  int64_t count = denseCount / (unitBytes / elementBytes);
  bool narrow = fitsIn32Bits(denseCount, stridedCount);
  visitUnit(unitBytes, [&](auto tag) {
    using Unit = typename decltype(tag)::type;
    auto *to = static_cast<Unit *>(dense);
    auto *from = static_cast<Unit *>(strided);
    if (narrow)
      moveStrided<Unit, uint32_t, IntoStrided>
          <<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(to, from, map, count);
    else
      moveStrided<Unit, int64_t, IntoStrided>
          <<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(to, from, map, count);
  });
  return launched(context, op);
}

/// A whole-buffer copy, from the device or the host region to either (cudaMemcpyDefault).
bool copyBuffer(KernelContext &context, const KernelCall &call, const char *op) {
  const void *from = call.inputs[0].data;
  void *to = call.outputs[0].data;
  size_t bytes = call.inputs[0].sizeBytes();
  if (to == from || bytes == 0)
    return true;
  cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, streamOf(context));
  return launched(context, op);
}

//===----------------------------------------------------------------------===//
// Run functions
//===----------------------------------------------------------------------===//

bool runCopy(KernelContext &context, const KernelCall &call) {
  return copyBuffer(context, call, "copy");
}

bool runReshape(KernelContext &context, const KernelCall &call) {
  return copyBuffer(context, call, "reshape");
}

bool runOffload(KernelContext &context, const KernelCall &call) {
  return copyBuffer(context, call, "offload");
}

bool runReload(KernelContext &context, const KernelCall &call) {
  return copyBuffer(context, call, "reload");
}

bool runTranspose(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  int64_t count = output.numElements();
  StridedIndex map;
  if (count == 0)
    return true;
  if (!transposeIndex(call, map))
    return tooManyDimensions(context, "transpose");
  TransposeTiles tiles;
  if (!transposeTiles(map, tiles))
    return launchStrided<false>(context, "transpose", map, output.data, input.data, count, count,
                                elementBytesOf(input));
  dim3 threads(kTransposeTile, kTileRowsPerPass);
  visitUnit(elementBytesOf(input), [&](auto tag) {
    using T = typename decltype(tag)::type;
    transposeTiled<T><<<gridFor(tiles.tasks, 1), threads, 0, streamOf(context)>>>(
        input.as<T>(), output.as<T>(), tiles);
  });
  return launched(context, "transpose");
}

bool runBroadcastTo(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  int64_t count = output.numElements();
  StridedIndex map;
  if (count == 0)
    return true;
  if (!broadcastIndex(call, map))
    return tooManyDimensions(context, "broadcast_to");
  return launchStrided<false>(context, "broadcast_to", map, output.data, input.data, count,
                              input.numElements(), elementBytesOf(input));
}

bool runSlice(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0], &output = call.outputs[0];
  int64_t count = output.numElements();
  StridedIndex map;
  if (count == 0)
    return true;
  if (!sliceIndex(call, output.shape, input.shape, map))
    return tooManyDimensions(context, "slice");
  return launchStrided<false>(context, "slice", map, output.data, input.data, count,
                              input.numElements(), elementBytesOf(input));
}

/// Zeroes the result (unless the slice covers it all: a slice takes distinct positions) and
/// writes the gradient where slice read it.
bool runSliceGrad(KernelContext &context, const KernelCall &call) {
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  int64_t count = grad.numElements();
  if (count < result.numElements()) {
    cudaMemsetAsync(result.data, 0, result.sizeBytes(), streamOf(context));
    if (!launched(context, "slice_grad"))
      return false;
  }
  StridedIndex map;
  if (count == 0)
    return true;
  if (!sliceIndex(call, grad.shape, result.shape, map))
    return tooManyDimensions(context, "slice_grad");
  return launchStrided<true>(context, "slice_grad", map, grad.data, result.data, count,
                             result.numElements(), elementBytesOf(grad));
}

/// Moves each piece's blocks between the joined tensor and the piece, one launch per piece:
/// the shared core of concat (into the joined tensor) and split (out of it).
template <bool IntoJoined>
bool movePieces(KernelContext &context, const char *op, const TensorView &joined,
                const std::vector<TensorView> &pieces, int64_t axis) {
  int64_t offset = 0;
  for (const TensorView &piece : pieces) {
    int64_t pieceOffset = offset;
    offset += piece.shape[axis];
    if (piece.numElements() == 0)
      continue;
    int64_t unitBytes;
    PieceBlocks blocks = pieceBlocks(joined, piece, axis, pieceOffset, unitBytes);
    int64_t count = static_cast<int64_t>(piece.sizeBytes()) / unitBytes;
    bool narrow = fitsIn32Bits(piece.numElements(), joined.numElements());
    visitUnit(unitBytes, [&](auto tag) {
      using Unit = typename decltype(tag)::type;
      auto *whole = static_cast<Unit *>(joined.data);
      auto *part = static_cast<Unit *>(piece.data);
      if (narrow)
        movePiece<Unit, uint32_t, IntoJoined>
            <<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(whole, part, blocks, count);
      else
        movePiece<Unit, int64_t, IntoJoined>
            <<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(whole, part, blocks, count);
    });
    if (!launched(context, op))
      return false;
  }
  return true;
}

bool runConcat(KernelContext &context, const KernelCall &call) {
  return movePieces<true>(context, "concat", call.outputs[0], call.inputs,
                          attributesOf(call).intOr("axis", 0));
}

bool runSplit(KernelContext &context, const KernelCall &call) {
  return movePieces<false>(context, "split", call.inputs[0], call.outputs,
                           attributesOf(call).intOr("axis", 0));
}

} // namespace
} // namespace cuda

void addLayoutCudaKernels(CudaKernelRuns &runs) {
  runs["transpose"] = &cuda::runTranspose;
  runs["reshape"] = &cuda::runReshape;
  runs["copy"] = &cuda::runCopy;
  runs["offload"] = &cuda::runOffload;
  runs["reload"] = &cuda::runReload;
  runs["broadcast_to"] = &cuda::runBroadcastTo;
  runs["slice"] = &cuda::runSlice;
  runs["slice_grad"] = &cuda::runSliceGrad;
  runs["concat"] = &cuda::runConcat;
  runs["split"] = &cuda::runSplit;
  addIndexingCudaKernels(runs);
}

} // namespace memc::kernels
