//===- ConvolutionBackward.cpp - conv_grad_input and conv_grad_weight -----===//
//
// Both are the forward's im2col product run backwards, per image and group (g indexes groups,
// R = C/group * kernel taps, Mg = M/group):
//  - conv_grad_input: col[R, positions] = W_g^T[R, Mg] * dY_g[Mg, positions], then col2im adds
//    every column element back onto the input element it was read from. A 1x1 convolution with
//    unit strides and no padding is one product straight into the input gradient.
//  - conv_grad_weight: dW_g^T[R, Mg] = sum over images and positions of col * dY_g^T. The sum
//    runs over blocks of output rows that may span images (small images make long products);
//    each block multiplies its columns by a packed dY^T and adds into an f32 dW^T.
// Blocks are tiles of a fixed number of output positions (columnTileRows), never sized by the
// thread count, so sums always run in the same order and the workspace is a small constant.
// Threads split the products and the column loops, or, when there are many small (image, group)
// tasks (depthwise convolutions, small images), the tasks themselves. f16/bf16 tensors compute
// in f32 (FloatCompute.h).
//
// Workspace: one set of block scratch (columns; packed dY^T and the f32
// dW^T sums for conv_grad_weight) per task slot, and the widened operands for f16/bf16. Tasks
// spread over threads use at most kMaxWorkspaceSlots slots (ThreadPool.h), so the workspace does
// not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/ConvolutionBackwardWorkspace.h"
#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/ConvolutionTasks.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/OneDnnConvolutionOnPool.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>

namespace memc::kernels {

namespace {

void convGradInputFloat(const ConvGeometry &g, const GradInputScratch &scratch, const float *dy,
                        const float *w, float *dx) {
  int64_t rows = g.columnRows, mg = g.groupOutChannels;
  // W_g^T is W_g [Mg, R] read transposed by sgemm, never copied.
  GemmTransposes weightTransposed{true, false};
  bool pointwise = g.isPointwise();
  int64_t lastOut = g.outSpatial.back(), outerRows = g.outputRows();
  int64_t blockRows = columnBlockRows(g);
  runConvolutionTasks(
      g.batch * g.group, taskSlots(g, g.batch * g.group), [&](int64_t task, int64_t slot) {
        int64_t n = task / g.group, group = task % g.group;
        const float *weights = w + group * mg * rows;
        const float *grad = dy + (n * g.outChannels + group * mg) * g.outSize;
        float *image = dx + (n * g.channels + group * g.groupChannels) * g.inSize;
        if (pointwise) {
          gemmParallel(g.groupChannels, g.outSize, mg, weights, rows, grad, g.outSize, image,
                       g.inSize, weightTransposed);
          return;
        }
        std::fill(image, image + g.groupChannels * g.inSize, 0.0f);
        float *columns = scratch.columns + slot * scratch.slotStride;
        for (int64_t first = 0; first < outerRows; first += blockRows) {
          int64_t count = std::min(blockRows, outerRows - first), width = count * lastOut;
          gemmParallel(rows, width, mg, weights, rows, grad + first * lastOut, g.outSize, columns,
                       width, weightTransposed);
          parallelFor(0, g.groupChannels,
                      std::max<int64_t>(1, kElementwiseGrain / (g.taps * width)),
                      [&](int64_t begin, int64_t end) {
                        addColumns(g, columns, width, first, count, begin, end, image);
                      });
        }
      });
}

/// weights[m, r] = sum[r, m]: dW_g from the f32 sum of dW_g^T.
void transposeInto(const float *sum, int64_t rows, int64_t mg, float *weights) {
  for (int64_t m = 0; m < mg; ++m)
    for (int64_t r = 0; r < rows; ++r)
      weights[m * rows + r] = sum[r * mg + m];
}

void convGradWeightFloat(const ConvGeometry &g, const GradWeightScratch &scratch, const float *dy,
                         const float *x, float *dw) {
  int64_t rows = g.columnRows, mg = g.groupOutChannels;
  int64_t lastOut = g.outSpatial.back(), outerRows = g.outputRows();
  // Output rows of all images, in order: the products' reduction dimension.
  int64_t totalRows = g.batch * outerRows;
  int64_t blockRows = gradWeightBlockRows(g);
  // Tasks: (group, piece of the blocks); a piece's blocks are consecutive.
  int64_t pieces = gradWeightPieces(g), blocksPerPiece = gradWeightBlocksPerPiece(g);
  runConvolutionTasks(g.group * pieces, gradWeightSlots(g), [&](int64_t task, int64_t slot) {
    int64_t group = task / pieces, piece = task % pieces;
    float *columns = scratch.columns + slot * scratch.columnStride;
    float *packed = scratch.packed + slot * scratch.packedStride;
    float *sum = scratch.sum + (pieces > 1 ? piece : slot) * scratch.sumStride;
    float *product = scratch.product + slot * scratch.sumStride;
    std::fill(sum, sum + rows * mg, 0.0f);
    int64_t firstBlock = piece * blocksPerPiece * blockRows;
    int64_t endBlock = std::min(totalRows, (piece + 1) * blocksPerPiece * blockRows);
    for (int64_t block = firstBlock; block < endBlock; block += blockRows) {
      int64_t count = std::min(blockRows, totalRows - block), width = count * lastOut;
      // Each image's part of the block: its columns, and its gradient rows transposed.
      for (int64_t row = block, column = 0; row < block + count;) {
        int64_t n = row / outerRows, first = row % outerRows;
        int64_t part = std::min(outerRows - first, block + count - row);
        const float *image = x + (n * g.channels + group * g.groupChannels) * g.inSize;
        const float *grad = dy + (n * g.outChannels + group * mg) * g.outSize + first * lastOut;
        parallelFor(0, rows, std::max<int64_t>(1, kElementwiseGrain / (part * lastOut)),
                    [&](int64_t begin, int64_t end) {
                      buildColumns(g, image, first, part, begin, end,
                                   columns + begin * width + column, width);
                    });
        parallelFor(0, part * lastOut, std::max<int64_t>(1, kElementwiseGrain / mg),
                    [&](int64_t begin, int64_t end) {
                      for (int64_t j = begin; j < end; ++j)
                        for (int64_t m = 0; m < mg; ++m)
                          packed[(column + j) * mg + m] = grad[m * g.outSize + j];
                    });
        row += part;
        column += part * lastOut;
      }
      if (block == firstBlock) {
        gemmParallel(rows, mg, width, columns, width, packed, mg, sum, mg);
        continue;
      }
      gemmParallel(rows, mg, width, columns, width, packed, mg, product, mg);
      for (int64_t i = 0; i < rows * mg; ++i)
        sum[i] += product[i];
    }
    if (pieces == 1)
      transposeInto(sum, rows, mg, dw + group * mg * rows);
  });
  if (pieces == 1)
    return;
  // The pieces' sums in piece order (an ungrouped call: one group).
  for (int64_t piece = 1; piece < pieces; ++piece)
    for (int64_t i = 0; i < rows * mg; ++i)
      scratch.sum[i] += scratch.sum[piece * scratch.sumStride + i];
  transposeInto(scratch.sum, rows, mg, dw);
}

bool runConvGradInput(KernelContext &context, const KernelCall &call) {
  const TensorView &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  GradInputScratch scratch = carveGradInput(call, carver);
  if (!carver.fits(context))
    return false;
  if (scratch.oneDnn) {
    runOneDnnConvolution(call, ConvDirection::GradInput, *scratch.oneDnn);
    return true;
  }
  ConvGeometry geometry(result.shape, call.inputs[1].shape, call.inputs[0].shape,
                        attributesOf(call));
  runInFloat(call, scratch.operands, [&](const float *dy, const float *w, float *dx) {
    convGradInputFloat(geometry, scratch, dy, w, dx);
  });
  return true;
}

bool runConvGradWeight(KernelContext &context, const KernelCall &call) {
  const TensorView &result = call.outputs[0];
  if (result.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  GradWeightScratch scratch = carveGradWeight(call, carver);
  if (!carver.fits(context))
    return false;
  if (scratch.oneDnn) {
    runOneDnnConvolution(call, ConvDirection::GradWeight, *scratch.oneDnn);
    return true;
  }
  ConvGeometry geometry(call.inputs[1].shape, result.shape, call.inputs[0].shape,
                        attributesOf(call));
  runInFloat(call, scratch.operands, [&](const float *dy, const float *x, float *dw) {
    convGradWeightFloat(geometry, scratch, dy, x, dw);
  });
  return true;
}

} // namespace

void addConvolutionBackwardKernels(KernelRuns &table) {
  table["conv_grad_input"] = &runConvGradInput;
  table["conv_grad_weight"] = &runConvGradWeight;
}

} // namespace memc::kernels
