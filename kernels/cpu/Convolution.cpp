//===- Convolution.cpp - grouped N-d convolution by im2col + sgemm --------===//
//
// For each image and group, the receptive fields are unrolled into a column matrix
// col[(c, kernel tap), output position] and the group's weights [M/g, C/g * taps] multiply it
// into the output. The columns are built a block of output rows at a time so the scratch stays
// near kColumnScratch elements whatever the image size. A 1x1 convolution with unit strides and
// no padding multiplies the image directly. f16/bf16 tensors are widened to f32 scratch and
// the f32 result rounded once.
//
// Scratch: std::vector (columns, widened operands), for now; the plan will account for kernel
// workspace later.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>

namespace memc::kernels {

namespace {

/// Column-matrix elements built at once (64 MiB of f32), unless one output row needs more.
constexpr int64_t kColumnScratch = int64_t{1} << 24;

struct ConvGeometry {
  int64_t batch, channels, outChannels, group;
  Shape inSpatial, outSpatial, kernel, strides, padsBegin, dilations;
  int64_t inSize = 1, outSize = 1, taps = 1;
  int64_t groupChannels, groupOutChannels, columnRows;

  explicit ConvGeometry(const KernelCall &call) {
    const Shape &input = call.inputs[0].shape, &weight = call.inputs[1].shape;
    const Attributes &attributes = attributesOf(call);
    std::vector<int64_t> pads;
    attributes.getInts("strides", strides);
    attributes.getInts("pads", pads);
    attributes.getInts("dilations", dilations);
    group = attributes.intOr("group", 1);
    batch = input[0];
    channels = input[1];
    outChannels = weight[0];
    size_t rank = input.size() - 2;
    for (size_t d = 0; d < rank; ++d) {
      inSpatial.push_back(input[d + 2]);
      outSpatial.push_back(call.outputs[0].shape[d + 2]);
      kernel.push_back(weight[d + 2]);
      padsBegin.push_back(pads[d]);
      inSize *= inSpatial[d];
      outSize *= outSpatial[d];
      taps *= kernel[d];
    }
    groupChannels = channels / group;
    groupOutChannels = outChannels / group;
    columnRows = groupChannels * taps;
  }

  /// A 1x1 window at every input position: the image is its own column matrix.
  bool isPointwise() const {
    for (size_t d = 0; d < kernel.size(); ++d)
      if (kernel[d] != 1 || strides[d] != 1 || padsBegin[d] != 0 || outSpatial[d] != inSpatial[d])
        return false;
    return true;
  }
};

bool checkConv(const KernelCall &call, std::string &error) {
  int64_t group;
  std::vector<int64_t> strides, pads, dilations;
  const Attributes &attributes = attributesOf(call);
  if (!checkCall(call, 2, 3, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "weight", "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkRankAtLeast(call.inputs[0], 3, "input", error) ||
      !requireInts(attributes, "strides", strides, error) ||
      !requireInts(attributes, "pads", pads, error) ||
      !requireInts(attributes, "dilations", dilations, error) ||
      !requireInt(attributes, "group", group, error))
    return false;
  const Shape &input = call.inputs[0].shape, &weight = call.inputs[1].shape;
  if (weight.size() != input.size() || group <= 0 || input[1] % group != 0 ||
      weight[1] != input[1] / group || weight[0] % group != 0) {
    error = "conv weight " + formatShape(weight) + " does not fit input " + formatShape(input) +
            " with group " + std::to_string(group);
    return false;
  }
  if (call.inputs.size() == 3 && (!checkDType(call.inputs[2], kFloatTypes, "bias", error) ||
                                  !checkShape(call.inputs[2], {weight[0]}, "bias", error)))
    return false;
  Shape expected;
  if (!windowShape(input, weight[0], Shape(weight.begin() + 2, weight.end()), strides, pads,
                   dilations, false, expected, error) ||
      !checkShape(call.outputs[0], expected, "output", error))
    return false;
  int64_t outSize = 1;
  for (size_t d = 2; d < expected.size(); ++d)
    outSize *= expected[d];
  int64_t columnRows = call.inputs[1].numElements() / std::max<int64_t>(weight[0], 1);
  if (columnRows > kMaxGemmDimension || outSize > kMaxGemmDimension) {
    error = "conv is too large for one sgemm per group (" + std::to_string(columnRows) + " x " +
            std::to_string(outSize) + ")";
    return false;
  }
  return true;
}

/// Fills col[row][j] for rows [rowBegin, rowEnd) of the column matrix and output positions
/// [first * lastOut, (first + rowsOfOutput) * lastOut): the input element each kernel tap
/// reads, or 0 in the padding.
void buildColumns(const ConvGeometry &g, const float *image, int64_t first, int64_t outputRows,
                  int64_t rowBegin, int64_t rowEnd, float *col) {
  size_t rank = g.kernel.size(), last = rank - 1;
  int64_t lastOut = g.outSpatial[last], lastIn = g.inSpatial[last];
  int64_t width = outputRows * lastOut;
  std::vector<int64_t> tap(rank), position(rank);
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    int64_t channel = row / g.taps, rest = row % g.taps;
    for (size_t d = rank; d-- > 0;) {
      tap[d] = rest % g.kernel[d];
      rest /= g.kernel[d];
    }
    const float *plane = image + channel * g.inSize;
    float *out = col + (row - rowBegin) * width;
    int64_t lastOffset = tap[last] * g.dilations[last] - g.padsBegin[last];
    int64_t stride = g.strides[last];
    // Output positions o of the last dimension that read inside the input: 0 <= o*s + off < n.
    int64_t lo = lastOffset >= 0 ? 0 : (-lastOffset + stride - 1) / stride;
    int64_t hi = lastIn - lastOffset <= 0 ? 0 : (lastIn - lastOffset + stride - 1) / stride;
    lo = std::min(lo, lastOut);
    hi = std::clamp(hi, lo, lastOut);
    for (int64_t r = 0; r < outputRows; ++r) {
      // Position of output row first + r in the outer output dimensions.
      int64_t linear = first + r, inputOffset = 0;
      bool inside = true;
      for (size_t d = last; d-- > 0;) {
        int64_t o = linear % g.outSpatial[d];
        linear /= g.outSpatial[d];
        int64_t in = o * g.strides[d] + tap[d] * g.dilations[d] - g.padsBegin[d];
        inside &= in >= 0 && in < g.inSpatial[d];
        position[d] = in;
      }
      float *dst = out + r * lastOut;
      if (!inside) {
        std::fill(dst, dst + lastOut, 0.0f);
        continue;
      }
      for (size_t d = 0; d < last; ++d)
        inputOffset = inputOffset * g.inSpatial[d] + position[d];
      const float *src = plane + inputOffset * lastIn + lastOffset;
      std::fill(dst, dst + lo, 0.0f);
      for (int64_t o = lo; o < hi; ++o)
        dst[o] = src[o * stride];
      std::fill(dst + hi, dst + lastOut, 0.0f);
    }
  }
}

void convFloat(const ConvGeometry &g, const float *x, const float *w, const float *bias, float *y) {
  int64_t lastOut = g.outSpatial.back();
  int64_t outerRows = g.outSize / lastOut;
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
                                   columns.data() + begin * width);
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

template <typename T> const float *widened(const TensorView &tensor, std::vector<float> &scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return tensor.as<float>();
  } else {
    scratch.resize(static_cast<size_t>(tensor.numElements()));
    const T *data = tensor.as<T>();
    parallelFor(0, tensor.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        scratch[i] = Element<T>::load(data[i]);
    });
    return scratch.data();
  }
}

bool runConv(const KernelCall &call, std::string &) {
  const TensorView &output = call.outputs[0];
  if (output.numElements() == 0)
    return true;
  ConvGeometry geometry(call);
  std::vector<float> bias;
  if (call.inputs.size() == 3)
    bias = loadAsFloat(call.inputs[2]);
  visitFloat(output.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<float> inputScratch, weightScratch, outputScratch;
    const float *x = widened<T>(call.inputs[0], inputScratch);
    const float *w = widened<T>(call.inputs[1], weightScratch);
    const float *b = bias.empty() ? nullptr : bias.data();
    if constexpr (std::is_same_v<T, float>) {
      convFloat(geometry, x, w, b, output.as<float>());
    } else {
      outputScratch.resize(static_cast<size_t>(output.numElements()));
      convFloat(geometry, x, w, b, outputScratch.data());
      T *y = output.as<T>();
      parallelFor(0, output.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          y[i] = Element<T>::store(outputScratch[i]);
      });
    }
  });
  return true;
}

} // namespace

void addConvolutionKernels(KernelTable &table) { table["conv"] = Kernel{&checkConv, &runConv}; }

} // namespace memc::kernels
