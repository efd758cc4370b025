//===- ShapeRules.h - static shape rules of the memc ops --------*- C++ -*-===//
//
// The memc ops' shape rules, the one copy: plain C++ over vectors (no LLVM), called by the
// kernels' checks, the dialect's type inference (dialects/memc/ShapeInference.h adapts them to
// MLIR's types) and the importer's host folding (compiler/importer/HostTensor.cpp). They guard
// the arithmetic too: plans are untrusted, so every rule rejects negative dimensions and sizes
// that would overflow.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_SHAPERULES_H
#define MEMC_KERNELS_SHAPERULES_H

#include <cstdint>
#include <string>
#include <vector>

namespace memc::kernels {

using Shape = std::vector<int64_t>;

/// Largest element count (and byte size) any tensor or scratch buffer may have: 2^48, far above
/// any real tensor and far enough from 2^63 that products of a few such numbers stay exact.
constexpr int64_t kMaxElements = int64_t{1} << 48;

/// Largest value a window attribute (kernel size, stride, pad, dilation) may take.
constexpr int64_t kMaxWindowAttribute = int64_t{1} << 30;

/// Largest growth interval of loss_scale_update (--loss-scale-window): the count of finite steps
/// is an f32 scalar on the device, exact up to 2^24.
constexpr int64_t kMaxLossScaleWindow = int64_t{1} << 24;

/// Element count of `shape`; false if a dimension is negative or the count exceeds kMaxElements.
bool checkedNumElements(const Shape &shape, int64_t &count);

/// ONNX multidirectional (numpy) broadcasting of any number of shapes.
bool broadcastShapes(const std::vector<Shape> &shapes, Shape &result, std::string &error);

/// Where broadcasting fails: the first dimension of size `size` that meets `against` (the size
/// the shapes before it broadcast to), for callers that word the error themselves.
struct BroadcastConflict {
  int64_t size = 0, against = 0;
};
bool broadcastShapes(const std::vector<Shape> &shapes, Shape &result, BroadcastConflict &conflict);

/// Which matmul operands enter the product with their last two dims swapped (BLAS's trans
/// flags): a transpose the kernel reads in place instead of one materialised before it.
struct MatMulTransposes {
  bool lhs = false, rhs = false;
};

/// numpy.matmul: 1-D promotion and batch broadcasting. A transposed operand must be a matrix
/// or a batch of them (rank >= 2) and is read with its last two dims swapped.
bool matmulShape(const Shape &lhs, const Shape &rhs, Shape &result, std::string &error,
                 MatMulTransposes transposes = {});

/// matmul_nf4: `lhs` [..., K] times a [rows, cols] weight stored as NF4 (NormalFloat4.h), read
/// transposed with `transposeRhs` (then K = cols), its bytes `packed` [ceil(rows * cols / 2)]
/// and its absmax, one [blocks] tensor or (double quantization) [blocks] codes, [absmax blocks]
/// scales and a scalar offset. The result is [..., N].
bool matmulNf4Shape(const Shape &lhs, const Shape &weightShape, bool transposeRhs,
                    const Shape &packed, const std::vector<Shape> &absmax, Shape &result,
                    std::string &error);

/// Removes (or sets to 1 with keepdims) the sorted, unique, in-range `axes`. Empty `axes`
/// reduce nothing.
bool reduceShape(const Shape &input, const std::vector<int64_t> &axes, bool keepdims, Shape &result,
                 std::string &error);

/// Output size of one strided window dimension (convolution and pooling), as PyTorch computes
/// it: with `ceilMode`, a last window that would start inside the end padding is dropped.
int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode);

/// NC[D]HW windowed op: checks attribute lengths and ranges and computes
/// [N, channels, spatial...].
bool windowShape(const Shape &input, int64_t channels, const std::vector<int64_t> &kernel,
                 const std::vector<int64_t> &strides, const std::vector<int64_t> &pads,
                 const std::vector<int64_t> &dilations, bool ceilMode, Shape &result,
                 std::string &error);

/// Number of elements a (start, limit, step) slice of one dimension takes; any non-zero step,
/// INT64_MIN and INT64_MAX included, without overflow.
int64_t sliceLength(int64_t start, int64_t limit, int64_t step);

/// A step that takes the same elements of a dimension of `size` as `step`: one at least as
/// long as the dimension takes only the start, so it is bounded by the size, which keeps
/// `step * stride` within int64 in the kernels.
int64_t boundedSliceStep(int64_t step, int64_t size);

/// One dimension of ONNX Slice (and numpy's x[start:end:step]) as memc.slice's clamped bounds.
struct ClampedSlice {
  int64_t start, limit, step;
};

/// ONNX's clamping: negative starts and ends count from the end, then clamp into [0, size]
/// for positive steps and to [0, size - 1] (start) / [-1, size - 1] (end, -1 meaning before
/// the first) for negative ones; the step bounded by boundedSliceStep. Any int64 inputs.
ClampedSlice clampOnnxSlice(int64_t start, int64_t end, int64_t step, int64_t size);

/// memc.slice: one start, limit and step per dimension; starts and limits in [-1, dim], steps
/// non-zero, and every index a non-empty slice takes inside [0, dim).
bool sliceShape(const Shape &input, const std::vector<int64_t> &starts,
                const std::vector<int64_t> &limits, const std::vector<int64_t> &steps,
                Shape &result, std::string &error);

/// ONNX Gather: data.shape[:axis] + indices.shape + data.shape[axis+1:].
bool gatherShape(const Shape &data, const Shape &indices, int64_t axis, Shape &result,
                 std::string &error);

/// A shape seen as [outer, length, inner] around one axis: the products of the dimensions
/// before it, its own size, and the product of those after it (what scans along an axis walk).
struct AxisExtents {
  int64_t outer, length, inner;
};
AxisExtents extentsAroundAxis(const Shape &shape, int64_t axis);

/// memc.top_k: the input's shape with `k` (0 <= k <= that dimension) along `axis`.
bool topKShape(const Shape &input, int64_t axis, int64_t k, Shape &result, std::string &error);

/// Result dimension i is input dimension perm[i].
bool transposeShape(const Shape &input, const std::vector<int64_t> &perm, Shape &result,
                    std::string &error);

/// Inputs agree on every dimension but `axis`, whose sizes add up.
bool concatShape(const std::vector<Shape> &inputs, int64_t axis, Shape &result, std::string &error);

/// Piece i has sizes[i] elements along `axis`; the sizes add up to that dimension.
bool splitShapes(const Shape &input, int64_t axis, const std::vector<int64_t> &sizes,
                 std::vector<Shape> &results, std::string &error);

/// memc.flash_attention: q [B,H,Tq,D], k [B,Hkv,Tk,D], v [B,Hkv,Tk,Dv] with Hkv dividing H
/// (grouped-query attention), and an optional additive mask of rank 4 whose every dimension is
/// 1 or that of [B,H,Tq,Tk] (`mask` null when absent). The output is [B,H,Tq,Dv], the
/// logsumexp [B,H,Tq].
bool attentionShapes(const Shape &q, const Shape &k, const Shape &v, const Shape *mask,
                     Shape &output, Shape &logsumexp, std::string &error);

/// memc.linear_cross_entropy: hidden [..., D], the head weight [D, V] (or [V, D] with
/// `transposeWeight`, a tied embedding or nn.Linear's layout), an optional bias [V] (`bias` null
/// when absent) and labels [...] (hidden's shape without D). The logsumexp is labels' shape; `classes` is V. D and V are at most 2^31 - 1
/// (BLAS's dimensions); the logits [..., V] never exist, so their size is not bounded.
bool linearCrossEntropyShape(const Shape &hidden, const Shape &weight, bool transposeWeight,
                             const Shape *bias, const Shape &labels, Shape &logsumexp,
                             int64_t &classes, std::string &error);

/// memc.rms_norm and memc.rms_norm_grad: an input of rank >= 1 normalized over dimensions
/// `axis..rank-1` (axis in [0, rank)), and a scale of exactly those dimensions' shape. The
/// result has the input's shape.
bool rmsNormShape(const Shape &input, int64_t axis, const Shape &scale, std::string &error);

/// memc.bias_gelu and memc.bias_gelu_grad: an input of rank >= 1 and a bias of shape [N], N the
/// input's last dimension. The result has the input's shape.
bool lastAxisBiasShape(const Shape &input, const Shape &bias, std::string &error);

} // namespace memc::kernels

#endif // MEMC_KERNELS_SHAPERULES_H
