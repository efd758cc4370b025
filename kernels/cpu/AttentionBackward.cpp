//===- AttentionBackward.cpp - flash_attention_grad -------------------===//
//
// FlashAttention-2's backward on the CPU. The probabilities of a (queries, keys) tile are
// recomputed as exp(scores - logsumexp) with the forward's own score code (AttentionBlocks.h),
// and D = rowsum(dO * O) replaces the softmax's row sums: dS = P * (dO V^T - D). Dropout's mask
// is drawn again from the seed, salt and index: dV takes the dropped P, and dO V^T is dropped.
//
// Tasks write disjoint outputs, so the sums keep one order whatever the thread count and no
// task waits on another. Where there are at least as many (batch, kv head) pairs as slots
// (AttentionSizes::onePassBackward), one pass, a task per pair: its key blocks in order, each
// with every query block of the group's heads that sees it, dV and dK of the key block summed
// over them and dQ over the key blocks (5 tile products per tile, as FlashAttention-2's, whose
// GPU kernel sums dQ with atomic adds instead). Otherwise two passes, with more, smaller tasks:
//   1. per (batch, kv head, block of keys): dV = sum P^T dO and dK = scale * sum dS^T Q over the
//      query heads sharing the kv head and the query blocks that see the keys;
//   2. per (batch, head, block of queries): dQ = scale * sum dS K over the keys it sees,
// recomputing the scores once more (7 tile products per tile). Both sum in the same order and
// give the same bits.
//
// Workspace: per slot (at most kMaxWorkspaceSlots) a few tiles of kAttentionBlock rows, and in
// one pass with 16-bit operands the pair's f32 dQ (AttentionWorkspace.h).
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/AttentionBlocks.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

namespace memc::kernels {

namespace {

/// The call's tensors, typed.
template <typename T> struct AttentionGradTensors {
  const T *outputGrad, *query, *key, *value, *output;
  const float *logsumexp;
  T *queryGrad, *keyGrad, *valueGrad;

  explicit AttentionGradTensors(const KernelCall &call)
      : outputGrad(call.inputs[0].as<T>()), query(call.inputs[1].as<T>()),
        key(call.inputs[2].as<T>()), value(call.inputs[3].as<T>()), output(call.inputs[4].as<T>()),
        logsumexp(call.inputs[5].as<float>()), queryGrad(call.outputs[0].as<T>()),
        keyGrad(call.outputs[1].as<T>()), valueGrad(call.outputs[2].as<T>()) {}
};

/// Loads one block of queries: the queries, dO, the logsumexp (rowMax) and D (rowSum).
template <typename T>
void loadQueryBlock(const AttentionProblem &problem, const AttentionGradTensors<T> &tensors,
                    int64_t b, int64_t h, int64_t query0, int64_t queryCount,
                    const AttentionTiles &tiles) {
  const int64_t d = problem.sizes.headDim, dv = problem.sizes.valueDim;
  loadTile(tensors.query + problem.queryRow(b, h, query0, d), queryCount, d, tiles.queries);
  loadTile(tensors.outputGrad + problem.queryRow(b, h, query0, dv), queryCount, dv,
           tiles.outputGrad);
  const float *logsumexp = tensors.logsumexp + problem.queryRow(b, h, query0, 1);
  const T *output = tensors.output + problem.queryRow(b, h, query0, dv);
  for (int64_t r = 0; r < queryCount; ++r) {
    tiles.rowMax[r] = logsumexp[r];
    double sum = 0.0;
    for (int64_t j = 0; j < dv; ++j)
      sum +=
          static_cast<double>(tiles.outputGrad[r * dv + j]) * Element<T>::load(output[r * dv + j]);
    tiles.rowSum[r] = static_cast<float>(sum);
  }
}

/// dS = P * (dP - D) * scale over a tile without dropout, dP in place; its own loop, compiled per
/// instruction set, so that it vectorizes.
MEMC_VECTOR_CLONES void scoresGradient(const float *probabilities, const float *rowSum,
                                       int64_t queryCount, int64_t keyCount, float scale,
                                       float *scoresGrad) {
  for (int64_t r = 0; r < queryCount; ++r) {
    const float *p = probabilities + r * keyCount;
    float *dp = scoresGrad + r * keyCount, d = rowSum[r];
    for (int64_t c = 0; c < keyCount; ++c)
      dp[c] = p[c] * (dp[c] - d) * scale;
  }
}

/// tiles.scores = P (dropped, as the forward multiplied it by v) and tiles.scoresGrad = dS
/// (with the scale) of one tile, from the loaded query block and the key tiles keysT and
/// valuesT. With dropout M / (1 - p): dP = (dO V^T) * M / (1 - p), and D = rowsum(dO * O) is
/// still rowsum(P * dP).
void scoresAndGradient(const AttentionProblem &problem, int64_t b, int64_t h, int64_t query0,
                       int64_t queryCount, int64_t key0, int64_t keyCount,
                       const AttentionTiles &tiles) {
  scoreTile(problem, b, h, query0, queryCount, key0, keyCount, tiles.queries, tiles.keysT,
            tiles.scores);
  probabilitiesFromScores(tiles.rowMax, queryCount, keyCount, tiles.scores);
  gemmSerial(queryCount, keyCount, problem.sizes.valueDim, tiles.outputGrad, problem.sizes.valueDim,
             tiles.valuesT, keyCount, tiles.scoresGrad, keyCount);
  if (!problem.dropout.active()) {
    scoresGradient(tiles.scores, tiles.rowSum, queryCount, keyCount, problem.scale,
                   tiles.scoresGrad);
    return;
  }
  for (int64_t r = 0; r < queryCount; ++r)
    for (int64_t c = 0; c < keyCount; ++c) {
      int64_t i = r * keyCount + c;
      float factor = problem.dropoutFactor(b, h, query0 + r, key0 + c);
      tiles.scoresGrad[i] =
          tiles.scores[i] * (tiles.scoresGrad[i] * factor - tiles.rowSum[r]) * problem.scale;
      tiles.scores[i] *= factor;
    }
}

/// Loads keys [key0, +keyCount) of (b, kvHead), as rows and transposed, and the values
/// transposed.
template <typename T>
void loadKeyBlock(const AttentionProblem &problem, const AttentionGradTensors<T> &tensors,
                  int64_t b, int64_t kvHead, int64_t key0, int64_t keyCount,
                  const AttentionTiles &tiles) {
  const int64_t d = problem.sizes.headDim, dv = problem.sizes.valueDim;
  const T *keys = tensors.key + problem.keyRow(b, kvHead, key0, d);
  loadTileTransposed(keys, keyCount, d, tiles.keysT);
  loadTile(keys, keyCount, d, tiles.keys);
  loadTileTransposed(tensors.value + problem.keyRow(b, kvHead, key0, dv), keyCount, dv,
                     tiles.valuesT);
}

/// dK and dV of keys [key0, +keyCount) of (b, kvHead), summed over the query heads sharing the
/// kv head and the query blocks that see the keys; with `queryGrad` (the pair's dQ rows,
/// [group * Tq, D] from its first head), also dQ += dS K into them.
template <typename T>
void keyBlockGradients(const AttentionProblem &problem, const AttentionGradTensors<T> &tensors,
                       int64_t b, int64_t kvHead, int64_t key0, const AttentionTiles &tiles,
                       float *queryGrad) {
  const AttentionSizes &sizes = problem.sizes;
  const int64_t d = sizes.headDim, dv = sizes.valueDim;
  int64_t keyCount = std::min(sizes.keyBlock, sizes.keys - key0);
  int64_t firstHead = kvHead * problem.group();
  loadKeyBlock(problem, tensors, b, kvHead, key0, keyCount, tiles);
  std::fill(tiles.accumulator, tiles.accumulator + keyCount * d, 0.0f);
  std::fill(tiles.valueGrad, tiles.valueGrad + keyCount * dv, 0.0f);
  for (int64_t h = firstHead; h < firstHead + problem.group(); ++h)
    for (int64_t query0 = problem.firstQueryBlockSeeing(key0) * sizes.queryBlock;
         query0 < sizes.queries; query0 += sizes.queryBlock) {
      int64_t queryCount = std::min(sizes.queryBlock, sizes.queries - query0);
      loadQueryBlock(problem, tensors, b, h, query0, queryCount, tiles);
      scoresAndGradient(problem, b, h, query0, queryCount, key0, keyCount, tiles);
      // dV += P^T dO and dK += dS^T Q, P and dS read transposed by sgemm.
      gemmSerial(keyCount, dv, queryCount, tiles.scores, keyCount, tiles.outputGrad, dv,
                 tiles.valueGrad, dv, {/*a=*/true, /*b=*/false}, /*accumulate=*/true);
      gemmSerial(keyCount, d, queryCount, tiles.scoresGrad, keyCount, tiles.queries, d,
                 tiles.accumulator, d, {/*a=*/true, /*b=*/false}, /*accumulate=*/true);
      if (queryGrad) // dQ += dS K
        gemmSerial(queryCount, d, keyCount, tiles.scoresGrad, keyCount, tiles.keys, d,
                   queryGrad + ((h - firstHead) * sizes.queries + query0) * d, d, {},
                   /*accumulate=*/true);
    }
  storeTile(tiles.accumulator, keyCount, d, tensors.keyGrad + problem.keyRow(b, kvHead, key0, d));
  storeTile(tiles.valueGrad, keyCount, dv, tensors.valueGrad + problem.keyRow(b, kvHead, key0, dv));
}

/// Pass 1, one task: dK and dV of one block of keys of one (batch, kv head).
template <typename T>
void keyBlockTask(const AttentionProblem &problem, const AttentionGradTensors<T> &tensors,
                  int64_t task, const AttentionTiles &tiles) {
  const AttentionSizes &sizes = problem.sizes;
  int64_t blocks = sizes.keyBlocks();
  int64_t bk = task / blocks, b = bk / sizes.kvHeads, kvHead = bk % sizes.kvHeads;
  keyBlockGradients(problem, tensors, b, kvHead, task % blocks * sizes.keyBlock, tiles, nullptr);
}

/// Pass 2, one task: dQ of queries [query0, +queryCount) of (b, h).
template <typename T>
void queryBlockGradient(const AttentionProblem &problem, const AttentionGradTensors<T> &tensors,
                        int64_t task, const AttentionTiles &tiles) {
  const AttentionSizes &sizes = problem.sizes;
  const int64_t d = sizes.headDim;
  int64_t blocks = sizes.queryBlocks();
  int64_t bh = task / blocks, b = bh / sizes.heads, h = bh % sizes.heads;
  int64_t query0 = task % blocks * sizes.queryBlock;
  int64_t queryCount = std::min(sizes.queryBlock, sizes.queries - query0);
  loadQueryBlock(problem, tensors, b, h, query0, queryCount, tiles);
  std::fill(tiles.accumulator, tiles.accumulator + queryCount * d, 0.0f);
  int64_t keyEnd = problem.visibleKeyEnd(query0 + queryCount);
  for (int64_t key0 = 0; key0 < keyEnd; key0 += sizes.keyBlock) {
    // Whole key blocks, as pass 1 and the forward cut them (AttentionBlocks.h).
    int64_t keyCount = std::min(sizes.keyBlock, sizes.keys - key0);
    loadKeyBlock(problem, tensors, b, h / problem.group(), key0, keyCount, tiles);
    scoresAndGradient(problem, b, h, query0, queryCount, key0, keyCount, tiles);
    // dQ += dS K
    gemmSerial(queryCount, d, keyCount, tiles.scoresGrad, keyCount, tiles.keys, d,
               tiles.accumulator, d, {}, /*accumulate=*/true);
  }
  storeTile(tiles.accumulator, queryCount, d,
            tensors.queryGrad + problem.queryRow(b, h, query0, d));
}

/// The one-pass backward's task: dQ, dK and dV of pair (b, kvHead). Its key blocks in order,
/// each against every block of queries that sees it of each head of the group, a tile's scores
/// formed once; dQ sums across the key blocks in place (f32) or in the slot's f32 rows, key
/// block after key block: the order the two-pass backward's query pass sums in, so both give
/// the same bits.
template <typename T>
void pairGradients(const AttentionProblem &problem, const AttentionGradTensors<T> &tensors,
                   int64_t pair, const AttentionTiles &tiles) {
  const AttentionSizes &sizes = problem.sizes;
  const int64_t d = sizes.headDim;
  int64_t b = pair / sizes.kvHeads, kvHead = pair % sizes.kvHeads;
  int64_t firstHead = kvHead * problem.group();
  // The group's heads are consecutive in [B, H, Tq, D]: one block of rows.
  T *queryGradRows = tensors.queryGrad + problem.queryRow(b, firstHead, 0, d);
  float *queryGrad = tiles.queryGrad;
  if constexpr (std::is_same_v<T, float>)
    queryGrad = queryGradRows;
  std::fill(queryGrad, queryGrad + sizes.pairQueryGrad(), 0.0f);
  for (int64_t key0 = 0; key0 < sizes.keys; key0 += sizes.keyBlock)
    keyBlockGradients(problem, tensors, b, kvHead, key0, tiles, queryGrad);
  if constexpr (!std::is_same_v<T, float>)
    storeTile(queryGrad, problem.group() * sizes.queries, d, queryGradRows);
}

bool runFlashAttentionGrad(KernelContext &context, const KernelCall &call) {
  AttentionProblem problem(call, 1, 6);
  const AttentionSizes &sizes = problem.sizes;
  WorkspaceCarver carver(call);
  AttentionScratch scratch = carveFlashAttentionGrad(call, carver);
  if (!carver.fits(context))
    return false;
  visitFloat(call.inputs[1].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AttentionGradTensors<T> tensors(call);
    if (sizes.empty()) { // no query: k and v carry no gradient
      std::fill(tensors.keyGrad, tensors.keyGrad + call.outputs[1].numElements(), T{});
      std::fill(tensors.valueGrad, tensors.valueGrad + call.outputs[2].numElements(), T{});
      return;
    }
    if (sizes.onePassBackward()) {
      parallelForSlots(0, sizes.pairs(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
        AttentionTiles tiles = attentionSlot(scratch, sizes, true, slot);
        for (int64_t pair = begin; pair < end; ++pair)
          pairGradients(problem, tensors, pair, tiles);
      });
      return;
    }
    parallelForSlots(0, sizes.keyTasks(), sizes.keyTaskGrain(),
                     [&](int64_t slot, int64_t begin, int64_t end) {
                       AttentionTiles tiles = attentionSlot(scratch, sizes, true, slot);
                       for (int64_t task = begin; task < end; ++task)
                         keyBlockTask(problem, tensors, task, tiles);
                     });
    parallelForSlots(0, sizes.queryTasks(), sizes.queryTaskGrain(),
                     [&](int64_t slot, int64_t begin, int64_t end) {
                       AttentionTiles tiles = attentionSlot(scratch, sizes, true, slot);
                       for (int64_t task = begin; task < end; ++task)
                         queryBlockGradient(problem, tensors, task, tiles);
                     });
  });
  return true;
}

} // namespace

void addAttentionBackwardKernels(KernelRuns &table) {
  table["flash_attention_grad"] = &runFlashAttentionGrad;
}

} // namespace memc::kernels
