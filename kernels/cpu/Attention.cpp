//===- Attention.cpp - flash_attention --------------------------------===//
//
// FlashAttention's forward on the CPU: one task per (batch, head, block of up to kAttentionBlock
// queries), threaded over the tasks. A task walks the blocks of keys its queries see (causal:
// none above the diagonal) with an online softmax in f32: each block's scores rescale the
// running row maximum, row sum and output accumulator, so only a [block, block] tile of scores
// ever exists; dropout (a function of the element's index) drops the block's probabilities
// before their product with v. Tile products go through OpenBLAS (gemmSerial, one thread per
// task); f16/bf16 tiles are converted to f32 on load and rounded once at the store.
//
// Workspace: per slot (at most kMaxWorkspaceSlots) the query, key^T, value, score and
// accumulator tiles and two row vectors (AttentionWorkspace.h).
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/AttentionBlocks.h"
#include "kernels/cpu/CrossEntropyRows.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <cmath>

namespace memc::kernels {

MEMC_VECTOR_CLONES void exponentiateRow(float *row, int64_t n, float max) {
  for (int64_t c = 0; c < n; ++c)
    row[c] = vectormath::exp(row[c] - max);
}

namespace {

/// Sum of row[0, n) in 16 f32 lanes: a loop that vectorizes, as a running sum (one order of
/// additions) cannot.
MEMC_VECTOR_CLONES float sumOfRow(const float *row, int64_t n) {
  constexpr int64_t kLanes = 16;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += row[i + l];
  for (int64_t l = 0; i < n; ++i, ++l)
    lanes[l] += row[i];
  float sum = 0.0f;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

/// Folds one tile of scores into the running statistics: the scores become the block's
/// unnormalised probabilities exp(score - new max), and the accumulator rows are rescaled to
/// the new maximum.
void onlineSoftmaxStep(int64_t queryCount, int64_t keyCount, int64_t valueDim, float *scores,
                       float *rowMax, float *rowSum, float *accumulator) {
  const float none = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < queryCount; ++r) {
    float *row = scores + r * keyCount;
    float newMax = std::max(rowMax[r], maxOf(row, keyCount));
    if (newMax == none) { // no key seen yet: nothing to add
      std::fill(row, row + keyCount, 0.0f);
      continue;
    }
    exponentiateRow(row, keyCount, newMax);
    float sum = sumOfRow(row, keyCount);
    float rescale = vectormath::exp(rowMax[r] - newMax); // 0 for the first block seen
    rowSum[r] = rowSum[r] * rescale + sum;
    rowMax[r] = newMax;
    float *out = accumulator + r * valueDim;
    for (int64_t j = 0; j < valueDim; ++j)
      out[j] *= rescale;
  }
}

/// One task: queries [query0, +queryCount) of (b, h).
template <typename T>
void attendQueryBlock(const AttentionProblem &problem, int64_t task, const AttentionTiles &tiles,
                      const T *query, const T *key, const T *value, T *output, float *logsumexp) {
  const AttentionSizes &sizes = problem.sizes;
  const int64_t d = sizes.headDim, dv = sizes.valueDim;
  int64_t blocks = sizes.queryBlocks();
  int64_t bh = task / blocks, b = bh / sizes.heads, h = bh % sizes.heads;
  int64_t kvHead = h / problem.group();
  int64_t query0 = task % blocks * sizes.queryBlock;
  int64_t queryCount = std::min(sizes.queryBlock, sizes.queries - query0);

  loadTile(query + problem.queryRow(b, h, query0, d), queryCount, d, tiles.queries);
  std::fill(tiles.rowMax, tiles.rowMax + queryCount, -std::numeric_limits<float>::infinity());
  std::fill(tiles.rowSum, tiles.rowSum + queryCount, 0.0f);
  std::fill(tiles.accumulator, tiles.accumulator + queryCount * dv, 0.0f);
  int64_t keyEnd = problem.visibleKeyEnd(query0 + queryCount);
  for (int64_t key0 = 0; key0 < keyEnd; key0 += sizes.keyBlock) {
    // Whole key blocks (keys past keyEnd are hidden), cut as the backward cuts them, so that
    // its recomputed scores are these, bit for bit.
    int64_t keyCount = std::min(sizes.keyBlock, sizes.keys - key0);
    loadTileTransposed(key + problem.keyRow(b, kvHead, key0, d), keyCount, d, tiles.keysT);
    loadTile(value + problem.keyRow(b, kvHead, key0, dv), keyCount, dv, tiles.values);
    scoreTile(problem, b, h, query0, queryCount, key0, keyCount, tiles.queries, tiles.keysT,
              tiles.scores);
    onlineSoftmaxStep(queryCount, keyCount, dv, tiles.scores, tiles.rowMax, tiles.rowSum,
                      tiles.accumulator);
    // Dropout after the row sums: the output is (P * M / (1 - p)) V, normalised by the
    // undropped softmax's sum, whose logsumexp the backward reads.
    if (problem.dropout.active())
      dropTile(problem, b, h, query0, queryCount, key0, keyCount, tiles.scores);
    gemmSerial(queryCount, dv, keyCount, tiles.scores, keyCount, tiles.values, dv,
               tiles.accumulator, dv, {}, /*accumulate=*/true);
  }

  float *rowLogsumexp = logsumexp + problem.queryRow(b, h, query0, 1);
  for (int64_t r = 0; r < queryCount; ++r) {
    float sum = tiles.rowSum[r];
    // A row that saw no key (all hidden or masked to -inf) outputs zeros, as FlashAttention.
    float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int64_t j = 0; j < dv; ++j)
      tiles.accumulator[r * dv + j] *= inverse;
    rowLogsumexp[r] =
        sum > 0.0f ? tiles.rowMax[r] + std::log(sum) : -std::numeric_limits<float>::infinity();
  }
  storeTile(tiles.accumulator, queryCount, dv, output + problem.queryRow(b, h, query0, dv));
}

bool runFlashAttention(KernelContext &context, const KernelCall &call) {
  AttentionProblem problem(call, 0, 3);
  if (problem.sizes.empty())
    return true;
  WorkspaceCarver carver(call);
  AttentionScratch scratch = carveFlashAttention(call, carver);
  if (!carver.fits(context))
    return false;
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallelForSlots(0, problem.sizes.queryTasks(), problem.sizes.queryTaskGrain(),
                     [&](int64_t slot, int64_t begin, int64_t end) {
                       AttentionTiles tiles = attentionSlot(scratch, problem.sizes, false, slot);
                       for (int64_t task = begin; task < end; ++task)
                         attendQueryBlock(problem, task, tiles, call.inputs[0].as<T>(),
                                          call.inputs[1].as<T>(), call.inputs[2].as<T>(),
                                          call.outputs[0].as<T>(), call.outputs[1].as<float>());
                     });
  });
  return true;
}

} // namespace

void addAttentionKernels(KernelRuns &table) { table["flash_attention"] = &runFlashAttention; }

} // namespace memc::kernels
