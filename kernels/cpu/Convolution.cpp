//===- Convolution.cpp - grouped N-d convolution by im2col + sgemm --------===//
//
// For each image and group, the receptive fields are unrolled into a column matrix
// col[(c, kernel tap), output position] and the group's weights [M/g, C/g * taps] multiply it
// into the output. The columns are built a block of output rows at a time so the scratch stays
// near kColumnScratch elements whatever the image size. A 1x1 convolution with unit strides and
// no padding multiplies the image directly. f16/bf16 tensors compute in f32 (FloatCompute.h).
//
// Scratch: std::vector (columns, widened operands), for now; the plan will account for kernel
// workspace later.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>

namespace memc::kernels {

namespace {

/// Column-matrix elements built at once (64 MiB of f32), unless one output row needs more.
constexpr int64_t kColumnScratch = int64_t{1} << 24;

bool checkConv(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 2, 3, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "weight", "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkConvShapes(call.inputs[0], call.inputs[1], call.outputs[0], attributesOf(call),
                       "output", error))
    return false;
  return call.inputs.size() < 3 ||
         (checkDType(call.inputs[2], kFloatTypes, "bias", error) &&
          checkShape(call.inputs[2], {call.inputs[1].shape[0]}, "bias", error));
}

void convFloat(const ConvGeometry &g, const float *x, const float *w, const float *bias, float *y) {
  int64_t lastOut = g.outSpatial.back(), outerRows = g.outputRows();
  int64_t blockRows = std::clamp<int64_t>(
      kColumnScratch / std::max<int64_t>(1, g.columnRows * lastOut), 1, outerRows);
  bool pointwise = g.isPointwise();
  std::vector<float> columns;
  if (!pointwise)
    columns.resize(static_cast<size_t>(g.columnRows * blockRows * lastOut));
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t group = 0; group < g.group; ++group) {
      const float *image = x + (n * g.channels + group * g.groupChannels) * g.inSize;
      const float *weights = w + group * g.groupOutChannels * g.columnRows;
      float *out = y + (n * g.outChannels + group * g.groupOutChannels) * g.outSize;
      if (pointwise) {
        gemmParallel(g.groupOutChannels, g.outSize, g.columnRows, weights, g.columnRows, image,
                     g.inSize, out, g.outSize);
        continue;
      }
      for (int64_t first = 0; first < outerRows; first += blockRows) {
        int64_t rows = std::min(blockRows, outerRows - first);
        int64_t width = rows * lastOut;
        parallelFor(0, g.columnRows, std::max<int64_t>(1, kElementwiseGrain / width),
                    [&](int64_t begin, int64_t end) {
                      buildColumns(g, image, first, rows, begin, end,
                                   columns.data() + begin * width, width);
                    });
        gemmParallel(g.groupOutChannels, width, g.columnRows, weights, g.columnRows, columns.data(),
                     width, out + first * lastOut, g.outSize);
      }
    }
  }
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

bool runConv(const KernelCall &call, std::string &) {
  const TensorView &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  ConvGeometry geometry(call.inputs[0].shape, call.inputs[1].shape, output.shape,
                        attributesOf(call));
  std::vector<float> bias;
  if (call.inputs.size() == 3)
    bias = loadAsFloat(call.inputs[2]);
  runInFloat(call, [&](const float *x, const float *w, float *y) {
    convFloat(geometry, x, w, bias.empty() ? nullptr : bias.data(), y);
  });
  return true;
}

} // namespace

void addConvolutionKernels(KernelTable &table) { table["conv"] = Kernel{&checkConv, &runConv}; }

} // namespace memc::kernels
