//===- FlashAttentionCudaCore.cu - attention on CUDA cores, in f32 --------------------===//
//
// The attention kernels of every call the tensor cores do not take (f32, head dimensions other
// than 64 and 128, a value dimension of its own): FlashAttention-2's tiling with f32 tiles in
// shared memory, cut as the CPU kernels cut theirs.
//  - forward, one block per (batch, head, tile of queries): the key tiles the queries see
//    stream through shared memory; each row folds its tile of scores into its online softmax
//    (AttentionMath.h) and the output accumulator is rescaled and added the tile's P v.
//  - backward in two passes that write disjoint outputs, deterministic and without atomics:
//    per (batch, kv head, tile of keys), dK and dV over the group's query heads and the query
//    tiles that see the keys; then per (batch, head, tile of queries), dQ.
// The products are dot products of shared rows, each padded by one float so that the 32 rows a
// warp reads fall in 32 banks; the per-row work (the online softmax) is one thread a row.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/AttentionCall.h"
#include "kernels/cuda/FlashAttentionLaunch.cuh"

namespace memc::kernels::cuda {
namespace {

constexpr int kThreads = 128;

/// A tile of f32 in shared memory, rows padded by one float.
struct SharedTile {
  float *data;
  int stride;
  __device__ float &at(int row, int col) const { return data[row * stride + col]; }
  __device__ float *row(int r) const { return data + r * stride; }
};

/// Lays a block's tiles out in its shared memory; over a null base it only counts their bytes,
/// for the launch.
class SharedTiles {
public:
  __host__ __device__ explicit SharedTiles(float *base) : base(base) {}
  __host__ __device__ SharedTile tile(int rows, int cols) {
    return SharedTile{take(static_cast<int64_t>(rows) * (cols + 1)), cols + 1};
  }
  __host__ __device__ float *take(int64_t count) {
    float *piece = base ? base + used : nullptr;
    used += count;
    return piece;
  }
  __host__ __device__ size_t bytes() const { return static_cast<size_t>(used) * sizeof(float); }

private:
  float *base;
  int64_t used = 0;
};

/// The forward's tiles, for tiles of `rows` queries and keys.
struct ForwardTiles {
  SharedTile queries, keys, values, scores, output;
  float *rescale;
  SoftmaxRow *softmax;

  __host__ __device__ ForwardTiles(SharedTiles &shared, int rows, const AttentionDims &dims)
      : queries(shared.tile(rows, static_cast<int>(dims.headDim))),
        keys(shared.tile(rows, static_cast<int>(dims.headDim))),
        values(shared.tile(rows, static_cast<int>(dims.valueDim))), scores(shared.tile(rows, rows)),
        output(shared.tile(rows, static_cast<int>(dims.valueDim))), rescale(shared.take(rows)),
        softmax(reinterpret_cast<SoftmaxRow *>(shared.take(2 * static_cast<int64_t>(rows)))) {}
};

/// The backward's tiles: one query tile's and one key tile's operands and gradients, the
/// tile's dropped probabilities and score gradients, and the query rows' logsumexp and D.
struct BackwardTiles {
  SharedTile queries, outputGrad, keys, values, gradient, valueGrad, probabilities, scoresGrad;
  float *logsumexp, *rowDots;

  /// `gradient` is dK (keyPass) or dQ; valueGrad is dV (keyPass only).
  __host__ __device__ BackwardTiles(SharedTiles &shared, int rows, const AttentionDims &dims,
                                    bool keyPass)
      : queries(shared.tile(rows, static_cast<int>(dims.headDim))),
        outputGrad(shared.tile(rows, static_cast<int>(dims.valueDim))),
        keys(shared.tile(rows, static_cast<int>(dims.headDim))),
        values(shared.tile(rows, static_cast<int>(dims.valueDim))),
        gradient(shared.tile(rows, static_cast<int>(dims.headDim))),
        valueGrad(shared.tile(keyPass ? rows : 0, static_cast<int>(dims.valueDim))),
        probabilities(shared.tile(keyPass ? rows : 0, rows)), scoresGrad(shared.tile(rows, rows)),
        logsumexp(shared.take(rows)), rowDots(shared.take(rows)) {}
};

template <typename Tiles, typename... Shape> size_t sharedBytes(Shape... shape) {
  SharedTiles counter(nullptr);
  Tiles tiles(counter, shape...);
  return counter.bytes();
}

__device__ inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// rows x cols of `source` (row-major) into the tile as f32.
template <typename T>
__device__ void loadRows(const SharedTile &tile, const T *source, int rows, int cols) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads)
    tile.at(i / cols, i % cols) = loadFloat(source, i);
}

/// rows x cols of the tile, rounded to T, into `target` (row-major).
template <typename T>
__device__ void storeRows(T *target, const SharedTile &tile, int rows, int cols) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads)
    storeFloat(target, i, tile.at(i / cols, i % cols));
}

__device__ void zeroRows(const SharedTile &tile, int rows, int cols) {
  for (int i = threadIdx.x; i < rows * cols; i += kThreads)
    tile.at(i / cols, i % cols) = 0.0f;
}

/// The dot product of row `ra` of `a` and row `rb` of `b` over their first n columns.
__device__ inline float dotRows(const SharedTile &a, int ra, const SharedTile &b, int rb, int n) {
  const float *x = a.row(ra), *y = b.row(rb);
  float sum = 0.0f;
  for (int k = 0; k < n; ++k)
    sum += x[k] * y[k];
  return sum;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cudaCoreForward(AttentionForwardArgs args, int tileRows) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const int d = static_cast<int>(dims.headDim), dv = static_cast<int>(dims.valueDim);
  SharedTiles shared(reinterpret_cast<float *>(attentionShared));
  ForwardTiles tiles(shared, tileRows, dims);
  const DropoutMask dropout = args.dropout.mask();
  const T *query = static_cast<const T *>(args.query), *key = static_cast<const T *>(args.key),
          *value = static_cast<const T *>(args.value);
  T *output = static_cast<T *>(args.output);

  const int64_t queryTiles = ceilDiv(dims.queries, tileRows);
  for (int64_t task = blockIdx.x; task < dims.batch * dims.heads * queryTiles; task += gridDim.x) {
    const int64_t bh = task / queryTiles, b = bh / dims.heads, h = bh % dims.heads;
    const int64_t kvHead = h / dims.group(), query0 = task % queryTiles * tileRows;
    const int queryCount = rowsLeft(tileRows, dims.queries - query0);
    __syncthreads(); // the previous task is done with the tiles
    loadRows(tiles.queries, query + dims.queryRow(b, h, query0, d), queryCount, d);
    zeroRows(tiles.output, queryCount, dv);
    for (int r = threadIdx.x; r < queryCount; r += kThreads)
      tiles.softmax[r] = SoftmaxRow();

    const int64_t keyEnd = scores.visibleKeyEnd(query0 + queryCount);
    for (int64_t key0 = 0; key0 < keyEnd; key0 += tileRows) {
      // Whole key tiles, cut as the backward cuts them, so that its recomputed scores are
      // these; keys past keyEnd are hidden.
      const int keyCount = rowsLeft(tileRows, dims.keys - key0);
      __syncthreads(); // the previous key tile is consumed
      loadRows(tiles.keys, key + dims.keyRow(b, kvHead, key0, d), keyCount, d);
      loadRows(tiles.values, value + dims.keyRow(b, kvHead, key0, dv), keyCount, dv);
      __syncthreads();
      for (int i = threadIdx.x; i < queryCount * keyCount; i += kThreads) {
        int r = i / keyCount, c = i % keyCount;
        tiles.scores.at(r, c) =
            scores.score(dotRows(tiles.queries, r, tiles.keys, c, d), b, h, query0 + r, key0 + c);
      }
      __syncthreads();
      for (int r = threadIdx.x; r < queryCount; r += kThreads) {
        float *row = tiles.scores.row(r);
        tiles.rescale[r] = foldScores(tiles.softmax[r], row, keyCount);
        // Dropout after the row sums: the output is (P * M / (1 - p)) v, normalised by the
        // undropped softmax's sum, whose logsumexp the backward reads.
        if (dropout.active())
          for (int c = 0; c < keyCount; ++c)
            row[c] *= dropoutFactor(dropout, dims, b, h, query0 + r, key0 + c);
      }
      __syncthreads();
      for (int i = threadIdx.x; i < queryCount * dv; i += kThreads) {
        int r = i / dv, c = i % dv;
        const float *p = tiles.scores.row(r);
        float sum = tiles.output.at(r, c) * tiles.rescale[r];
        for (int k = 0; k < keyCount; ++k)
          sum += p[k] * tiles.values.at(k, c);
        tiles.output.at(r, c) = sum;
      }
    }
    __syncthreads();
    T *out = output + dims.queryRow(b, h, query0, dv);
    for (int i = threadIdx.x; i < queryCount * dv; i += kThreads)
      storeFloat(out, i, tiles.output.at(i / dv, i % dv) * tiles.softmax[i / dv].outputScale());
    for (int r = threadIdx.x; r < queryCount; r += kThreads)
      args.logsumexp[dims.queryRow(b, h, query0 + r, 1)] = tiles.softmax[r].logsumexp();
  }
}

/// The backward's operands, typed.
template <typename T> struct GradTensors {
  const T *outputGrad, *query, *key, *value;
  T *queryGrad, *keyGrad, *valueGrad;

  __device__ explicit GradTensors(const AttentionBackwardArgs &args)
      : outputGrad(static_cast<const T *>(args.outputGrad)),
        query(static_cast<const T *>(args.query)), key(static_cast<const T *>(args.key)),
        value(static_cast<const T *>(args.value)), queryGrad(static_cast<T *>(args.queryGrad)),
        keyGrad(static_cast<T *>(args.keyGrad)), valueGrad(static_cast<T *>(args.valueGrad)) {}
};

/// Loads queries [query0, +queryCount) of (b, h): their rows, dO, logsumexp and D.
template <typename T>
__device__ void loadQueryTile(const AttentionBackwardArgs &args, const GradTensors<T> &tensors,
                              const BackwardTiles &tiles, int64_t b, int64_t h, int64_t query0,
                              int queryCount) {
  const AttentionDims &dims = args.scores.dims;
  const int d = static_cast<int>(dims.headDim), dv = static_cast<int>(dims.valueDim);
  loadRows(tiles.queries, tensors.query + dims.queryRow(b, h, query0, d), queryCount, d);
  loadRows(tiles.outputGrad, tensors.outputGrad + dims.queryRow(b, h, query0, dv), queryCount, dv);
  for (int r = threadIdx.x; r < queryCount; r += kThreads) {
    tiles.logsumexp[r] = args.logsumexp[dims.queryRow(b, h, query0 + r, 1)];
    tiles.rowDots[r] = args.rowDots[dims.queryRow(b, h, query0 + r, 1)];
  }
}

/// Loads keys [key0, +keyCount) of (b, kvHead) and their values.
template <typename T>
__device__ void loadKeyTile(const AttentionDims &dims, const GradTensors<T> &tensors,
                            const BackwardTiles &tiles, int64_t b, int64_t kvHead, int64_t key0,
                            int keyCount) {
  const int d = static_cast<int>(dims.headDim), dv = static_cast<int>(dims.valueDim);
  loadRows(tiles.keys, tensors.key + dims.keyRow(b, kvHead, key0, d), keyCount, d);
  loadRows(tiles.values, tensors.value + dims.keyRow(b, kvHead, key0, dv), keyCount, dv);
}

/// dS of the loaded tiles and, when `dropped` is set, the dropped probabilities P * M / (1 - p)
/// that dV takes.
__device__ void scoreGradients(const AttentionBackwardArgs &args, const DropoutMask &dropout,
                               const BackwardTiles &tiles, int64_t b, int64_t h, int64_t query0,
                               int queryCount, int64_t key0, int keyCount, bool dropped) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const int d = static_cast<int>(dims.headDim), dv = static_cast<int>(dims.valueDim);
  for (int i = threadIdx.x; i < queryCount * keyCount; i += kThreads) {
    int r = i / keyCount, c = i % keyCount;
    float score =
        scores.score(dotRows(tiles.queries, r, tiles.keys, c, d), b, h, query0 + r, key0 + c);
    float probability = probabilityFromLogsumexp(score, tiles.logsumexp[r]);
    float factor = dropoutFactor(dropout, dims, b, h, query0 + r, key0 + c);
    tiles.scoresGrad.at(r, c) =
        scoreGradient(probability, dotRows(tiles.outputGrad, r, tiles.values, c, dv), factor,
                      tiles.rowDots[r], scores.scale);
    if (dropped)
      tiles.probabilities.at(r, c) = probability * factor;
  }
}

/// Pass 1, per (batch, kv head, tile of keys): dV = sum P^T dO and dK = sum dS^T q over the
/// query heads sharing the kv head and the query tiles that see the keys.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    cudaCoreKeyGradients(AttentionBackwardArgs args, int tileRows) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const int d = static_cast<int>(dims.headDim), dv = static_cast<int>(dims.valueDim);
  SharedTiles shared(reinterpret_cast<float *>(attentionShared));
  BackwardTiles tiles(shared, tileRows, dims, true);
  const DropoutMask dropout = args.dropout.mask();
  const GradTensors<T> tensors(args);

  const int64_t keyTiles = ceilDiv(dims.keys, tileRows);
  for (int64_t task = blockIdx.x; task < dims.batch * dims.kvHeads * keyTiles; task += gridDim.x) {
    const int64_t bk = task / keyTiles, b = bk / dims.kvHeads, kvHead = bk % dims.kvHeads;
    const int64_t key0 = task % keyTiles * tileRows;
    const int keyCount = rowsLeft(tileRows, dims.keys - key0);
    __syncthreads(); // the previous task is done with the tiles
    loadKeyTile(dims, tensors, tiles, b, kvHead, key0, keyCount);
    zeroRows(tiles.gradient, keyCount, d);
    zeroRows(tiles.valueGrad, keyCount, dv);
    const int64_t group = dims.group();
    for (int64_t h = kvHead * group; h < (kvHead + 1) * group; ++h)
      for (int64_t query0 = scores.firstQueryTileSeeing(key0, tileRows) * tileRows;
           query0 < dims.queries; query0 += tileRows) {
        const int queryCount = rowsLeft(tileRows, dims.queries - query0);
        __syncthreads(); // the previous query tile is consumed
        loadQueryTile(args, tensors, tiles, b, h, query0, queryCount);
        __syncthreads();
        scoreGradients(args, dropout, tiles, b, h, query0, queryCount, key0, keyCount, true);
        __syncthreads();
        for (int i = threadIdx.x; i < keyCount * dv; i += kThreads) {
          int c = i / dv, j = i % dv;
          float sum = tiles.valueGrad.at(c, j);
          for (int r = 0; r < queryCount; ++r)
            sum += tiles.probabilities.at(r, c) * tiles.outputGrad.at(r, j);
          tiles.valueGrad.at(c, j) = sum;
        }
        for (int i = threadIdx.x; i < keyCount * d; i += kThreads) {
          int c = i / d, j = i % d;
          float sum = tiles.gradient.at(c, j);
          for (int r = 0; r < queryCount; ++r)
            sum += tiles.scoresGrad.at(r, c) * tiles.queries.at(r, j);
          tiles.gradient.at(c, j) = sum;
        }
      }
    __syncthreads();
    storeRows(tensors.keyGrad + dims.keyRow(b, kvHead, key0, d), tiles.gradient, keyCount, d);
    storeRows(tensors.valueGrad + dims.keyRow(b, kvHead, key0, dv), tiles.valueGrad, keyCount, dv);
  }
}

/// Pass 2, per (batch, head, tile of queries): dQ = sum dS k over the keys the queries see.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    cudaCoreQueryGradient(AttentionBackwardArgs args, int tileRows) {
  const AttentionScores &scores = args.scores;
  const AttentionDims &dims = scores.dims;
  const int d = static_cast<int>(dims.headDim);
  SharedTiles shared(reinterpret_cast<float *>(attentionShared));
  BackwardTiles tiles(shared, tileRows, dims, false);
  const DropoutMask dropout = args.dropout.mask();
  const GradTensors<T> tensors(args);

  const int64_t queryTiles = ceilDiv(dims.queries, tileRows);
  for (int64_t task = blockIdx.x; task < dims.batch * dims.heads * queryTiles; task += gridDim.x) {
    const int64_t bh = task / queryTiles, b = bh / dims.heads, h = bh % dims.heads;
    const int64_t kvHead = h / dims.group(), query0 = task % queryTiles * tileRows;
    const int queryCount = rowsLeft(tileRows, dims.queries - query0);
    __syncthreads(); // the previous task is done with the tiles
    loadQueryTile(args, tensors, tiles, b, h, query0, queryCount);
    zeroRows(tiles.gradient, queryCount, d);
    const int64_t keyEnd = scores.visibleKeyEnd(query0 + queryCount);
    for (int64_t key0 = 0; key0 < keyEnd; key0 += tileRows) {
      const int keyCount = rowsLeft(tileRows, dims.keys - key0);
      __syncthreads(); // the previous key tile is consumed
      loadKeyTile(dims, tensors, tiles, b, kvHead, key0, keyCount);
      __syncthreads();
      scoreGradients(args, dropout, tiles, b, h, query0, queryCount, key0, keyCount, false);
      __syncthreads();
      for (int i = threadIdx.x; i < queryCount * d; i += kThreads) {
        int r = i / d, j = i % d;
        const float *ds = tiles.scoresGrad.row(r);
        float sum = tiles.gradient.at(r, j);
        for (int k = 0; k < keyCount; ++k)
          sum += ds[k] * tiles.keys.at(k, j);
        tiles.gradient.at(r, j) = sum;
      }
    }
    __syncthreads();
    storeRows(tensors.queryGrad + dims.queryRow(b, h, query0, d), tiles.gradient, queryCount, d);
  }
}

template <typename T> bool launchForward(KernelContext &context, const AttentionForwardArgs &args) {
  const AttentionDims &dims = args.scores.dims;
  const int rows = static_cast<int>(cudaCoreTileRows(dims));
  const int64_t tasks = dims.batch * dims.heads * ((dims.queries + rows - 1) / rows);
  if (tasks == 0)
    return true;
  const size_t bytes = sharedBytes<ForwardTiles>(rows, dims);
  if (!allowSharedBytes(context, cudaCoreForward<T>, bytes, "flash_attention"))
    return false;
  cudaCoreForward<T><<<blocksFor(tasks), kThreads, bytes, streamOf(context)>>>(args, rows);
  return launched(context, "flash_attention");
}

template <typename T>
bool launchBackward(KernelContext &context, const AttentionBackwardArgs &args) {
  const AttentionDims &dims = args.scores.dims;
  const int rows = static_cast<int>(cudaCoreTileRows(dims));
  const int64_t keyTasks = dims.batch * dims.kvHeads * ((dims.keys + rows - 1) / rows);
  if (keyTasks > 0) {
    const size_t bytes = sharedBytes<BackwardTiles>(rows, dims, true);
    if (!allowSharedBytes(context, cudaCoreKeyGradients<T>, bytes, "flash_attention_grad"))
      return false;
    cudaCoreKeyGradients<T>
        <<<blocksFor(keyTasks), kThreads, bytes, streamOf(context)>>>(args, rows);
    if (!launched(context, "flash_attention_grad"))
      return false;
  }
  const int64_t queryTasks = dims.batch * dims.heads * ((dims.queries + rows - 1) / rows);
  if (queryTasks == 0)
    return true;
  const size_t bytes = sharedBytes<BackwardTiles>(rows, dims, false);
  if (!allowSharedBytes(context, cudaCoreQueryGradient<T>, bytes, "flash_attention_grad"))
    return false;
  cudaCoreQueryGradient<T>
      <<<blocksFor(queryTasks), kThreads, bytes, streamOf(context)>>>(args, rows);
  return launched(context, "flash_attention_grad");
}

} // namespace

bool launchCudaCoreForward(KernelContext &context, DType dtype, const AttentionForwardArgs &args) {
  return visitFloat(
      dtype, [&](auto tag) { return launchForward<typename decltype(tag)::type>(context, args); });
}

bool launchCudaCoreBackward(KernelContext &context, DType dtype,
                            const AttentionBackwardArgs &args) {
  return visitFloat(
      dtype, [&](auto tag) { return launchBackward<typename decltype(tag)::type>(context, args); });
}

} // namespace memc::kernels::cuda
