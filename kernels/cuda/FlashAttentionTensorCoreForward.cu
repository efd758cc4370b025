//===- FlashAttentionTensorCoreForward.cu - flash_attention on tensor cores ----------===//
//
// FlashAttention-2's forward for f16/bf16 with head dimensions of 64 or 128: one block of four
// warps per (batch, head, tile of 64 queries), each warp owning 16 query rows. The tiles of 64
// keys the queries see stream through shared memory (q stays); per tile a warp computes its
// scores S = q k^T with mma.sync into f32 accumulators, folds them into its rows' online
// softmax (AttentionMath.h: the row maximum across the quad of lanes holding a row, each lane
// keeping its part of the row sum), drops them, and adds P v with P rounded to the element
// type straight from the accumulators, as FlashAttention does. The output is written once,
// through the warp's own rows of the q tile, with the f32 logsumexp.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/FlashAttentionLaunch.cuh"
#include "kernels/cuda/TensorCoreTiles.cuh"

namespace memc::kernels::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kQueryTile = kWarps * 16;
constexpr int kKeyTile = 64;

template <int kD> struct ForwardTiles {
  Tile16<kQueryTile, kD> queries;
  Tile16<kKeyTile, kD> keys, values;
  static constexpr int kBytes = Tile16<kQueryTile, kD>::kBytes + 2 * Tile16<kKeyTile, kD>::kBytes;

  __device__ explicit ForwardTiles(uint16_t *base)
      : queries{base}, keys{base + Tile16<kQueryTile, kD>::kBytes / 2},
        values{keys.data + Tile16<kKeyTile, kD>::kBytes / 2} {}
};

template <typename T, int kD>
__global__ void __launch_bounds__(kThreads) tensorCoreForward(AttentionForwardArgs args) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const ForwardTiles<kD> tiles(reinterpret_cast<uint16_t *>(attentionShared));
  const DropoutMask dropout = args.dropout.mask();
  const uint16_t *query = static_cast<const uint16_t *>(args.query),
                 *key = static_cast<const uint16_t *>(args.key),
                 *value = static_cast<const uint16_t *>(args.value);
  uint16_t *output = static_cast<uint16_t *>(args.output);
  const int lane = threadIdx.x % 32, warpRow = threadIdx.x / 32 * 16;

  const int64_t queryTiles = (dims.queries + kQueryTile - 1) / kQueryTile;
  for (int64_t task = blockIdx.x; task < dims.batch * dims.heads * queryTiles; task += gridDim.x) {
    const int64_t bh = task / queryTiles, b = bh / dims.heads, h = bh % dims.heads;
    const int64_t kvHead = h / dims.group(), query0 = task % queryTiles * kQueryTile;
    const int queryCount = rowsLeft(kQueryTile, dims.queries - query0);
    // This lane's two rows: accumulator elements 0-1 and 2-3.
    const int64_t rows[2] = {query0 + warpRow + lane / 4, query0 + warpRow + lane / 4 + 8};
    __syncthreads(); // the previous task's output is stored
    loadTile<kThreads>(tiles.queries, query + dims.queryRow(b, h, query0, kD), queryCount,
                       args.aligned16);

    float out[kD / 8][4] = {};
    SoftmaxRow softmax[2];
    const int64_t keyEnd = scores.visibleKeyEnd(query0 + queryCount);
    for (int64_t key0 = 0; key0 < keyEnd; key0 += kKeyTile) {
      const int keyCount = rowsLeft(kKeyTile, dims.keys - key0);
      __syncthreads(); // the previous key tile is consumed
      loadTile<kThreads>(tiles.keys, key + dims.keyRow(b, kvHead, key0, kD), keyCount,
                         args.aligned16);
      loadTile<kThreads>(tiles.values, value + dims.keyRow(b, kvHead, key0, kD), keyCount,
                         args.aligned16);
      __syncthreads();

      float s[kKeyTile / 8][4] = {};
#pragma unroll
      for (int k = 0; k < kD; k += 16) {
        uint32_t a[4];
        loadA(a, tiles.queries, warpRow, k, lane);
#pragma unroll
        for (int n = 0; n < kKeyTile / 8; ++n) {
          uint32_t bk[2];
          loadBFromRows(bk, tiles.keys, n * 8, k, lane);
          mma<T>(s[n], a, bk);
        }
      }

      float tileMax[2] = {kHiddenScore, kHiddenScore};
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          s[n][e] = scores.scoreOrHidden(s[n][e], b, h, rows[e / 2],
                                         key0 + n * 8 + accumulatorCol(lane, e));
          tileMax[e / 2] = fmaxf(tileMax[e / 2], s[n][e]);
        }
      }
      float rescale[2], tileSum[2] = {0.0f, 0.0f};
#pragma unroll
      for (int r = 0; r < 2; ++r)
        rescale[r] = softmax[r].raiseMax(quadMax(tileMax[r]));
#pragma unroll
      for (int n = 0; n < kKeyTile / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float weight = softmax[e / 2].weight(s[n][e]);
          tileSum[e / 2] += weight;
          // Dropout after the row sums: the output is (P * M / (1 - p)) v, normalised by the
          // undropped softmax's sum, whose logsumexp the backward reads.
          const int64_t keyIndex = key0 + n * 8 + accumulatorCol(lane, e);
          s[n][e] = weight == 0.0f
                        ? 0.0f
                        : weight * dropoutFactor(dropout, dims, b, h, rows[e / 2], keyIndex);
        }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r)
        softmax[r].accumulate(rescale[r], tileSum[r]);
#pragma unroll
      for (int n = 0; n < kD / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          out[n][e] *= rescale[e / 2];
      }

#pragma unroll
      for (int k = 0; k < kKeyTile / 16; ++k) {
        uint32_t a[4];
        accumulatorsAsA<T>(a, s[2 * k], s[2 * k + 1]);
#pragma unroll
        for (int n = 0; n < kD / 8; n += 2) {
          uint32_t bv[2][2];
          loadBFromColumns(bv, tiles.values, k * 16, n * 8, lane);
          mma<T>(out[n], a, bv[0]);
          mma<T>(out[n + 1], a, bv[1]);
        }
      }
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
      softmax[r].sum = quadSum(softmax[r].sum);
      if (lane % 4 == 0 && rows[r] < dims.queries)
        args.logsumexp[dims.queryRow(b, h, rows[r], 1)] = softmax[r].logsumexp();
    }
    // The output goes out through the warp's own rows of the q tile, once every thread is past
    // the tile's load (with no key tile, nothing else stood between).
    __syncthreads();
    storeAccumulators<T>(tiles.queries, warpRow, out, softmax[0].outputScale(),
                         softmax[1].outputScale(), lane);
    __syncthreads();
    storeTile<kThreads>(output + dims.queryRow(b, h, query0, kD), tiles.queries, queryCount,
                        args.aligned16);
  }
}

template <typename T, int kD>
bool launch(KernelContext &context, const AttentionForwardArgs &args) {
  const AttentionDims &dims = args.scores.dims;
  const int64_t tasks = dims.batch * dims.heads * ((dims.queries + kQueryTile - 1) / kQueryTile);
  if (tasks == 0)
    return true;
  if (!allowSharedBytes(context, tensorCoreForward<T, kD>, ForwardTiles<kD>::kBytes,
                        "flash_attention"))
    return false;
  tensorCoreForward<T, kD>
      <<<blocksFor(tasks), kThreads, ForwardTiles<kD>::kBytes, streamOf(context)>>>(args);
  return launched(context, "flash_attention");
}

} // namespace

bool launchTensorCoreForward(KernelContext &context, DType dtype,
                             const AttentionForwardArgs &args) {
  const bool wide = args.scores.dims.headDim == 128;
  if (dtype == DType::BF16)
    return wide ? launch<BFloat16, 128>(context, args) : launch<BFloat16, 64>(context, args);
  return wide ? launch<Half, 128>(context, args) : launch<Half, 64>(context, args);
}

} // namespace memc::kernels::cuda
