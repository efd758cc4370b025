//===- ShapeInference.cpp - the memc ops' shape rules for MLIR ------------===//
#include "dialects/memc/ShapeInference.h"
#include "kernels/ShapeRules.h"
#include "kernels/Tensor.h"

using namespace llvm;

namespace memc {
namespace {

kernels::Shape rule(ArrayRef<int64_t> shape) { return kernels::Shape(shape.begin(), shape.end()); }

std::vector<kernels::Shape> rules(ArrayRef<ArrayRef<int64_t>> shapes) {
  std::vector<kernels::Shape> converted;
  converted.reserve(shapes.size());
  for (ArrayRef<int64_t> shape : shapes)
    converted.push_back(rule(shape));
  return converted;
}

/// The rule's verdict as MLIR's, with its result shape.
LogicalResult adapt(bool ok, const kernels::Shape &computed, Shape &result) {
  if (!ok)
    return failure();
  result.assign(computed.begin(), computed.end());
  return success();
}

} // namespace

std::string formatShape(ArrayRef<int64_t> shape) { return kernels::formatShape(rule(shape)); }

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t count;
  return kernels::checkedNumElements(rule(shape), count) ? count : kernels::kMaxElements;
}

LogicalResult broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes, Shape &result,
                              std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::broadcastShapes(rules(shapes), computed, error), computed, result);
}

LogicalResult matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs, Shape &result,
                          std::string &error, kernels::MatMulTransposes transposes) {
  kernels::Shape computed;
  return adapt(kernels::matmulShape(rule(lhs), rule(rhs), computed, error, transposes), computed,
               result);
}

LogicalResult matmulNf4Shape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> weightShape,
                             bool transposeRhs, ArrayRef<int64_t> packed,
                             ArrayRef<ArrayRef<int64_t>> absmax, Shape &result,
                             std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::matmulNf4Shape(rule(lhs), rule(weightShape), transposeRhs, rule(packed),
                                       rules(absmax), computed, error),
               computed, result);
}

LogicalResult reduceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes, bool keepdims,
                          Shape &result, std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::reduceShape(rule(input), rule(axes), keepdims, computed, error), computed,
               result);
}

int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode) {
  return kernels::windowOutputSize(input, kernel, stride, padBegin, padEnd, dilation, ceilMode);
}

LogicalResult windowShape(ArrayRef<int64_t> input, int64_t channels, ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                          ArrayRef<int64_t> dilations, bool ceilMode, Shape &result,
                          std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::windowShape(rule(input), channels, rule(kernel), rule(strides), rule(pads),
                                    rule(dilations), ceilMode, computed, error),
               computed, result);
}

int64_t sliceLength(int64_t start, int64_t limit, int64_t step) {
  return kernels::sliceLength(start, limit, step);
}

LogicalResult sliceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> starts,
                         ArrayRef<int64_t> limits, ArrayRef<int64_t> steps, Shape &result,
                         std::string &error) {
  kernels::Shape computed;
  return adapt(
      kernels::sliceShape(rule(input), rule(starts), rule(limits), rule(steps), computed, error),
      computed, result);
}

LogicalResult gatherShape(ArrayRef<int64_t> data, ArrayRef<int64_t> indices, int64_t axis,
                          Shape &result, std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::gatherShape(rule(data), rule(indices), axis, computed, error), computed,
               result);
}

LogicalResult topKShape(ArrayRef<int64_t> input, int64_t axis, int64_t k, Shape &result,
                        std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::topKShape(rule(input), axis, k, computed, error), computed, result);
}

LogicalResult transposeShape(ArrayRef<int64_t> input, ArrayRef<int64_t> perm, Shape &result,
                             std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::transposeShape(rule(input), rule(perm), computed, error), computed, result);
}

LogicalResult concatShape(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis, Shape &result,
                          std::string &error) {
  kernels::Shape computed;
  return adapt(kernels::concatShape(rules(inputs), axis, computed, error), computed, result);
}

LogicalResult splitShapes(ArrayRef<int64_t> input, int64_t axis, ArrayRef<int64_t> sizes,
                          SmallVectorImpl<Shape> &results, std::string &error) {
  std::vector<kernels::Shape> computed;
  if (!kernels::splitShapes(rule(input), axis, rule(sizes), computed, error))
    return failure();
  results.clear();
  for (const kernels::Shape &piece : computed)
    results.emplace_back(piece.begin(), piece.end());
  return success();
}

LogicalResult attentionShapes(ArrayRef<int64_t> q, ArrayRef<int64_t> k, ArrayRef<int64_t> v,
                              std::optional<ArrayRef<int64_t>> mask, Shape &output,
                              Shape &logsumexp, std::string &error) {
  std::optional<kernels::Shape> maskShape;
  if (mask)
    maskShape = rule(*mask);
  kernels::Shape computedOutput, computedLogsumexp;
  if (!kernels::attentionShapes(rule(q), rule(k), rule(v), maskShape ? &*maskShape : nullptr,
                                computedOutput, computedLogsumexp, error))
    return failure();
  output.assign(computedOutput.begin(), computedOutput.end());
  logsumexp.assign(computedLogsumexp.begin(), computedLogsumexp.end());
  return success();
}

LogicalResult linearCrossEntropyShape(ArrayRef<int64_t> hidden, ArrayRef<int64_t> weight,
                                      bool transposeWeight, std::optional<ArrayRef<int64_t>> bias,
                                      ArrayRef<int64_t> labels, Shape &logsumexp,
                                      int64_t &classes, std::string &error) {
  std::optional<kernels::Shape> biasShape;
  if (bias)
    biasShape = rule(*bias);
  kernels::Shape computed;
  if (!kernels::linearCrossEntropyShape(rule(hidden), rule(weight), transposeWeight,
                                        biasShape ? &*biasShape : nullptr, rule(labels), computed,
                                        classes, error))
    return failure();
  logsumexp.assign(computed.begin(), computed.end());
  return success();
}

LogicalResult rmsNormShape(ArrayRef<int64_t> input, int64_t axis, ArrayRef<int64_t> scale,
                           std::string &error) {
  return success(kernels::rmsNormShape(rule(input), axis, rule(scale), error));
}

LogicalResult lastAxisBiasShape(ArrayRef<int64_t> input, ArrayRef<int64_t> bias,
                                std::string &error) {
  return success(kernels::lastAxisBiasShape(rule(input), rule(bias), error));
}

} // namespace memc
