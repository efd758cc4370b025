//===- ShapeInference.h - the memc ops' shape rules for MLIR ----*- C++ -*-===//
//
// Adapters from MLIR's shapes (ArrayRef, SmallVector, LogicalResult) to the one copy of the
// shape rules, kernels/ShapeRules.h (plain C++, shared with the kernels' checks and the
// importer's host folding), so that type inference, the importer's messages and the kernels
// agree on one implementation. Each returns failure with a message in `error` when the shapes
// are incompatible.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_DIALECTS_MEMC_SHAPEINFERENCE_H
#define MEMC_DIALECTS_MEMC_SHAPEINFERENCE_H

#include "kernels/ShapeRules.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace memc {

using Shape = llvm::SmallVector<int64_t, 6>;

/// ONNX multidirectional (numpy) broadcasting of any number of shapes.
llvm::LogicalResult broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes, Shape &result,
                                    std::string &error);

/// numpy.matmul: 1-D promotion and batch broadcasting; transposed operands read with their
/// last two dims swapped.
llvm::LogicalResult matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                                Shape &result, std::string &error,
                                kernels::MatMulTransposes transposes = {});

/// matmul_nf4's result: `lhs` [..., K] times an NF4 weight (kernels::matmulNf4Shape).
llvm::LogicalResult matmulNf4Shape(llvm::ArrayRef<int64_t> lhs,
                                   llvm::ArrayRef<int64_t> weightShape, bool transposeRhs,
                                   llvm::ArrayRef<int64_t> packed,
                                   llvm::ArrayRef<llvm::ArrayRef<int64_t>> absmax, Shape &result,
                                   std::string &error);

/// Removes (or sets to 1 with keepdims) the sorted, unique, in-range `axes`.
llvm::LogicalResult reduceShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes,
                                bool keepdims, Shape &result, std::string &error);

/// Output size of one strided window dimension (convolution and pooling).
int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode);

/// NC[D]HW windowed op: checks attribute lengths and computes [N, channels, spatial...].
llvm::LogicalResult windowShape(llvm::ArrayRef<int64_t> input, int64_t channels,
                                llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
                                llvm::ArrayRef<int64_t> pads, llvm::ArrayRef<int64_t> dilations,
                                bool ceilMode, Shape &result, std::string &error);

/// Number of elements a (start, limit, step) slice of one dimension takes.
int64_t sliceLength(int64_t start, int64_t limit, int64_t step);

/// memc.slice: one start, limit and step per dimension, in bounds.
llvm::LogicalResult sliceShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> starts,
                               llvm::ArrayRef<int64_t> limits, llvm::ArrayRef<int64_t> steps,
                               Shape &result, std::string &error);

/// ONNX Gather: data.shape[:axis] + indices.shape + data.shape[axis+1:].
llvm::LogicalResult gatherShape(llvm::ArrayRef<int64_t> data, llvm::ArrayRef<int64_t> indices,
                                int64_t axis, Shape &result, std::string &error);

/// memc.top_k: the input's shape with `k` along `axis`.
llvm::LogicalResult topKShape(llvm::ArrayRef<int64_t> input, int64_t axis, int64_t k, Shape &result,
                              std::string &error);

/// Result dimension i is input dimension perm[i].
llvm::LogicalResult transposeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> perm,
                                   Shape &result, std::string &error);

/// Inputs agree on every dimension but `axis`, whose sizes add up.
llvm::LogicalResult concatShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs, int64_t axis,
                                Shape &result, std::string &error);

/// Piece i has sizes[i] elements along `axis`; the sizes add up to that dimension.
llvm::LogicalResult splitShapes(llvm::ArrayRef<int64_t> input, int64_t axis,
                                llvm::ArrayRef<int64_t> sizes,
                                llvm::SmallVectorImpl<Shape> &results, std::string &error);

/// memc.flash_attention's output [B,H,Tq,Dv] and logsumexp [B,H,Tq] (`mask` null when absent).
llvm::LogicalResult attentionShapes(llvm::ArrayRef<int64_t> q, llvm::ArrayRef<int64_t> k,
                                    llvm::ArrayRef<int64_t> v,
                                    std::optional<llvm::ArrayRef<int64_t>> mask, Shape &output,
                                    Shape &logsumexp, std::string &error);

/// memc.linear_cross_entropy's logsumexp (labels' shape) and class count V, for hidden
/// [..., D], the weight [D, V] ([V, D] with `transposeWeight`) and the optional bias [V].
llvm::LogicalResult linearCrossEntropyShape(llvm::ArrayRef<int64_t> hidden,
                                            llvm::ArrayRef<int64_t> weight, bool transposeWeight,
                                            std::optional<llvm::ArrayRef<int64_t>> bias,
                                            llvm::ArrayRef<int64_t> labels, Shape &logsumexp,
                                            int64_t &classes, std::string &error);

/// memc.rms_norm's rule: `scale` is the shape of the input's dimensions `axis..rank-1`.
llvm::LogicalResult rmsNormShape(llvm::ArrayRef<int64_t> input, int64_t axis,
                                 llvm::ArrayRef<int64_t> scale, std::string &error);

/// memc.bias_gelu's rule: `bias` is [N], N the input's last dimension.
llvm::LogicalResult lastAxisBiasShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> bias,
                                      std::string &error);

/// Element count of a static shape (saturating at the rules' kMaxElements bound).
int64_t numElements(llvm::ArrayRef<int64_t> shape);

std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace memc

#endif // MEMC_DIALECTS_MEMC_SHAPEINFERENCE_H
