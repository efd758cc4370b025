//===- ShapeRules.cpp - static shape rules of the memc ops ----------------===//
#include "kernels/ShapeRules.h"

#include "kernels/NormalFloat4.h"
#include "kernels/Tensor.h"

#include <algorithm>
#include <limits>

namespace memc::kernels {

namespace {

bool isAxisInRange(int64_t axis, size_t rank) {
  return axis >= 0 && axis < static_cast<int64_t>(rank);
}

} // namespace

bool checkedNumElements(const Shape &shape, int64_t &count) {
  count = 1;
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    empty |= dim == 0;
  }
  if (empty) {
    // Still bound each dimension so that arithmetic on a [0, huge] shape stays safe.
    count = 0;
    return std::all_of(shape.begin(), shape.end(), [](int64_t dim) { return dim <= kMaxElements; });
  }
  for (int64_t dim : shape) {
    if (dim > kMaxElements / count)
      return false;
    count *= dim;
  }
  return true;
}

bool broadcastShapes(const std::vector<Shape> &shapes, Shape &result, BroadcastConflict &conflict) {
  size_t rank = 0;
  for (const Shape &shape : shapes)
    rank = std::max(rank, shape.size());
  result.assign(rank, 1);
  for (const Shape &shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &out = result[offset + i];
      if (shape[i] == out || shape[i] == 1)
        continue;
      if (out != 1) {
        conflict = {shape[i], out};
        return false;
      }
      out = shape[i];
    }
  }
  return true;
}

bool broadcastShapes(const std::vector<Shape> &shapes, Shape &result, std::string &error) {
  BroadcastConflict conflict;
  if (broadcastShapes(shapes, result, conflict))
    return true;
  error = "shapes";
  for (const Shape &s : shapes)
    error += " " + formatShape(s);
  error += " do not broadcast";
  return false;
}

bool matmulShape(const Shape &lhs, const Shape &rhs, Shape &result, std::string &error,
                 MatMulTransposes transposes) {
  if (lhs.empty() || rhs.empty()) {
    error = "matmul operands must have rank >= 1";
    return false;
  }
  if ((transposes.lhs && lhs.size() < 2) || (transposes.rhs && rhs.size() < 2)) {
    error = "a transposed matmul operand must have rank >= 2";
    return false;
  }
  Shape a = lhs, b = rhs;
  if (transposes.lhs)
    std::swap(a[a.size() - 2], a.back());
  if (transposes.rhs)
    std::swap(b[b.size() - 2], b.back());
  bool promotedLhs = a.size() == 1, promotedRhs = b.size() == 1;
  if (promotedLhs)
    a.insert(a.begin(), 1);
  if (promotedRhs)
    b.push_back(1);
  if (a.back() != b[b.size() - 2]) {
    error = "matmul contraction dimensions differ: " + formatShape(lhs) +
            (transposes.lhs ? "^T" : "") + " x " + formatShape(rhs) + (transposes.rhs ? "^T" : "");
    return false;
  }
  Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
  if (!broadcastShapes({batchA, batchB}, result, error)) {
    error =
        "matmul batch dimensions do not broadcast: " + formatShape(lhs) + " x " + formatShape(rhs);
    return false;
  }
  if (!promotedLhs)
    result.push_back(a[a.size() - 2]);
  if (!promotedRhs)
    result.push_back(b.back());
  return true;
}

bool matmulNf4Shape(const Shape &lhs, const Shape &weightShape, bool transposeRhs,
                    const Shape &packed, const std::vector<Shape> &absmax, Shape &result,
                    std::string &error) {
  int64_t count = 0;
  if (weightShape.size() != 2 || weightShape[0] <= 0 || weightShape[1] <= 0 ||
      !checkedNumElements(weightShape, count)) {
    error = "weight_shape must be two positive dims, got " + formatShape(weightShape);
    return false;
  }
  Nf4Layout layout{count};
  const Shape expectedPacked = {layout.packedBytes()};
  if (packed != expectedPacked) {
    error = "the packed weight must be " + formatShape(expectedPacked) + " bytes, got " +
            formatShape(packed);
    return false;
  }
  const std::vector<Shape> plain = {{layout.blocks()}};
  const std::vector<Shape> doubled = {{layout.blocks()}, {layout.absmaxBlocks()}, {}};
  if (absmax != plain && absmax != doubled) {
    error = "the absmax must be one per block of " + std::to_string(kNf4Block) + " (" +
            formatShape(plain[0]) + "), or its codes " + formatShape(doubled[0]) + ", scales " +
            formatShape(doubled[1]) + " and an offset []";
    return false;
  }
  const int64_t depth = transposeRhs ? weightShape[1] : weightShape[0];
  if (lhs.empty() || lhs.back() != depth) {
    error = "matmul_nf4 contraction dimensions differ: " + formatShape(lhs) + " x " +
            formatShape(weightShape) + (transposeRhs ? "^T" : "");
    return false;
  }
  result.assign(lhs.begin(), lhs.end() - 1);
  result.push_back(transposeRhs ? weightShape[0] : weightShape[1]);
  return true;
}

bool reduceShape(const Shape &input, const std::vector<int64_t> &axes, bool keepdims, Shape &result,
                 std::string &error) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!isAxisInRange(axes[i], input.size()) || (i > 0 && axes[i] <= axes[i - 1])) {
      error = "reduction axes " + formatShape(axes) + " must be sorted, unique and in [0, " +
              std::to_string(input.size()) + ")";
      return false;
    }
  }
  result.clear();
  for (int64_t dim = 0; dim < static_cast<int64_t>(input.size()); ++dim) {
    if (!std::binary_search(axes.begin(), axes.end(), dim))
      result.push_back(input[dim]);
    else if (keepdims)
      result.push_back(1);
  }
  return true;
}

int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode) {
  int64_t span = input + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t size = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (size - 1) * stride >= input + padBegin)
    --size;
  return size;
}

bool windowShape(const Shape &input, int64_t channels, const std::vector<int64_t> &kernel,
                 const std::vector<int64_t> &strides, const std::vector<int64_t> &pads,
                 const std::vector<int64_t> &dilations, bool ceilMode, Shape &result,
                 std::string &error) {
  if (input.size() < 3) {
    error = "expected an NC[D]HW input of rank >= 3, got " + formatShape(input);
    return false;
  }
  size_t spatial = input.size() - 2;
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    error = "window attributes do not match " + std::to_string(spatial) + " spatial dimensions";
    return false;
  }
  result = {input[0], channels};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t values[] = {kernel[i], strides[i], dilations[i], pads[i], pads[i + spatial]};
    if (kernel[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0 || pads[i] < 0 ||
        pads[i + spatial] < 0 || std::any_of(std::begin(values), std::end(values), [](int64_t v) {
          return v > kMaxWindowAttribute;
        })) {
      error = "kernel sizes, strides and dilations must be positive, pads non-negative (all at "
              "most 2^30)";
      return false;
    }
    int64_t size = windowOutputSize(input[i + 2], kernel[i], strides[i], pads[i], pads[i + spatial],
                                    dilations[i], ceilMode);
    if (size <= 0) {
      error = "window larger than the padded input " + formatShape(input);
      return false;
    }
    result.push_back(size);
  }
  return true;
}

int64_t sliceLength(int64_t start, int64_t limit, int64_t step) {
  // ceil(span / |step|) without forming span + |step| or -step, either of which could overflow.
  if (step > 0)
    return limit > start ? static_cast<int64_t>(
                               (static_cast<uint64_t>(limit) - static_cast<uint64_t>(start) - 1) /
                                   static_cast<uint64_t>(step) +
                               1)
                         : 0;
  uint64_t magnitude = uint64_t{0} - static_cast<uint64_t>(step);
  return start > limit
             ? static_cast<int64_t>(
                   (static_cast<uint64_t>(start) - static_cast<uint64_t>(limit) - 1) / magnitude +
                   1)
             : 0;
}

int64_t boundedSliceStep(int64_t step, int64_t size) {
  int64_t longest = std::max<int64_t>(size, 1);
  return std::clamp<int64_t>(step, -longest, longest);
}

ClampedSlice clampOnnxSlice(int64_t start, int64_t end, int64_t step, int64_t size) {
  if (size == 0)
    return {0, 0, boundedSliceStep(step, size)};
  // Adding the size to a negative index cannot overflow; clamping then needs no arithmetic.
  if (start < 0)
    start = std::max<int64_t>(start + size, -1);
  if (end < 0)
    end = std::max<int64_t>(end + size, -1);
  if (step > 0)
    return {std::clamp<int64_t>(start, 0, size), std::clamp<int64_t>(end, 0, size),
            boundedSliceStep(step, size)};
  return {std::clamp<int64_t>(start, 0, size - 1), std::clamp<int64_t>(end, -1, size - 1),
          boundedSliceStep(step, size)};
}

bool sliceShape(const Shape &input, const std::vector<int64_t> &starts,
                const std::vector<int64_t> &limits, const std::vector<int64_t> &steps,
                Shape &result, std::string &error) {
  if (starts.size() != input.size() || limits.size() != input.size() ||
      steps.size() != input.size()) {
    error = "slice needs one start, limit and step per dimension of " + formatShape(input);
    return false;
  }
  result.clear();
  for (size_t dim = 0; dim < input.size(); ++dim) {
    int64_t start = starts[dim], limit = limits[dim], step = steps[dim], size = input[dim];
    if (step == 0 || start < -1 || start > size || limit < -1 || limit > size) {
      error = "slice bounds out of range in dimension " + std::to_string(dim) + " (start " +
              std::to_string(start) + ", limit " + std::to_string(limit) + ", step " +
              std::to_string(step) + ", size " + std::to_string(size) + ")";
      return false;
    }
    int64_t length = sliceLength(start, limit, boundedSliceStep(step, size));
    // A non-empty slice reads start first and stays between start and limit after it.
    if (length > 0 && (start < 0 || start >= size)) {
      error = "slice start " + std::to_string(start) + " outside dimension " + std::to_string(dim) +
              " of size " + std::to_string(size);
      return false;
    }
    result.push_back(length);
  }
  return true;
}

bool gatherShape(const Shape &data, const Shape &indices, int64_t axis, Shape &result,
                 std::string &error) {
  if (!isAxisInRange(axis, data.size())) {
    error = "gather axis " + std::to_string(axis) + " out of range for " + formatShape(data);
    return false;
  }
  result.assign(data.begin(), data.begin() + axis);
  result.insert(result.end(), indices.begin(), indices.end());
  result.insert(result.end(), data.begin() + axis + 1, data.end());
  return true;
}

AxisExtents extentsAroundAxis(const Shape &shape, int64_t axis) {
  AxisExtents extents{1, shape[axis], 1};
  for (int64_t d = 0; d < axis; ++d)
    extents.outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    extents.inner *= shape[d];
  return extents;
}

bool topKShape(const Shape &input, int64_t axis, int64_t k, Shape &result, std::string &error) {
  if (!isAxisInRange(axis, input.size())) {
    error = "top_k axis " + std::to_string(axis) + " out of range for " + formatShape(input);
    return false;
  }
  if (k < 0 || k > input[axis]) {
    error = "top_k k " + std::to_string(k) + " is not within dimension " + std::to_string(axis) +
            " of " + formatShape(input);
    return false;
  }
  result = input;
  result[axis] = k;
  return true;
}

bool transposeShape(const Shape &input, const std::vector<int64_t> &perm, Shape &result,
                    std::string &error) {
  std::vector<bool> seen(input.size(), false);
  result.clear();
  for (int64_t dim : perm) {
    if (perm.size() != input.size() || !isAxisInRange(dim, input.size()) || seen[dim]) {
      error = "transpose perm is not a permutation of the " + std::to_string(input.size()) +
              " dimensions: " + formatShape(perm);
      return false;
    }
    seen[dim] = true;
    result.push_back(input[dim]);
  }
  if (perm.size() != input.size()) {
    error = "transpose perm " + formatShape(perm) + " has a length other than the rank " +
            std::to_string(input.size());
    return false;
  }
  return true;
}

bool concatShape(const std::vector<Shape> &inputs, int64_t axis, Shape &result,
                 std::string &error) {
  if (inputs.empty()) {
    error = "concat needs at least one input";
    return false;
  }
  result = inputs.front();
  if (!isAxisInRange(axis, result.size())) {
    error = "concat axis " + std::to_string(axis) + " out of range for " + formatShape(result);
    return false;
  }
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape &shape = inputs[i];
    for (size_t dim = 0; dim < result.size(); ++dim) {
      if (shape.size() != result.size() ||
          (static_cast<int64_t>(dim) != axis && shape[dim] != result[dim])) {
        error = "concat inputs " + formatShape(inputs.front()) + " and " + formatShape(shape) +
                " differ outside axis " + std::to_string(axis);
        return false;
      }
    }
    if (shape[axis] > kMaxElements - result[axis]) {
      error = "concat result too large";
      return false;
    }
    result[axis] += shape[axis];
  }
  return true;
}

bool splitShapes(const Shape &input, int64_t axis, const std::vector<int64_t> &sizes,
                 std::vector<Shape> &results, std::string &error) {
  if (!isAxisInRange(axis, input.size())) {
    error = "split axis " + std::to_string(axis) + " out of range for " + formatShape(input);
    return false;
  }
  int64_t total = 0;
  results.clear();
  for (int64_t size : sizes) {
    if (size < 0 || size > input[axis] - total) {
      error = "split sizes " + formatShape(sizes) + " must be non-negative and add up to " +
              std::to_string(input[axis]);
      return false;
    }
    total += size;
    results.push_back(input);
    results.back()[axis] = size;
  }
  if (total != input[axis]) {
    error = "split sizes add up to " + std::to_string(total) + ", not the dimension's " +
            std::to_string(input[axis]) + ": " + formatShape(sizes);
    return false;
  }
  return true;
}

bool attentionShapes(const Shape &q, const Shape &k, const Shape &v, const Shape *mask,
                     Shape &output, Shape &logsumexp, std::string &error) {
  std::string operands = formatShape(q) + ", " + formatShape(k) + ", " + formatShape(v);
  if (q.size() != 4 || k.size() != 4 || v.size() != 4) {
    error = "flash_attention q, k and v must be [batch, heads, tokens, head_dim], got " + operands;
    return false;
  }
  if (k[0] != q[0] || v[0] != q[0] || v[1] != k[1] || v[2] != k[2] || k[3] != q[3]) {
    error = "flash_attention q, k and v disagree on batch, kv heads, keys or head_dim: " + operands;
    return false;
  }
  if (k[1] <= 0 || q[1] % k[1] != 0) {
    error = "flash_attention kv heads (" + std::to_string(k[1]) +
            ") must be positive and divide the query heads (" + std::to_string(q[1]) + ")";
    return false;
  }
  // Bounds every task count of the kernels (tiles of queries or keys per head), whatever
  // head dimension is 0.
  int64_t pairs;
  if (!checkedNumElements({q[0], q[1], std::max<int64_t>(q[2], 1), std::max<int64_t>(k[2], 1)},
                          pairs)) {
    error = "flash_attention has more than 2^48 query-key pairs: " + operands;
    return false;
  }
  if (mask) {
    Shape scores = {q[0], q[1], q[2], k[2]};
    bool broadcasts = mask->size() == 4;
    for (size_t i = 0; broadcasts && i < 4; ++i)
      broadcasts = (*mask)[i] == 1 || (*mask)[i] == scores[i];
    if (!broadcasts) {
      error = "flash_attention mask " + formatShape(*mask) + " must have rank 4 and broadcast to " +
              formatShape(scores);
      return false;
    }
  }
  output = {q[0], q[1], q[2], v[3]};
  logsumexp = {q[0], q[1], q[2]};
  return true;
}

bool linearCrossEntropyShape(const Shape &hidden, const Shape &weight, bool transposeWeight,
                             const Shape *bias, const Shape &labels, Shape &logsumexp,
                             int64_t &classes, std::string &error) {
  std::string operands = "hidden " + formatShape(hidden) + ", weight " + formatShape(weight) +
                         (transposeWeight ? " (transposed)" : "") + ", labels " +
                         formatShape(labels);
  if (hidden.empty() || weight.size() != 2) {
    error = "linear_cross_entropy needs hidden [..., D] and a 2-D weight, got " + operands;
    return false;
  }
  int64_t depth = transposeWeight ? weight[1] : weight[0];
  classes = transposeWeight ? weight[0] : weight[1];
  Shape rows(hidden.begin(), hidden.end() - 1);
  if (hidden.back() != depth || labels != rows) {
    error = "linear_cross_entropy operands disagree on D or the rows: " + operands;
    return false;
  }
  if (bias && *bias != Shape{classes}) {
    error = "linear_cross_entropy bias " + formatShape(*bias) + " must be [V], V = " +
            std::to_string(classes) + ": " + operands;
    return false;
  }
  // The kernels' products take D and V as BLAS's 32-bit dimensions and leading dimensions.
  constexpr int64_t kMaxDimension = std::numeric_limits<int32_t>::max();
  int64_t count;
  if (!checkedNumElements(hidden, count) || classes > kMaxDimension || depth > kMaxDimension) {
    error = "linear_cross_entropy D or V exceed 2^31 - 1: " + operands;
    return false;
  }
  logsumexp = rows;
  return true;
}

bool rmsNormShape(const Shape &input, int64_t axis, const Shape &scale, std::string &error) {
  if (axis < 0 || axis >= static_cast<int64_t>(input.size())) {
    error = "rms_norm axis " + std::to_string(axis) + " out of range for input " +
            formatShape(input);
    return false;
  }
  Shape normalized(input.begin() + axis, input.end());
  if (scale != normalized) {
    error = "rms_norm scale shape " + formatShape(scale) + " differs from the normalized shape " +
            formatShape(normalized) + " of input " + formatShape(input);
    return false;
  }
  return true;
}

bool lastAxisBiasShape(const Shape &input, const Shape &bias, std::string &error) {
  if (input.empty() || bias != Shape{input.back()}) {
    error = "bias shape " + formatShape(bias) + " is not the last dimension of input " +
            formatShape(input);
    return false;
  }
  return true;
}

} // namespace memc::kernels
