//===- Convolution.cpp - grouped N-d convolution by im2col + sgemm --------===//
//
// For each image and group, the receptive fields are unrolled into a column matrix
// col[(c, kernel tap), output position] and the group's weights [M/g, C/g * taps] multiply it
// into the output. The columns are built a tile of output rows at a time (columnTileRows, about
// kColumnTilePixels positions), so the scratch is a small constant whatever the image size. A 1x1
// convolution with unit strides and no padding multiplies the image directly. Many small
// (image, group) tasks run side by side over the threads, each with its slot's column block
// (ConvolutionTasks.h), as the backward kernels' do. f16/bf16 tensors compute in f32
// (FloatCompute.h).
//
// Workspace: a column block per task slot, the bias as f32 and, for f16/bf16, the widened
// operands.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/ConvolutionTasks.h"
#include "kernels/cpu/ConvolutionWorkspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/OneDnnConvolutionOnPool.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>

namespace memc::kernels {

namespace {

void convFloat(const ConvGeometry &g, const ConvScratch &scratch, const float *x, const float *w,
               const float *bias, float *y) {
  int64_t lastOut = g.outSpatial.back(), outerRows = g.outputRows();
  int64_t blockRows = columnBlockRows(g);
  bool pointwise = g.isPointwise();
  runConvolutionTasks(g.batch * g.group, convSlots(g), [&](int64_t task, int64_t slot) {
    int64_t n = task / g.group, group = task % g.group;
    const float *image = x + (n * g.channels + group * g.groupChannels) * g.inSize;
    const float *weights = w + group * g.groupOutChannels * g.columnRows;
    float *out = y + (n * g.outChannels + group * g.groupOutChannels) * g.outSize;
    if (pointwise) {
      gemmParallel(g.groupOutChannels, g.outSize, g.columnRows, weights, g.columnRows, image,
                   g.inSize, out, g.outSize);
      return;
    }
    float *columns = scratch.columns + slot * scratch.slotStride;
    for (int64_t first = 0; first < outerRows; first += blockRows) {
      int64_t rows = std::min(blockRows, outerRows - first);
      int64_t width = rows * lastOut;
      parallelFor(0, g.columnRows, std::max<int64_t>(1, kElementwiseGrain / width),
                  [&](int64_t begin, int64_t end) {
                    buildColumns(g, image, first, rows, begin, end, columns + begin * width, width);
                  });
      gemmParallel(g.groupOutChannels, width, g.columnRows, weights, g.columnRows, columns, width,
                   out + first * lastOut, g.outSize);
    }
  });
  if (!bias)
    return;
  parallelFor(0, g.batch * g.outChannels, std::max<int64_t>(1, kElementwiseGrain / g.outSize),
              [&](int64_t begin, int64_t end) {
                for (int64_t plane = begin; plane < end; ++plane) {
                  float value = bias[plane % g.outChannels];
                  float *out = y + plane * g.outSize;
                  for (int64_t i = 0; i < g.outSize; ++i)
                    out[i] += value;
                }
              });
}

bool runConv(KernelContext &context, const KernelCall &call) {
  const TensorView &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  ConvScratch scratch = carveConv(call, carver);
  if (!carver.fits(context))
    return false;
  if (scratch.oneDnn) {
    runOneDnnConvolution(call, ConvDirection::Forward, *scratch.oneDnn);
    return true;
  }
  ConvGeometry geometry(call.inputs[0].shape, call.inputs[1].shape, output.shape,
                        attributesOf(call));
  const float *bias = scratch.bias ? loadAsFloat(call.inputs[2], scratch.bias) : nullptr;
  runInFloat(call, scratch.operands, [&](const float *x, const float *w, float *y) {
    convFloat(geometry, scratch, x, w, bias, y);
  });
  return true;
}

} // namespace

void addConvolutionKernels(KernelRuns &table) { table["conv"] = &runConv; }

} // namespace memc::kernels
