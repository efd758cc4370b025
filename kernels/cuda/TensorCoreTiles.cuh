//===- TensorCoreTiles.cuh - f16/bf16 tiles for mma.sync -----------*- CUDA -*-===//
//
// What the tensor-core attention kernels (FlashAttentionTensorCore*.cu) build their products
// from: tiles of 16-bit elements in shared memory, mma.sync.m16n8k16 (f32 accumulators, sm_80
// and later), and the warp-level fragments of its operands (PTX ISA, "Matrix Fragments for
// mma.m16n8k16"): with g = lane / 4 and t = lane % 4,
//  - A (16 x 16, row-major), four registers of two elements: (g, 2t..2t+1), (g + 8, 2t..),
//    (g, 2t + 8..), (g + 8, 2t + 8..);
//  - B (16 x 8, k x n), two registers: (k = 2t..2t+1, n = g), (k = 2t + 8.., n = g);
//  - the accumulator C (16 x 8 f32): (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1).
// A pair of accumulator tiles side by side is an A operand once rounded (accumulatorsAsA):
// attention's probabilities go from one product to the next without shared memory.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_TENSORCORETILES_CUH
#define MEMC_KERNELS_CUDA_TENSORCORETILES_CUH

#include "kernels/Float16.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace memc::kernels::cuda {

/// kRows x kCols 16-bit elements in shared memory, each row padded by 8 elements: rows stay
/// 16-byte aligned for vector copies and ldmatrix, and the 8 rows a fragment load touches start
/// 4 banks apart, so a warp's loads do not conflict.
template <int kRows, int kCols> struct Tile16 {
  static constexpr int kStride = kCols + 8;
  static constexpr int kBytes = kRows * kStride * 2;
  uint16_t *data;

  __device__ uint16_t *row(int r) const { return data + r * kStride; }
  /// Elements (r, c) and (r, c + 1), c even, as one register (the lower column in the low half).
  __device__ uint32_t pair(int r, int c) const {
    return *reinterpret_cast<const uint32_t *>(data + r * kStride + c);
  }
};

/// Rows [0, count) of a tile from `source` (row-major, kCols elements a row) and zeros in the
/// rows after them: a partial tile's padding must be finite, as zero probabilities multiply it.
/// With `aligned16` (source 16-byte aligned), 16-byte copies.
template <int kThreads, int kRows, int kCols>
__device__ void loadTile(const Tile16<kRows, kCols> &tile, const uint16_t *source, int count,
                         bool aligned16) {
  static_assert(kCols % 8 == 0, "rows are whole 16-byte chunks");
  if (aligned16) {
    constexpr int kChunks = kCols / 8;
    for (int i = threadIdx.x; i < kRows * kChunks; i += kThreads) {
      int r = i / kChunks, c = i % kChunks * 8;
      uint4 chunk = make_uint4(0, 0, 0, 0);
      if (r < count)
        chunk = *reinterpret_cast<const uint4 *>(source + static_cast<int64_t>(r) * kCols + c);
      *reinterpret_cast<uint4 *>(tile.row(r) + c) = chunk;
    }
    return;
  }
  for (int i = threadIdx.x; i < kRows * kCols; i += kThreads) {
    int r = i / kCols, c = i % kCols;
    tile.row(r)[c] = r < count ? source[static_cast<int64_t>(r) * kCols + c] : uint16_t{0};
  }
}

/// Rows [0, count) of a tile into `target` (row-major, kCols elements a row).
template <int kThreads, int kRows, int kCols>
__device__ void storeTile(uint16_t *target, const Tile16<kRows, kCols> &tile, int count,
                          bool aligned16) {
  if (aligned16) {
    constexpr int kChunks = kCols / 8;
    for (int i = threadIdx.x; i < count * kChunks; i += kThreads) {
      int r = i / kChunks, c = i % kChunks * 8;
      *reinterpret_cast<uint4 *>(target + static_cast<int64_t>(r) * kCols + c) =
          *reinterpret_cast<const uint4 *>(tile.row(r) + c);
    }
    return;
  }
  for (int i = threadIdx.x; i < count * kCols; i += kThreads)
    target[i] = tile.row(i / kCols)[i % kCols];
}

/// Two f32 rounded to T (nearest even) in one register, `low` in the low half.
template <typename T> __device__ uint32_t packPair(float low, float high);
template <> __device__ inline uint32_t packPair<Half>(float low, float high) {
  __half2 pair = __floats2half2_rn(low, high);
  uint32_t bits;
  memcpy(&bits, &pair, sizeof bits);
  return bits;
}
template <> __device__ inline uint32_t packPair<BFloat16>(float low, float high) {
  __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  uint32_t bits;
  memcpy(&bits, &pair, sizeof bits);
  return bits;
}

/// c += a b on the tensor cores: a 16 x 16, b 16 x 8, c 16 x 8 in f32.
template <typename T>
__device__ void mma(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]);
template <>
__device__ inline void mma<Half>(float (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
template <>
__device__ inline void mma<BFloat16>(float (&c)[4], const uint32_t (&a)[4],
                                     const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// Row and column, in its 16 x 8 tile, of accumulator element e (0..3) of `lane`.
__device__ inline int accumulatorRow(int lane, int e) { return lane / 4 + e / 2 * 8; }
__device__ inline int accumulatorCol(int lane, int e) { return lane % 4 * 2 + e % 2; }

/// The A operand of rows [row0, +16) x columns [col0, +16) of a row-major tile.
template <int kRows, int kCols>
__device__ void loadA(uint32_t (&a)[4], const Tile16<kRows, kCols> &tile, int row0, int col0,
                      int lane) {
  const int g = lane / 4, t = lane % 4;
  a[0] = tile.pair(row0 + g, col0 + 2 * t);
  a[1] = tile.pair(row0 + g + 8, col0 + 2 * t);
  a[2] = tile.pair(row0 + g, col0 + 2 * t + 8);
  a[3] = tile.pair(row0 + g + 8, col0 + 2 * t + 8);
}

/// The B operand whose element (k, n) is tile(row0 + n, col0 + k): a product with the tile's
/// rows as columns (q k^T with k's rows).
template <int kRows, int kCols>
__device__ void loadBFromRows(uint32_t (&b)[2], const Tile16<kRows, kCols> &tile, int row0,
                              int col0, int lane) {
  const int g = lane / 4, t = lane % 4;
  b[0] = tile.pair(row0 + g, col0 + 2 * t);
  b[1] = tile.pair(row0 + g, col0 + 2 * t + 8);
}

/// The B operands of two adjacent n8 tiles whose element (k, n) is tile(row0 + k, col0 + n)
/// (P v with v's rows), by ldmatrix transposing 8 x 8 blocks: lanes 8m..8m+7 give the rows of
/// block m, which is (rows +0, cols +0), (+8, +0), (+0, +8), (+8, +8) for m = 0..3.
template <int kRows, int kCols>
__device__ void loadBFromColumns(uint32_t (&b)[2][2], const Tile16<kRows, kCols> &tile, int row0,
                                 int col0, int lane) {
  const int block = lane / 8;
  const uint16_t *address = tile.row(row0 + block % 2 * 8 + lane % 8) + col0 + block / 2 * 8;
  const uint32_t shared = static_cast<uint32_t>(__cvta_generic_to_shared(address));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(b[0][0]), "=r"(b[0][1]), "=r"(b[1][0]), "=r"(b[1][1])
               : "r"(shared));
}

/// The A operand made of accumulator tiles `left` (columns 0-7) and `right` (columns 8-15),
/// rounded to T.
template <typename T>
__device__ void accumulatorsAsA(uint32_t (&a)[4], const float (&left)[4], const float (&right)[4]) {
  a[0] = packPair<T>(left[0], left[1]);
  a[1] = packPair<T>(left[2], left[3]);
  a[2] = packPair<T>(right[0], right[1]);
  a[3] = packPair<T>(right[2], right[3]);
}

/// Rows [row0, +16) of a tile from kN accumulator tiles (columns 8n..8n+7), rounded to T, the
/// first 8 rows' elements times scaleTop, the last 8 rows' times scaleBottom.
template <typename T, int kRows, int kCols, int kN>
__device__ void storeAccumulators(const Tile16<kRows, kCols> &tile, int row0,
                                  const float (&c)[kN][4], float scaleTop, float scaleBottom,
                                  int lane) {
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    *reinterpret_cast<uint32_t *>(tile.row(row0 + g) + n * 8 + 2 * t) =
        packPair<T>(c[n][0] * scaleTop, c[n][1] * scaleTop);
    *reinterpret_cast<uint32_t *>(tile.row(row0 + g + 8) + n * 8 + 2 * t) =
        packPair<T>(c[n][2] * scaleBottom, c[n][3] * scaleBottom);
  }
}

/// The max and the sum over the four lanes of a quad (the lanes holding one accumulator row).
__device__ inline float quadMax(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ inline float quadSum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_TENSORCORETILES_CUH
