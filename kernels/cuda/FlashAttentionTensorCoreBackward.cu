//===- FlashAttentionTensorCoreBackward.cu - flash_attention_grad on tensor cores ----===//
//
// FlashAttention-2's backward for f16/bf16 with head dimensions of 64 or 128, in the two passes
// of the CPU kernel (AttentionBackward.cpp): each writes its own outputs, so the gradients are
// deterministic and need neither atomics nor an f32 dQ in scratch, for one more recomputation
// of the scores (7 products per tile instead of 5).
//  1. keyGradients: one block of four warps per (batch, kv head, tile of 64 keys), each warp
//     owning 16 keys and their dK and dV accumulators. Tiles of 32 queries of every query head
//     sharing the kv head (those that see the keys) stream through shared memory; per tile a
//     warp computes S^T = k q^T and dP^T = v dO^T, recomputes P^T from the saved logsumexp and
//     dS^T (AttentionMath.h), and adds dV += (P^T dropped) dO and dK += dS^T q, P^T and dS^T
//     going from accumulators to A operands.
//  2. queryGradient: one block per (batch, head, tile of 64 queries), each warp owning 16
//     queries and their dQ; tiles of 64 keys stream; S = q k^T, dP = dO v^T, dS, dQ += dS k.
// Like the forward, the operands P and dS are rounded to the element type for their products.
// The gradients are written once, through the warp's own rows of the k, v or q tile.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/FlashAttentionLaunch.cuh"
#include "kernels/cuda/TensorCoreTiles.cuh"

namespace memc::kernels::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
/// Pass 1: keys a block owns, queries a tile streams.
constexpr int kOwnedKeys = kWarps * 16;
constexpr int kQueryStep = 32;
/// Pass 2: queries a block owns, keys a tile streams.
constexpr int kOwnedQueries = kWarps * 16;
constexpr int kKeyStep = 64;

template <int kD> struct KeyPassTiles {
  Tile16<kOwnedKeys, kD> keys, values;
  Tile16<kQueryStep, kD> queries, outputGrad;
  float *logsumexp, *rowDots; // [kQueryStep]
  static constexpr int kBytes = 2 * Tile16<kOwnedKeys, kD>::kBytes +
                                2 * Tile16<kQueryStep, kD>::kBytes +
                                2 * kQueryStep * static_cast<int>(sizeof(float));

  __device__ explicit KeyPassTiles(unsigned char *base)
      : keys{reinterpret_cast<uint16_t *>(base)}, values{keys.data +
                                                         Tile16<kOwnedKeys, kD>::kBytes / 2},
        queries{values.data + Tile16<kOwnedKeys, kD>::kBytes / 2},
        outputGrad{queries.data + Tile16<kQueryStep, kD>::kBytes / 2},
        logsumexp(reinterpret_cast<float *>(outputGrad.data + Tile16<kQueryStep, kD>::kBytes / 2)),
        rowDots(logsumexp + kQueryStep) {}
};

template <int kD> struct QueryPassTiles {
  Tile16<kOwnedQueries, kD> queries, outputGrad;
  Tile16<kKeyStep, kD> keys, values;
  static constexpr int kBytes =
      2 * Tile16<kOwnedQueries, kD>::kBytes + 2 * Tile16<kKeyStep, kD>::kBytes;

  __device__ explicit QueryPassTiles(unsigned char *base)
      : queries{reinterpret_cast<uint16_t *>(base)}, outputGrad{queries.data +
                                                                Tile16<kOwnedQueries, kD>::kBytes /
                                                                    2},
        keys{outputGrad.data + Tile16<kOwnedQueries, kD>::kBytes / 2},
        values{keys.data + Tile16<kKeyStep, kD>::kBytes / 2} {}
};

/// The backward's operands as 16-bit elements.
struct GradTensors16 {
  const uint16_t *outputGrad, *query, *key, *value;
  uint16_t *queryGrad, *keyGrad, *valueGrad;

  __device__ explicit GradTensors16(const AttentionBackwardArgs &args)
      : outputGrad(static_cast<const uint16_t *>(args.outputGrad)),
        query(static_cast<const uint16_t *>(args.query)),
        key(static_cast<const uint16_t *>(args.key)),
        value(static_cast<const uint16_t *>(args.value)),
        queryGrad(static_cast<uint16_t *>(args.queryGrad)),
        keyGrad(static_cast<uint16_t *>(args.keyGrad)),
        valueGrad(static_cast<uint16_t *>(args.valueGrad)) {}
};

template <typename T, int kD>
__global__ void __launch_bounds__(kThreads) tensorCoreKeyGradients(AttentionBackwardArgs args) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const KeyPassTiles<kD> tiles(attentionShared);
  const DropoutMask dropout = args.dropout.mask();
  const GradTensors16 tensors(args);
  const int lane = threadIdx.x % 32, warpRow = threadIdx.x / 32 * 16;

  const int64_t keyTiles = (dims.keys + kOwnedKeys - 1) / kOwnedKeys;
  for (int64_t task = blockIdx.x; task < dims.batch * dims.kvHeads * keyTiles; task += gridDim.x) {
    const int64_t bk = task / keyTiles, b = bk / dims.kvHeads, kvHead = bk % dims.kvHeads;
    const int64_t key0 = task % keyTiles * kOwnedKeys;
    const int keyCount = rowsLeft(kOwnedKeys, dims.keys - key0);
    // This lane's two keys: accumulator elements 0-1 and 2-3.
    const int64_t keys[2] = {key0 + warpRow + lane / 4, key0 + warpRow + lane / 4 + 8};
    __syncthreads(); // the previous task's gradients are stored
    loadTile<kThreads>(tiles.keys, tensors.key + dims.keyRow(b, kvHead, key0, kD), keyCount,
                       args.aligned16);
    loadTile<kThreads>(tiles.values, tensors.value + dims.keyRow(b, kvHead, key0, kD), keyCount,
                       args.aligned16);

    float keyGrad[kD / 8][4] = {}, valueGrad[kD / 8][4] = {};
    const int64_t group = dims.group();
    for (int64_t h = kvHead * group; h < (kvHead + 1) * group; ++h)
      for (int64_t query0 = scores.firstQueryTileSeeing(key0, kQueryStep) * kQueryStep;
           query0 < dims.queries; query0 += kQueryStep) {
        const int queryCount = rowsLeft(kQueryStep, dims.queries - query0);
        __syncthreads(); // the previous query tile is consumed
        loadTile<kThreads>(tiles.queries, tensors.query + dims.queryRow(b, h, query0, kD),
                           queryCount, args.aligned16);
        loadTile<kThreads>(tiles.outputGrad, tensors.outputGrad + dims.queryRow(b, h, query0, kD),
                           queryCount, args.aligned16);
        for (int r = threadIdx.x; r < kQueryStep; r += kThreads) {
          const bool present = r < queryCount;
          const int64_t row = dims.queryRow(b, h, query0 + r, 1);
          tiles.logsumexp[r] = present ? args.logsumexp[row] : kHiddenScore;
          tiles.rowDots[r] = present ? args.rowDots[row] : 0.0f;
        }
        __syncthreads();

        // S^T and dP^T of the warp's 16 keys by the tile's queries.
        float s[kQueryStep / 8][4] = {}, dp[kQueryStep / 8][4] = {};
#pragma unroll
        for (int k = 0; k < kD; k += 16) {
          uint32_t ak[4], av[4];
          loadA(ak, tiles.keys, warpRow, k, lane);
          loadA(av, tiles.values, warpRow, k, lane);
#pragma unroll
          for (int n = 0; n < kQueryStep / 8; ++n) {
            uint32_t bq[2], bo[2];
            loadBFromRows(bq, tiles.queries, n * 8, k, lane);
            loadBFromRows(bo, tiles.outputGrad, n * 8, k, lane);
            mma<T>(s[n], ak, bq);
            mma<T>(dp[n], av, bo);
          }
        }
        // s becomes the dropped P^T, dp becomes dS^T.
#pragma unroll
        for (int n = 0; n < kQueryStep / 8; ++n) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int column = n * 8 + accumulatorCol(lane, e);
            const int64_t queryIndex = query0 + column, keyIndex = keys[e / 2];
            const float probability = probabilityFromLogsumexp(
                scores.scoreOrHidden(s[n][e], b, h, queryIndex, keyIndex), tiles.logsumexp[column]);
            const float factor = probability == 0.0f
                                     ? 1.0f
                                     : dropoutFactor(dropout, dims, b, h, queryIndex, keyIndex);
            s[n][e] = probability * factor;
            dp[n][e] =
                scoreGradient(probability, dp[n][e], factor, tiles.rowDots[column], scores.scale);
          }
        }
        // dV += P^T dO and dK += dS^T q.
#pragma unroll
        for (int k = 0; k < kQueryStep / 16; ++k) {
          uint32_t ap[4], ads[4];
          accumulatorsAsA<T>(ap, s[2 * k], s[2 * k + 1]);
          accumulatorsAsA<T>(ads, dp[2 * k], dp[2 * k + 1]);
#pragma unroll
          for (int n = 0; n < kD / 8; n += 2) {
            uint32_t bo[2][2], bq[2][2];
            loadBFromColumns(bo, tiles.outputGrad, k * 16, n * 8, lane);
            mma<T>(valueGrad[n], ap, bo[0]);
            mma<T>(valueGrad[n + 1], ap, bo[1]);
            loadBFromColumns(bq, tiles.queries, k * 16, n * 8, lane);
            mma<T>(keyGrad[n], ads, bq[0]);
            mma<T>(keyGrad[n + 1], ads, bq[1]);
          }
        }
      }

    // The gradients go out through the warp's own rows of the k and v tiles, once every thread
    // is past the tiles' loads (with no query tile, nothing else stood between).
    __syncthreads();
    storeAccumulators<T>(tiles.keys, warpRow, keyGrad, 1.0f, 1.0f, lane);
    storeAccumulators<T>(tiles.values, warpRow, valueGrad, 1.0f, 1.0f, lane);
    __syncthreads();
    storeTile<kThreads>(tensors.keyGrad + dims.keyRow(b, kvHead, key0, kD), tiles.keys, keyCount,
                        args.aligned16);
    storeTile<kThreads>(tensors.valueGrad + dims.keyRow(b, kvHead, key0, kD), tiles.values,
                        keyCount, args.aligned16);
  }
}

template <typename T, int kD>
__global__ void __launch_bounds__(kThreads) tensorCoreQueryGradient(AttentionBackwardArgs args) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const QueryPassTiles<kD> tiles(attentionShared);
  const DropoutMask dropout = args.dropout.mask();
  const GradTensors16 tensors(args);
  const int lane = threadIdx.x % 32, warpRow = threadIdx.x / 32 * 16;

  const int64_t queryTiles = (dims.queries + kOwnedQueries - 1) / kOwnedQueries;
  for (int64_t task = blockIdx.x; task < dims.batch * dims.heads * queryTiles; task += gridDim.x) {
    const int64_t bh = task / queryTiles, b = bh / dims.heads, h = bh % dims.heads;
    const int64_t kvHead = h / dims.group(), query0 = task % queryTiles * kOwnedQueries;
    const int queryCount = rowsLeft(kOwnedQueries, dims.queries - query0);
    // This lane's two queries, their logsumexp and D.
    const int64_t rows[2] = {query0 + warpRow + lane / 4, query0 + warpRow + lane / 4 + 8};
    float logsumexp[2], rowDots[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const bool present = rows[r] < dims.queries;
      logsumexp[r] = present ? args.logsumexp[dims.queryRow(b, h, rows[r], 1)] : kHiddenScore;
      rowDots[r] = present ? args.rowDots[dims.queryRow(b, h, rows[r], 1)] : 0.0f;
    }
    __syncthreads(); // the previous task's gradient is stored
    loadTile<kThreads>(tiles.queries, tensors.query + dims.queryRow(b, h, query0, kD), queryCount,
                       args.aligned16);
    loadTile<kThreads>(tiles.outputGrad, tensors.outputGrad + dims.queryRow(b, h, query0, kD),
                       queryCount, args.aligned16);

    float queryGrad[kD / 8][4] = {};
    const int64_t keyEnd = scores.visibleKeyEnd(query0 + queryCount);
    for (int64_t key0 = 0; key0 < keyEnd; key0 += kKeyStep) {
      const int keyCount = rowsLeft(kKeyStep, dims.keys - key0);
      __syncthreads(); // the previous key tile is consumed
      loadTile<kThreads>(tiles.keys, tensors.key + dims.keyRow(b, kvHead, key0, kD), keyCount,
                         args.aligned16);
      loadTile<kThreads>(tiles.values, tensors.value + dims.keyRow(b, kvHead, key0, kD), keyCount,
                         args.aligned16);
      __syncthreads();

      // S and dP of the warp's 16 queries by the tile's keys.
      float s[kKeyStep / 8][4] = {}, dp[kKeyStep / 8][4] = {};
#pragma unroll
      for (int k = 0; k < kD; k += 16) {
        uint32_t aq[4], ao[4];
        loadA(aq, tiles.queries, warpRow, k, lane);
        loadA(ao, tiles.outputGrad, warpRow, k, lane);
#pragma unroll
        for (int n = 0; n < kKeyStep / 8; ++n) {
          uint32_t bk[2], bv[2];
          loadBFromRows(bk, tiles.keys, n * 8, k, lane);
          loadBFromRows(bv, tiles.values, n * 8, k, lane);
          mma<T>(s[n], aq, bk);
          mma<T>(dp[n], ao, bv);
        }
      }
      // dp becomes dS.
#pragma unroll
      for (int n = 0; n < kKeyStep / 8; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int64_t queryIndex = rows[e / 2], keyIndex = key0 + n * 8 + accumulatorCol(lane, e);
          const float probability = probabilityFromLogsumexp(
              scores.scoreOrHidden(s[n][e], b, h, queryIndex, keyIndex), logsumexp[e / 2]);
          const float factor =
              probability == 0.0f ? 1.0f : dropoutFactor(dropout, dims, b, h, queryIndex, keyIndex);
          dp[n][e] = scoreGradient(probability, dp[n][e], factor, rowDots[e / 2], scores.scale);
        }
      }
      // dQ += dS k.
#pragma unroll
      for (int k = 0; k < kKeyStep / 16; ++k) {
        uint32_t ads[4];
        accumulatorsAsA<T>(ads, dp[2 * k], dp[2 * k + 1]);
#pragma unroll
        for (int n = 0; n < kD / 8; n += 2) {
          uint32_t bk[2][2];
          loadBFromColumns(bk, tiles.keys, k * 16, n * 8, lane);
          mma<T>(queryGrad[n], ads, bk[0]);
          mma<T>(queryGrad[n + 1], ads, bk[1]);
        }
      }
    }

    // dQ goes out through the warp's own rows of the q tile, once every thread is past the
    // tile's load (with no key tile, nothing else stood between).
    __syncthreads();
    storeAccumulators<T>(tiles.queries, warpRow, queryGrad, 1.0f, 1.0f, lane);
    __syncthreads();
    storeTile<kThreads>(tensors.queryGrad + dims.queryRow(b, h, query0, kD), tiles.queries,
                        queryCount, args.aligned16);
  }
}

template <typename T, int kD>
bool launch(KernelContext &context, const AttentionBackwardArgs &args) {
  const AttentionDims &dims = args.scores.dims;
  const int64_t keyTasks = dims.batch * dims.kvHeads * ((dims.keys + kOwnedKeys - 1) / kOwnedKeys);
  if (keyTasks > 0) {
    if (!allowSharedBytes(context, tensorCoreKeyGradients<T, kD>, KeyPassTiles<kD>::kBytes,
                          "flash_attention_grad"))
      return false;
    tensorCoreKeyGradients<T, kD>
        <<<blocksFor(keyTasks), kThreads, KeyPassTiles<kD>::kBytes, streamOf(context)>>>(args);
    if (!launched(context, "flash_attention_grad"))
      return false;
  }
  const int64_t queryTasks =
      dims.batch * dims.heads * ((dims.queries + kOwnedQueries - 1) / kOwnedQueries);
  if (queryTasks == 0)
    return true;
  if (!allowSharedBytes(context, tensorCoreQueryGradient<T, kD>, QueryPassTiles<kD>::kBytes,
                        "flash_attention_grad"))
    return false;
  tensorCoreQueryGradient<T, kD>
      <<<blocksFor(queryTasks), kThreads, QueryPassTiles<kD>::kBytes, streamOf(context)>>>(args);
  return launched(context, "flash_attention_grad");
}

} // namespace

bool launchTensorCoreBackward(KernelContext &context, DType dtype,
                              const AttentionBackwardArgs &args) {
  const bool wide = args.scores.dims.headDim == 128;
  if (dtype == DType::BF16)
    return wide ? launch<BFloat16, 128>(context, args) : launch<BFloat16, 64>(context, args);
  return wide ? launch<Half, 128>(context, args) : launch<Half, 64>(context, args);
}

} // namespace memc::kernels::cuda
