//===- LinearCrossEntropy.cpp - linear_cross_entropy and its gradient -----===//
//
// cross_entropy(hidden @ op(weight) [+ bias], labels) without the logits, as Cut Cross-Entropy
// computes it: tiles of kLinearCrossEntropyChunk rows by kLinearCrossEntropyChunk classes
// (LinearCrossEntropyWorkspace.h), each an f32 product through OpenBLAS on one thread per task.
//   forward:  per block of rows (one task each), over the class chunks: the tile of logits, an
//             online logsumexp in f64 and the label's logit; the loss is the mean over counted
//             rows, summed in f64 in row order, as cross_entropy's.
//   backward: the tile again, turned into dlogits = scale * (exp(logit - logsumexp) - onehot).
//             f32 heads with enough class chunks (onePassBackward()) take one pass: per block
//             of rows, in order, its class chunks shared out over the slots; each chunk's
//             dlogits adds to the chunk's dW += dlogits^T @ H (and the bias's column sums) in
//             place, and to the slot's partial dH += dlogits @ op(W)^T; the block's dH is the
//             partials summed in slot order. Others take two: per block of rows, dH over the
//             chunks; per chunk of classes, dW over the blocks (a 16-bit dW sums in f32
//             scratch, a chunk at a time, which one pass would need for the whole weight),
//             forming the logits twice. Either way every sum runs in an order fixed by the
//             shapes, so results do not depend on the threads.
// Forward and backward cut rows and classes the same way and widen the same blocks, so the
// recomputed logits are the forward's bit for bit. bf16 operands multiply on oneDNN where it
// has optimized products for the tiles (AMX or AVX512-BF16, OneDnnGemm.h), the backward's logits
// gradient split into two bf16 parts (splitToBFloat16), each a product; otherwise f16/bf16
// operands are widened a block (and a chunk) at a time. Their gradients accumulate in f32
// before one rounding.
//
//===----------------------------------------------------------------------===//
#include "kernels/ScalarOperand.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/CrossEntropyRows.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/LinearCrossEntropyWorkspace.h"
#include "kernels/cpu/OneDnnGemm.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memc::kernels {
namespace {

/// A row-major f32 matrix with its leading dimension.
struct FloatMatrix {
  const float *data;
  int64_t ld;
};

/// rows x cols of `source` (leading dimension `ld`) as f32: the tensor itself, or widened into
/// `scratch` (leading dimension cols).
template <typename T>
FloatMatrix asFloat(const T *source, int64_t rows, int64_t cols, int64_t ld, float *scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return {source, ld};
  } else {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        scratch[r * cols + c] = Element<T>::load(source[r * ld + c]);
    return {scratch, cols};
  }
}

/// One block of rows, one chunk of classes, and what a task needs to form their logits.
template <typename T> struct HeadTiles {
  const LinearCrossEntropySizes &sizes;
  const T *hidden, *weight, *bias; // bias null when absent

  int64_t blockRows(int64_t block) const {
    return std::min(sizes.rowBlock, sizes.rows - block * sizes.rowBlock);
  }
  int64_t chunkClasses(int64_t chunk) const {
    return std::min(sizes.classChunk, sizes.classes - chunk * sizes.classChunk);
  }
  /// The block's rows and the chunk's weights as they are stored (the products on oneDNN read
  /// them so).
  const uint16_t *storedBlock(int64_t block) const {
    return reinterpret_cast<const uint16_t *>(hidden + block * sizes.rowBlock * sizes.depth);
  }
  /// Where chunk `chunk` starts in a tensor of the weight's layout ([V, D] with
  /// transpose_weight, else [D, V]: the weight and its gradient), and that layout's leading
  /// dimension.
  int64_t chunkOffset(int64_t chunk) const {
    int64_t first = chunk * sizes.classChunk;
    return sizes.transposeWeight ? first * sizes.depth : first;
  }
  int64_t weightLd() const { return sizes.transposeWeight ? sizes.depth : sizes.classes; }
  /// The chunk as the weight stores it: [classes, D] with transpose_weight, else [D, classes].
  const uint16_t *storedChunk(int64_t chunk) const {
    return reinterpret_cast<const uint16_t *>(weight + chunkOffset(chunk));
  }
  /// The block as f32 (nothing on oneDNN, which reads it as stored).
  FloatMatrix hiddenBlock(int64_t block, float *scratch) const {
    if (sizes.oneDnn)
      return {nullptr, 0};
    return asFloat(hidden + block * sizes.rowBlock * sizes.depth, blockRows(block), sizes.depth,
                   sizes.depth, scratch);
  }
  /// The chunk as f32, in the weight's layout (nothing on oneDNN).
  FloatMatrix weightChunk(int64_t chunk, float *scratch) const {
    if (sizes.oneDnn)
      return {nullptr, 0};
    int64_t first = chunk * sizes.classChunk, count = chunkClasses(chunk);
    if (sizes.transposeWeight)
      return asFloat(weight + first * sizes.depth, count, sizes.depth, sizes.depth, scratch);
    return asFloat(weight + first, sizes.depth, count, sizes.classes, scratch);
  }
  /// tile[rows, classes] = hidden block @ op(weight chunk) (+ the chunk's bias), leading
  /// dimension `classes`: on oneDNN from the stored operands with the slot's `scratchpad`,
  /// else from their f32 forms.
  void logits(int64_t blockIndex, FloatMatrix block, int64_t rows, FloatMatrix chunk,
              int64_t chunkIndex, float *tile, uint8_t *scratchpad) const {
    int64_t classes = chunkClasses(chunkIndex);
    if (sizes.oneDnn)
      bf16GemmSerial(sizes.logitsProduct(rows, classes), storedBlock(blockIndex),
                     storedChunk(chunkIndex), tile, scratchpad);
    else
      gemmSerial(rows, classes, sizes.depth, block.data, block.ld, chunk.data, chunk.ld, tile,
                 classes, {false, sizes.transposeWeight});
    if (!bias)
      return;
    const T *chunkBias = bias + chunkIndex * sizes.classChunk;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < classes; ++c)
        tile[r * classes + c] += Element<T>::load(chunkBias[c]);
  }
  /// sum[rows, D] (+)= dlogits[rows, classes] @ op(chunk)^T in f32 (sgemm; leading dimension D).
  void addHiddenGrad(const float *dlogits, int64_t rows, int64_t classes, FloatMatrix chunk,
                     float *sum, bool accumulate) const {
    gemmSerial(rows, sizes.depth, classes, dlogits, classes, chunk.data, chunk.ld, sum, sizes.depth,
               {false, !sizes.transposeWeight}, accumulate);
  }
  /// The chunk's weight gradient in the weight's layout (+)= in f32, leading dimension `ld`:
  /// [classes, D] += dlogits^T @ H with transpose_weight, else [D, classes] += H^T @ dlogits.
  void addWeightGrad(const float *dlogits, int64_t rows, int64_t classes, FloatMatrix block,
                     float *sum, int64_t ld, bool accumulate) const {
    if (sizes.transposeWeight)
      gemmSerial(classes, sizes.depth, rows, dlogits, classes, block.data, block.ld, sum, ld,
                 {true, false}, accumulate);
    else
      gemmSerial(sizes.depth, classes, rows, block.data, block.ld, dlogits, classes, sum, ld,
                 {true, false}, accumulate);
  }
};

/// sums[c] += the column sums of a rows x classes tile (the bias's gradient), row by row.
void addColumnSums(const float *tile, int64_t rows, int64_t classes, float *sums) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < classes; ++c)
      sums[c] += tile[r * classes + c];
}

/// The tile of logits of rows [first, first + rows) and classes [begin, begin + classes) turned
/// into their gradient; ignored rows give zeros.
void logitsGradTile(float *tile, int64_t rows, int64_t classes, int64_t first, int64_t begin,
                    const int64_t *targets, const float *logsumexp, float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = tile + r * classes;
    int64_t target = targets[first + r];
    if (target < 0)
      std::fill(row, row + classes, 0.0f);
    else
      logitsGradRow(row, classes, logsumexp[first + r], scale, target - begin);
  }
}

/// values[i] as the sum of two bf16 numbers, high[i] + low[i] (low = the rounding error of
/// high, itself rounded): 16 of f32's 24 significant bits, so the products on oneDNN multiply
/// the logits gradient nearly as precisely as f32 sgemm does, instead of rounding it to bf16
/// as autocast's backward does.
MEMC_VECTOR_CLONES void splitToBFloat16(const float *values, int64_t count, uint16_t *high,
                                        uint16_t *low) {
  for (int64_t i = 0; i < count; ++i) {
    high[i] = floatToBFloat16(values[i]);
    low[i] = floatToBFloat16(values[i] - bfloat16ToFloat(high[i]));
  }
}

/// The output itself as the f32 accumulator of its gradient, where it is f32 (null otherwise:
/// 16-bit gradients accumulate in scratch).
template <typename T> float *accumulateInPlace(T *out) {
  if constexpr (std::is_same_v<T, float>)
    return out;
  else
    return nullptr;
}

/// Stores an f32 accumulator of rows x cols (leading dimension `from`) into `out` (leading
/// dimension `to`), rounding once.
template <typename T>
void storeRows(const float *values, int64_t from, T *out, int64_t to, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out[r * to + c] = Element<T>::store(values[r * from + c]);
}

/// Carves the call's scratch and reads its labels (inputs[labelsIndex]) into it; false, with the
/// context's error, when the workspace is short or a label is outside the classes.
bool prepareCall(KernelContext &context, const KernelCall &call,
                 const LinearCrossEntropySizes &sizes, bool backward, size_t labelsIndex,
                 LinearCrossEntropyScratch &scratch, int64_t &counted) {
  WorkspaceCarver carver(call);
  scratch = carveLinearCrossEntropyScratch(sizes, backward, carver);
  if (!carver.fits(context))
    return false;
  std::string error;
  if (!readLabels(call.inputs[labelsIndex], sizes.classes,
                  attributesOf(call).intOr("ignore_index", -100), scratch.targets, counted, error))
    return context.fail(error);
  return true;
}

bool runLinearCrossEntropy(KernelContext &context, const KernelCall &call) {
  LinearCrossEntropySizes sizes(call, 0, 3);
  LinearCrossEntropyScratch scratch;
  int64_t counted;
  if (!prepareCall(context, call, sizes, false, 2, scratch, counted))
    return false;
  float *logsumexp = call.outputs[1].as<float>();
  double *losses = scratch.losses; // the label's logit until the row's logsumexp is known
  visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    HeadTiles<T> head{sizes, call.inputs[0].as<T>(), call.inputs[1].as<T>(),
                      sizes.bias ? call.inputs[3].as<T>() : nullptr};
    parallelForSlots(0, sizes.rowBlocks(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
      float *tile = scratch.tiles + slot * sizes.tile();
      uint8_t *scratchpad = scratch.scratchpads + slot * sizes.oneDnnScratchpad;
      float *rowMax = scratch.rowMax + slot * sizes.rowBlock;
      double *rowSum = scratch.rowSum + slot * sizes.rowBlock;
      for (int64_t block = begin; block < end; ++block) {
        int64_t rows = head.blockRows(block), first = block * sizes.rowBlock;
        std::fill(rowMax, rowMax + rows, -std::numeric_limits<float>::infinity());
        std::fill(rowSum, rowSum + rows, 0.0);
        FloatMatrix hidden =
            head.hiddenBlock(block, scratch.hiddenRows + slot * sizes.rowBlock * sizes.depth);
        for (int64_t chunk = 0; chunk < sizes.classChunks(); ++chunk) {
          int64_t classes = head.chunkClasses(chunk), firstClass = chunk * sizes.classChunk;
          FloatMatrix weight = head.weightChunk(
              chunk, scratch.weightRows + slot * sizes.classChunk * sizes.depth);
          head.logits(block, hidden, rows, weight, chunk, tile, scratchpad);
          for (int64_t r = 0; r < rows; ++r) {
            const float *row = tile + r * classes;
            float max = std::max(rowMax[r], maxOf(row, classes));
            // A running sum taken against a smaller maximum is rescaled to the new one; none
            // is there before the first finite logit.
            if (max > rowMax[r] && rowSum[r] > 0)
              rowSum[r] *= std::exp(static_cast<double>(rowMax[r]) - max);
            rowMax[r] = max;
            rowSum[r] += sumExp(row, nullptr, classes, max);
            int64_t target = scratch.targets[first + r] - firstClass;
            if (target >= 0 && target < classes)
              losses[first + r] = row[target];
          }
        }
        for (int64_t r = 0; r < rows; ++r) {
          double lse = std::log(rowSum[r]) + rowMax[r];
          logsumexp[first + r] = static_cast<float>(lse);
          losses[first + r] = scratch.targets[first + r] < 0 ? 0.0 : lse - losses[first + r];
        }
      }
    });
  });
  double total = 0.0;
  for (int64_t r = 0; r < sizes.rows; ++r)
    total += losses[r];
  *call.outputs[0].as<float>() = counted == 0 ? 0.0f : static_cast<float>(total / counted);
  return true;
}

/// The one-pass backward of an f32 head (onePassBackward()): the logits formed once.
void onePassGrad(const HeadTiles<float> &head, const LinearCrossEntropyScratch &scratch,
                 const float *logsumexp, float scale, float *hiddenGrad, float *weightGrad,
                 float *biasGrad) {
  const LinearCrossEntropySizes &sizes = head.sizes;
  int64_t depth = sizes.depth, chunks = sizes.classChunks();
  int64_t usedSlots = slotsWithWork(0, chunks, 1);
  for (int64_t block = 0; block < sizes.rowBlocks(); ++block) {
    int64_t rows = head.blockRows(block), first = block * sizes.rowBlock;
    FloatMatrix hidden = head.hiddenBlock(block, nullptr);
    parallelForSlots(0, chunks, 1, [&](int64_t slot, int64_t begin, int64_t end) {
      float *tile = scratch.tiles + slot * sizes.tile();
      float *partial = scratch.hiddenPartials + slot * sizes.rowBlock * depth;
      for (int64_t chunk = begin; chunk < end; ++chunk) {
        int64_t classes = head.chunkClasses(chunk), firstClass = chunk * sizes.classChunk;
        FloatMatrix weight = head.weightChunk(chunk, nullptr);
        head.logits(block, hidden, rows, weight, chunk, tile, nullptr);
        logitsGradTile(tile, rows, classes, first, firstClass, scratch.targets, logsumexp, scale);
        // The slot's partial dH, its first chunk writing it; the chunk's dW in place, the first
        // block writing it.
        head.addHiddenGrad(tile, rows, classes, weight, partial, chunk > begin);
        head.addWeightGrad(tile, rows, classes, hidden, weightGrad + head.chunkOffset(chunk),
                           head.weightLd(), block > 0);
        if (!biasGrad)
          continue;
        if (block == 0)
          std::fill(biasGrad + firstClass, biasGrad + firstClass + classes, 0.0f);
        addColumnSums(tile, rows, classes, biasGrad + firstClass);
      }
    });
    float *blockGrad = hiddenGrad + first * depth;
    parallelFor(0, rows * depth, 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        float sum = scratch.hiddenPartials[i];
        for (int64_t slot = 1; slot < usedSlots; ++slot)
          sum += scratch.hiddenPartials[slot * sizes.rowBlock * depth + i];
        blockGrad[i] = sum;
      }
    });
  }
}

bool runLinearCrossEntropyGrad(KernelContext &context, const KernelCall &call) {
  LinearCrossEntropySizes sizes(call, 1, 5);
  LinearCrossEntropyScratch scratch;
  int64_t counted;
  if (!prepareCall(context, call, sizes, true, 3, scratch, counted))
    return false;
  float scale = counted == 0
                    ? 0.0f
                    : ScalarOperand<float>(call.inputs[0]).get() / static_cast<float>(counted);
  const float *logsumexp = call.inputs[4].as<float>();
  int64_t depth = sizes.depth, gradientRows = std::max(sizes.rowBlock, sizes.classChunk);
  visitFloat(call.inputs[1].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    HeadTiles<T> head{sizes, call.inputs[1].as<T>(), call.inputs[2].as<T>(),
                      sizes.bias ? call.inputs[5].as<T>() : nullptr};
    T *hiddenGrad = call.outputs[0].as<T>(), *weightGrad = call.outputs[1].as<T>();
    T *biasGrad = sizes.bias ? call.outputs[2].as<T>() : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      if (sizes.onePassBackward())
        return onePassGrad(head, scratch, logsumexp, scale, hiddenGrad, weightGrad, biasGrad);
    }
    // A slot's scratch (oneDNN's pieces or the widened operands are null when unused).
    struct Slot {
      float *tile, *hiddenRows, *weightRows, *gradient;
      uint16_t *gradTile;
      uint8_t *scratchpad;
    };
    auto slotScratch = [&](int64_t slot) {
      return Slot{scratch.tiles + slot * sizes.tile(),
                  scratch.hiddenRows + slot * sizes.rowBlock * depth,
                  scratch.weightRows + slot * sizes.classChunk * depth,
                  scratch.gradients + slot * gradientRows * depth,
                  scratch.gradTiles + slot * 2 * sizes.tile(),
                  scratch.scratchpads + slot * sizes.oneDnnScratchpad};
    };
    // Pass 1: each block of rows sums its hidden gradient over the class chunks.
    parallelForSlots(0, sizes.rowBlocks(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
      Slot mine = slotScratch(slot);
      float *tile = mine.tile;
      for (int64_t block = begin; block < end; ++block) {
        int64_t rows = head.blockRows(block), first = block * sizes.rowBlock;
        FloatMatrix hidden = head.hiddenBlock(block, mine.hiddenRows);
        float *sum = sizes.widen ? mine.gradient : accumulateInPlace(hiddenGrad + first * depth);
        std::fill(sum, sum + rows * depth, 0.0f);
        for (int64_t chunk = 0; chunk < sizes.classChunks(); ++chunk) {
          int64_t classes = head.chunkClasses(chunk);
          FloatMatrix weight = head.weightChunk(chunk, mine.weightRows);
          head.logits(block, hidden, rows, weight, chunk, tile, mine.scratchpad);
          logitsGradTile(tile, rows, classes, first, chunk * sizes.classChunk, scratch.targets,
                         logsumexp, scale);
          if (sizes.oneDnn) {
            splitToBFloat16(tile, rows * classes, mine.gradTile, mine.gradTile + sizes.tile());
            for (const uint16_t *part : {mine.gradTile, mine.gradTile + sizes.tile()})
              bf16GemmSerial(sizes.hiddenGradProduct(rows, classes), part, head.storedChunk(chunk),
                             sum, mine.scratchpad);
          } else {
            head.addHiddenGrad(tile, rows, classes, weight, sum, true);
          }
        }
        if (sizes.widen)
          storeRows(sum, depth, hiddenGrad + first * depth, depth, rows, depth);
      }
    });
    // Pass 2: each chunk of classes sums its weight gradient over the row blocks, in the
    // weight's layout: [classes, D] with transpose_weight, else [D, classes].
    parallelForSlots(0, sizes.classChunks(), 1, [&](int64_t slot, int64_t begin, int64_t end) {
      Slot mine = slotScratch(slot);
      float *tile = mine.tile;
      for (int64_t chunk = begin; chunk < end; ++chunk) {
        int64_t classes = head.chunkClasses(chunk), firstClass = chunk * sizes.classChunk;
        FloatMatrix weight = head.weightChunk(chunk, mine.weightRows);
        int64_t sumRows = sizes.transposeWeight ? classes : depth;
        int64_t sumCols = sizes.transposeWeight ? depth : classes;
        T *out = weightGrad + head.chunkOffset(chunk);
        int64_t outLd = head.weightLd();
        float *sum = sizes.widen ? mine.gradient : accumulateInPlace(out);
        int64_t sumLd = sizes.widen ? sumCols : outLd;
        for (int64_t r = 0; r < sumRows; ++r)
          std::fill(sum + r * sumLd, sum + r * sumLd + sumCols, 0.0f);
        float *biasSum = biasGrad ? scratch.biasSums + slot * sizes.classChunk : nullptr;
        if (biasSum)
          std::fill(biasSum, biasSum + classes, 0.0f);
        for (int64_t block = 0; block < sizes.rowBlocks(); ++block) {
          int64_t rows = head.blockRows(block), first = block * sizes.rowBlock;
          FloatMatrix hidden = head.hiddenBlock(block, mine.hiddenRows);
          head.logits(block, hidden, rows, weight, chunk, tile, mine.scratchpad);
          logitsGradTile(tile, rows, classes, first, firstClass, scratch.targets, logsumexp,
                         scale);
          if (biasSum)
            addColumnSums(tile, rows, classes, biasSum);
          if (sizes.oneDnn) {
            splitToBFloat16(tile, rows * classes, mine.gradTile, mine.gradTile + sizes.tile());
            for (const uint16_t *part : {mine.gradTile, mine.gradTile + sizes.tile()}) {
              if (sizes.transposeWeight)
                bf16GemmSerial(sizes.weightGradProduct(rows, classes), part,
                               head.storedBlock(block), sum, mine.scratchpad);
              else
                bf16GemmSerial(sizes.weightGradProduct(rows, classes), head.storedBlock(block),
                               part, sum, mine.scratchpad);
            }
          } else {
            head.addWeightGrad(tile, rows, classes, hidden, sum, sumLd, true);
          }
        }
        if (sizes.widen)
          storeRows(sum, sumLd, out, outLd, sumRows, sumCols);
        if (biasSum)
          storeRows(biasSum, classes, biasGrad + firstClass, classes, 1, classes);
      }
    });
  });
  return true;
}

} // namespace

void addLinearCrossEntropyKernels(KernelRuns &table) {
  table["linear_cross_entropy"] = &runLinearCrossEntropy;
  table["linear_cross_entropy_grad"] = &runLinearCrossEntropyGrad;
}

} // namespace memc::kernels
