//===- MatMul.cpp - numpy.matmul ------------------------------------------===//
//
// bf16 runs on oneDNN's matmul where the selection rule says so (OneDnnMatMul.h). Floats go
// through OpenBLAS sgemm. Another 16-bit product is computed a result tile at a time,
// widening only that tile's rows and columns, a block of K at a time (MatMulWorkspace.h), and its
// f32 sums are rounded once. Transposed operands (transpose_lhs/rhs) are sgemm's trans flags
// for f32 and the tiles' load order for 16-bit types. A batch that shares one right-hand matrix (x @ W, the common case)
// is one tall product; other batches are a loop of products, spread over threads by batch when
// the matrices are small. Integer matmul is a plain loop whose products and sums wrap.
//
// Workspace: oneDNN's scratchpad per slot, or the batch index pairs of a looped batch and, for f16/bf16,
// the widened tiles per slot.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/MatMulWorkspace.h"
#include "kernels/cpu/StridedLayout.h"
#include "kernels/cpu/ThreadPool.h"

#include <utility>

namespace memc::kernels {

namespace {

void matmulFloat(const MatMulDims &dims, std::pair<int64_t, int64_t> *pairs, const float *a,
                 const float *b, float *c) {
  int64_t m = dims.m, n = dims.n, k = dims.k, lda = dims.lda(), ldb = dims.ldb();
  GemmTransposes transposes{dims.transposes.lhs, dims.transposes.rhs};
  if (dims.stacksRows()) {
    gemmParallel(dims.batchCount * m, n, k, a, lda, b, ldb, c, n, transposes);
    return;
  }
  dims.batchPairs(pairs);
  auto multiply = [&](int64_t batch, bool parallel) {
    const float *lhs = a + pairs[batch].first * m * k;
    const float *rhs = b + pairs[batch].second * k * n;
    float *out = c + batch * m * n;
    if (parallel)
      gemmParallel(m, n, k, lhs, lda, rhs, ldb, out, n, transposes);
    else
      gemmSerial(m, n, k, lhs, lda, rhs, ldb, out, n, transposes);
  };
  double work = static_cast<double>(m) * static_cast<double>(n) * std::max<double>(k, 1);
  if (work >= 4.0 * kGemmParallelWork) {
    for (int64_t batch = 0; batch < dims.batchCount; ++batch)
      multiply(batch, true);
    return;
  }
  parallelFor(0, dims.batchCount,
              std::max<int64_t>(1, static_cast<int64_t>(kGemmParallelWork / work)),
              [&](int64_t begin, int64_t end) {
                for (int64_t batch = begin; batch < end; ++batch)
                  multiply(batch, false);
              });
}

/// A 16-bit product, tile by tile (MatMulWorkspace.h).
template <typename T>
void matmulPerTile(const MatMulDims &dims, std::pair<int64_t, int64_t> *pairs, float *scratch,
                   const T *a, const T *b, T *c) {
  WideningTiles tiles = wideningTiles(dims);
  int64_t m = tiles.rows, n = dims.n, k = dims.k;
  if (tiles.products > 1)
    dims.batchPairs(pairs);
  parallelForSlots(0, tiles.count(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
    float *lhs = scratch + slot * tiles.slotFloats;
    float *rhs = lhs + tiles.tileRows * tiles.depth;
    float *out = rhs + tiles.depth * tiles.tileColumns;
    for (int64_t task = begin; task < end; ++task) {
      int64_t product = task / tiles.tilesPerProduct(), tile = task % tiles.tilesPerProduct();
      const T *lhsMatrix = tiles.products > 1 ? a + pairs[product].first * m * k : a;
      const T *rhsMatrix = tiles.products > 1 ? b + pairs[product].second * k * n : b;
      T *result = c + product * m * n;
      int64_t row0 = (tile / tiles.columnTiles) * tiles.tileRows;
      int64_t column0 = (tile % tiles.columnTiles) * tiles.tileColumns;
      int64_t rows = std::min(tiles.tileRows, m - row0);
      int64_t columns = std::min(tiles.tileColumns, n - column0);
      // One pass with depth 0 when K is 0, which zeroes the sums.
      for (int64_t p0 = 0, depth = 0; p0 == 0 || p0 < k; p0 += depth) {
        depth = std::min(tiles.depth, k - p0);
        // A transposed lhs is stored [K, M], a transposed rhs [N, K].
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t p = 0; p < depth; ++p)
            lhs[i * depth + p] = Element<T>::load(
                dims.transposes.lhs ? lhsMatrix[(p0 + p) * m + row0 + i]
                                    : lhsMatrix[(row0 + i) * k + p0 + p]);
        for (int64_t p = 0; p < depth; ++p)
          for (int64_t j = 0; j < columns; ++j)
            rhs[p * columns + j] = Element<T>::load(
                dims.transposes.rhs ? rhsMatrix[(column0 + j) * k + p0 + p]
                                    : rhsMatrix[(p0 + p) * n + column0 + j]);
        gemmSerial(rows, columns, depth, lhs, depth, rhs, columns, out, columns, {}, p0 > 0);
        if (depth == 0)
          break;
      }
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < columns; ++j)
          result[(row0 + i) * n + column0 + j] = Element<T>::store(out[i * columns + j]);
    }
  });
}

/// oneDNN's blocks (OneDnnMatMul.h), spread over the pool's slots.
void matmulOnOneDnn(const KernelCall &call, const MatMulDims &dims,
                    const OneDnnMatMulBlocks &blocks, const MatMulScratch &scratch) {
  if (blocks.products > 1)
    dims.batchPairs(scratch.pairs);
  parallelForSlots(0, blocks.count(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task)
      runOneDnnMatMulBlock(call, blocks, scratch.pairs, task,
                           scratch.oneDnnScratchpads + slot * blocks.slotBytes);
  });
}

template <typename T>
void matmulInteger(const MatMulDims &dims, std::pair<int64_t, int64_t> *pairs, const T *a,
                   const T *b, T *c) {
  using U = std::make_unsigned_t<T>;
  int64_t m = dims.m, n = dims.n, k = dims.k;
  dims.batchPairs(pairs);
  parallelFor(0, dims.batchCount * m, std::max<int64_t>(1, kElementwiseGrain / (n * k + 1)),
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row) {
                  int64_t batch = row / m, i = row % m;
                  const T *lhs = a + pairs[batch].first * m * k;
                  const T *rhs = b + pairs[batch].second * k * n;
                  U *out = reinterpret_cast<U *>(c + row * n);
                  std::fill(out, out + n, U(0));
                  for (int64_t p = 0; p < k; ++p) {
                    U scale = static_cast<U>(dims.transposes.lhs ? lhs[p * m + i] : lhs[i * k + p]);
                    for (int64_t j = 0; j < n; ++j)
                      out[j] += scale * static_cast<U>(dims.transposes.rhs ? rhs[j * k + p]
                                                                           : rhs[p * n + j]);
                  }
                }
              });
}

bool runMatMul(KernelContext &context, const KernelCall &call) {
  const TensorView &output = call.outputs[0];
  MatMulDims dims(call);
  if (output.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  MatMulScratch scratch = carveMatMul(call, carver);
  if (!carver.fits(context))
    return false;
  if (scratch.oneDnn) {
    matmulOnOneDnn(call, dims, *scratch.oneDnn, scratch);
    return true;
  }
  visitNumeric(output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      matmulInteger<T>(dims, scratch.pairs, call.inputs[0].as<T>(), call.inputs[1].as<T>(),
                       output.as<T>());
    } else if (scratch.tiles) {
      if constexpr (!std::is_same_v<T, float>)
        matmulPerTile<T>(dims, scratch.pairs, scratch.tiles, call.inputs[0].as<T>(),
                         call.inputs[1].as<T>(), output.as<T>());
    } else {
      runInFloat(call, scratch.operands, [&](const float *a, const float *b, float *c) {
        matmulFloat(dims, scratch.pairs, a, b, c);
      });
    }
  });
  return true;
}

} // namespace

void addMatMulKernels(KernelRuns &table) { table["matmul"] = &runMatMul; }

} // namespace memc::kernels
