//===- ShapeInference.h - static shape rules of the memc ops ----*- C++ -*-===//
//
// The shape rules as free functions over plain shapes, so that the ops' type inference, the
// importer's error messages and the cost model agree on one implementation. Each returns
// failure with a message in `error` when the shapes are incompatible.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_DIALECTS_MEMC_SHAPEINFERENCE_H
#define MEMC_DIALECTS_MEMC_SHAPEINFERENCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace memc {

using Shape = llvm::SmallVector<int64_t, 6>;

/// ONNX multidirectional (numpy) broadcasting of any number of shapes.
llvm::LogicalResult broadcastShapes(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes, Shape &result,
                                    std::string &error);

/// numpy.matmul: 1-D promotion and batch broadcasting.
llvm::LogicalResult matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs,
                                Shape &result, std::string &error);

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

int64_t numElements(llvm::ArrayRef<int64_t> shape);

std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace memc

#endif // MEMC_DIALECTS_MEMC_SHAPEINFERENCE_H
