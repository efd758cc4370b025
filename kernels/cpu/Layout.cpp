//===- Layout.cpp - kernels that move elements without computing ----------===//
//
// transpose reshape broadcast_to concat split slice gather, and copy (the runtime's memcpy
// between buffers). Elements are moved as unsigned integers of their size, so these kernels
// take every element type and never change a bit pattern (NaN payloads, bool bytes).
// transpose, slice and broadcast_to are one strided walk (StridedLayout) with different
// strides; runs that are contiguous on both sides become memcpy.
//
// Workspace: gather's validated indices.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/LayoutWorkspace.h"
#include "kernels/cpu/StridedLayout.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <cstring>

namespace memc::kernels {

namespace {

/// memcpy over threads (large copies are bandwidth bound; several cores move more bytes).
void parallelCopy(void *destination, const void *source, size_t bytes) {
  if (destination == source || bytes == 0)
    return;
  auto *to = static_cast<char *>(destination);
  const auto *from = static_cast<const char *>(source);
  parallelFor(
      0, static_cast<int64_t>(bytes), kElementwiseGrain * 8,
      [&](int64_t begin, int64_t end) { std::memcpy(to + begin, from + begin, end - begin); });
}

/// output[i] = input[base + walk offset], over threads.
void stridedCopy(const TensorView &input, const TensorView &output, int64_t base,
                 const StridedLayout<1> &layout) {
  visitBits(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>() + base;
    T *y = output.as<T>();
    int64_t stride = layout.innerStride(0);
    parallelFor(0, layout.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      layout.forEachRun(begin, end,
                        [&](int64_t out, const std::array<int64_t, 1> &offsets, int64_t count) {
                          const T *from = x + offsets[0];
                          if (stride == 1)
                            std::memcpy(y + out, from, count * sizeof(T));
                          else if (stride == 0)
                            std::fill(y + out, y + out + count, *from);
                          else
                            for (int64_t i = 0; i < count; ++i)
                              y[out + i] = from[i * stride];
                        });
    });
  });
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

/// A transpose whose innermost output dimension is strided in the input, done in square tiles
/// so that both the strided reads and the contiguous writes stay in cache. `dims` and
/// `strides` are the merged output dimensions and their input strides; the input's contiguous
/// dimension is output dimension `unit` (strides[unit] == 1).
template <typename T>
void tiledTranspose(const T *x, T *y, const Shape &dims, const Shape &strides, size_t unit) {
  constexpr int64_t kTile = 32;
  size_t last = dims.size() - 1;
  Shape outStrides = contiguousStrides(dims);
  Shape otherDims, otherIn, otherOut;
  for (size_t d = 0; d < last; ++d)
    if (d != unit) {
      otherDims.push_back(dims[d]);
      otherIn.push_back(strides[d]);
      otherOut.push_back(outStrides[d]);
    }
  int64_t others = 1;
  for (int64_t dim : otherDims)
    others *= dim;
  int64_t rows = dims[unit], cols = dims[last];
  int64_t rowTiles = (rows + kTile - 1) / kTile, colTiles = (cols + kTile - 1) / kTile;
  int64_t tiles = rowTiles * colTiles;
  int64_t rowStride = outStrides[unit], colStride = strides[last];
  parallelFor(0, others * tiles, std::max<int64_t>(1, kElementwiseGrain / (kTile * kTile)),
              [&](int64_t begin, int64_t end) {
                for (int64_t task = begin; task < end; ++task) {
                  int64_t rest = task / tiles, inBase = 0, outBase = 0;
                  for (size_t d = otherDims.size(); d-- > 0;) {
                    int64_t index = rest % otherDims[d];
                    rest /= otherDims[d];
                    inBase += index * otherIn[d];
                    outBase += index * otherOut[d];
                  }
                  int64_t i0 = (task % tiles) / colTiles * kTile;
                  int64_t j0 = (task % tiles) % colTiles * kTile;
                  int64_t i1 = std::min(rows, i0 + kTile), j1 = std::min(cols, j0 + kTile);
                  for (int64_t i = i0; i < i1; ++i)
                    for (int64_t j = j0; j < j1; ++j)
                      y[outBase + i * rowStride + j] = x[inBase + i + j * colStride];
                }
              });
}

bool runTranspose(KernelContext &, const KernelCall &call) {
  std::vector<int64_t> perm;
  attributesOf(call).getInts("perm", perm);
  Shape inputStrides = contiguousStrides(call.inputs[0].shape), strides;
  for (int64_t dim : perm)
    strides.push_back(inputStrides[dim]);
  StridedLayout<1> layout(call.outputs[0].shape, {strides});
  const Shape &dims = layout.mergedDims(), &merged = layout.mergedStrides(0);
  auto unit = std::find(merged.begin(), merged.end() - 1, 1);
  if (layout.numElements() == 0 || merged.back() == 1 || unit == merged.end() - 1) {
    stridedCopy(call.inputs[0], call.outputs[0], 0, layout);
    return true;
  }
  visitBits(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    tiledTranspose(call.inputs[0].as<T>(), call.outputs[0].as<T>(), dims, merged,
                   static_cast<size_t>(unit - merged.begin()));
  });
  return true;
}

//===----------------------------------------------------------------------===//
// reshape, copy
//===----------------------------------------------------------------------===//

bool runCopy(KernelContext &, const KernelCall &call) {
  parallelCopy(call.outputs[0].data, call.inputs[0].data, call.inputs[0].sizeBytes());
  return true;
}

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

bool runBroadcastTo(KernelContext &, const KernelCall &call) {
  const Shape &output = call.outputs[0].shape;
  stridedCopy(call.inputs[0], call.outputs[0], 0,
              StridedLayout<1>(output, {broadcastStrides(output, call.inputs[0].shape)}));
  return true;
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

bool runSlice(KernelContext &, const KernelCall &call) {
  std::vector<int64_t> starts, steps;
  attributesOf(call).getInts("starts", starts);
  attributesOf(call).getInts("steps", steps);
  if (call.outputs[0].numElements() == 0)
    return true;
  Shape inputStrides = contiguousStrides(call.inputs[0].shape), strides;
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) {
    base += starts[d] * inputStrides[d];
    strides.push_back(boundedSliceStep(steps[d], call.inputs[0].shape[d]) * inputStrides[d]);
  }
  stridedCopy(call.inputs[0], call.outputs[0], base,
              StridedLayout<1>(call.outputs[0].shape, {strides}));
  return true;
}

//===----------------------------------------------------------------------===//
// concat, split
//===----------------------------------------------------------------------===//

/// Size of the blocks concat and split move: everything from `axis` inwards, per unit of the
/// axis.
int64_t innerSize(const Shape &shape, int64_t axis) {
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return inner;
}

int64_t outerSize(const Shape &shape, int64_t axis) {
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  return outer;
}

/// Moves, for each outer index, piece p's block between the joined tensor and the piece:
/// the shared core of concat (gather the pieces) and split (scatter the joined tensor).
void movePieces(const TensorView &joined, const std::vector<TensorView> &pieces, int64_t axis,
                bool intoJoined) {
  size_t element = dtypeSize(joined.dtype);
  int64_t outer = outerSize(joined.shape, axis), inner = innerSize(joined.shape, axis);
  int64_t joinedRow = joined.shape[axis] * inner;
  std::vector<int64_t> pieceOffsets;
  int64_t offset = 0;
  for (const TensorView &piece : pieces) {
    pieceOffsets.push_back(offset);
    offset += piece.shape[axis] * inner;
  }
  int64_t count = static_cast<int64_t>(pieces.size());
  int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (joinedRow / count + 1));
  parallelFor(0, outer * count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      int64_t o = task / count, p = task % count;
      int64_t pieceRow = pieces[p].shape[axis] * inner;
      char *joinedBlock =
          static_cast<char *>(joined.data) + (o * joinedRow + pieceOffsets[p]) * element;
      char *pieceBlock = static_cast<char *>(pieces[p].data) + o * pieceRow * element;
      if (pieceRow == 0)
        continue;
      if (intoJoined)
        std::memcpy(joinedBlock, pieceBlock, pieceRow * element);
      else
        std::memcpy(pieceBlock, joinedBlock, pieceRow * element);
    }
  });
}

bool runConcat(KernelContext &, const KernelCall &call) {
  movePieces(call.outputs[0], call.inputs, attributesOf(call).intOr("axis", 0), true);
  return true;
}

bool runSplit(KernelContext &, const KernelCall &call) {
  if (!call.outputs.empty())
    movePieces(call.inputs[0], call.outputs, attributesOf(call).intOr("axis", 0), false);
  return true;
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

bool runGather(KernelContext &context, const KernelCall &call) {
  std::string error;
  const TensorView &data = call.inputs[0], &indices = call.inputs[1], &output = call.outputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  int64_t dim = data.shape[axis];
  int64_t count = indices.numElements();
  WorkspaceCarver carver(call);
  int64_t *rows = carveGather(call, carver);
  if (!carver.fits(context))
    return false;
  // Indices are data: validate them all before writing anything.
  bool valid = visitIndex(indices.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I *values = indices.as<I>();
    for (int64_t i = 0; i < count; ++i) {
      int64_t index = values[i];
      if (index < -dim || index >= dim) {
        error = "gather index " + std::to_string(index) + " (at position " + std::to_string(i) +
                ") out of range for dimension " + std::to_string(axis) + " of size " +
                std::to_string(dim);
        return false;
      }
      rows[i] = index < 0 ? index + dim : index;
    }
    return true;
  });
  if (!valid)
    return context.fail(error);
  size_t element = dtypeSize(data.dtype);
  int64_t outer = outerSize(data.shape, axis), inner = innerSize(data.shape, axis);
  size_t block = static_cast<size_t>(inner) * element;
  if (block == 0)
    return true;
  parallelFor(0, outer * count, std::max<int64_t>(1, kElementwiseGrain / inner),
              [&](int64_t begin, int64_t end) {
                for (int64_t task = begin; task < end; ++task) {
                  int64_t o = task / count, i = task % count;
                  const char *from =
                      static_cast<const char *>(data.data) + ((o * dim + rows[i]) * block);
                  std::memcpy(static_cast<char *>(output.data) + task * block, from, block);
                }
              });
  return true;
}

} // namespace

void addLayoutKernels(KernelRuns &table) {
  table["transpose"] = &runTranspose;
  table["reshape"] = &runCopy;
  table["copy"] = &runCopy;
  // Activations to and from host memory: on the CPU both are memory.
  table["offload"] = &runCopy;
  table["reload"] = &runCopy;
  table["broadcast_to"] = &runBroadcastTo;
  table["slice"] = &runSlice;
  table["concat"] = &runConcat;
  table["split"] = &runSplit;
  table["gather"] = &runGather;
}

} // namespace memc::kernels
