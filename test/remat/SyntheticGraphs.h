//===- SyntheticGraphs.h - training graphs for remat tests and benchmarks -*- C++ -*-===//
//
// Rematerialization graphs shaped like real training steps, built directly as RematGraphs so
// that solvers can be tested and benchmarked without importing a model. Each backward node
// reads the forward values its real counterpart saves (a matmul's weight gradient reads the
// matmul's input, gelu's gradient reads gelu's input, softmax's gradient reads its output,
// layernorm's gradient reads its input), so the set of values worth recomputing is the one a
// real model has.
//
// Costs: a matmul costs its FLOPs (2mnk); an elementwise or normalisation op, being bound by
// memory traffic, costs `elementwiseCostPerElement` per output element. Parameters live outside
// the arena (fixedBytes); weight gradients are arena values read by an optimizer update right
// after they are produced.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_TEST_REMAT_SYNTHETICGRAPHS_H
#define MEMC_TEST_REMAT_SYNTHETICGRAPHS_H

#include "compiler/remat/RematGraph.h"

#include <vector>

namespace memc::remat::testing {

/// Sizes of a transformer-like model; bytes are elements times bytesPerElement.
struct TransformerShape {
  int64_t tokens = 128, width = 256, hidden = 1024, heads = 4;
  int64_t bytesPerElement = 4;
  double elementwiseCostPerElement = 8;
};

/// Appends nodes to a RematGraph while tracking which part of the step they belong to.
class SyntheticGraphBuilder {
public:
  explicit SyntheticGraphBuilder(const TransformerShape &shape) : shape(shape) {}

  int32_t input(int64_t elements) { return graph.addValue(bytes(elements)); }
  /// A forward op writing one value of `elements`; recomputable unless it is the loss.
  int32_t forward(std::vector<int32_t> inputs, int64_t elements, double flops,
                  bool recomputable = true, bool keepAlive = false) {
    int32_t out = graph.addValue(bytes(elements), keepAlive);
    graph.addNode({std::move(inputs), {out}, flops, flops, true, recomputable});
    return out;
  }
  int32_t matmul(std::vector<int32_t> inputs, int64_t m, int64_t k, int64_t n) {
    return forward(std::move(inputs), m * n, 2.0 * m * k * n);
  }
  int32_t elementwise(std::vector<int32_t> inputs, int64_t elements) {
    return forward(std::move(inputs), elements, shape.elementwiseCostPerElement * elements);
  }
  /// A backward op writing one value (or none when elements is 0, like an optimizer update).
  int32_t backward(std::vector<int32_t> inputs, int64_t elements, double flops) {
    RematGraph::Node node{std::move(inputs), {}, flops, flops, false, false};
    int32_t out = -1;
    if (elements > 0) {
      out = graph.addValue(bytes(elements));
      node.outputs.push_back(out);
    }
    graph.addNode(std::move(node));
    return out;
  }
  /// dW = x^T dy for a weight of k x n, followed by the optimizer's update reading dW.
  void weightGradient(int32_t x, int32_t dy, int64_t m, int64_t k, int64_t n) {
    graph.fixedBytes += 2 * bytes(k * n); // the weight and its optimizer state
    int32_t dw = backward({x, dy}, k * n, 2.0 * m * k * n);
    backward({dw}, 0, static_cast<double>(k * n));
  }

  RematGraph graph;
  TransformerShape shape;

private:
  uint64_t bytes(int64_t elements) const {
    return static_cast<uint64_t>(elements * shape.bytesPerElement);
  }
};

/// `layers` transformer blocks and a loss, then the backward in reverse order.
///
/// Per block (x is the block's input, T tokens, d width, h hidden, H heads):
///   ln1 = layernorm(x)           [T,d]     qkv = ln1 @ Wqkv          [T,3d]
///   att = softmax(q k^T)         [H,T,T]   ctx = att @ v             [T,d]
///   proj = ctx @ Wo              [T,d]     r1 = x + proj             [T,d]
///   ln2 = layernorm(r1)          [T,d]     up = ln2 @ W1             [T,h]
///   act = gelu(up)               [T,h]     down = act @ W2           [T,d]
///   out = r1 + down              [T,d]
/// loss = reduce(out of the last block), returned. The backward of each block reads act, up,
/// ln2, r1, ctx, att, qkv, ln1 and x, as the real gradients do.
inline RematGraph transformerLikeGraph(int layers, const TransformerShape &shape = {}) {
  SyntheticGraphBuilder b(shape);
  const int64_t t = shape.tokens, d = shape.width, h = shape.hidden, heads = shape.heads;
  struct Saved {
    int32_t x, ln1, qkv, att, ctx, r1, ln2, up, act;
  };
  std::vector<Saved> saved;
  int32_t x = b.input(t * d);
  for (int layer = 0; layer < layers; ++layer) {
    Saved s;
    s.x = x;
    s.ln1 = b.elementwise({x}, t * d);
    s.qkv = b.matmul({s.ln1}, t, d, 3 * d);
    s.att = b.forward({s.qkv}, heads * t * t, 2.0 * t * t * d);
    s.ctx = b.matmul({s.att, s.qkv}, t, t, d);
    int32_t proj = b.matmul({s.ctx}, t, d, d);
    s.r1 = b.elementwise({x, proj}, t * d);
    s.ln2 = b.elementwise({s.r1}, t * d);
    s.up = b.matmul({s.ln2}, t, d, h);
    s.act = b.elementwise({s.up}, t * h);
    int32_t down = b.matmul({s.act}, t, h, d);
    x = b.elementwise({s.r1, down}, t * d);
    saved.push_back(s);
  }
  int32_t loss = b.forward({x}, 1, static_cast<double>(t * d), /*recomputable=*/false,
                           /*keepAlive=*/true);
  int32_t dx = b.backward({x, loss}, t * d, static_cast<double>(t * d));
  for (int layer = layers - 1; layer >= 0; --layer) {
    const Saved &s = saved[layer];
    int32_t dact = b.backward({dx}, t * h, 2.0 * t * d * h);
    b.weightGradient(s.act, dx, t, h, d);
    int32_t dup = b.backward({s.up, dact}, t * h, shape.elementwiseCostPerElement * t * h);
    int32_t dln2 = b.backward({dup}, t * d, 2.0 * t * h * d);
    b.weightGradient(s.ln2, dup, t, d, h);
    int32_t dr1 = b.backward({s.r1, dln2, dx}, t * d, shape.elementwiseCostPerElement * t * d);
    int32_t dctx = b.backward({dr1}, t * d, 2.0 * t * d * d);
    b.weightGradient(s.ctx, dr1, t, d, d);
    int32_t datt = b.backward({dctx, s.qkv}, heads * t * t, 2.0 * t * t * d);
    int32_t dqkvFromV = b.backward({s.att, dctx}, t * 3 * d, 2.0 * t * t * d);
    int32_t dscores =
        b.backward({s.att, datt}, heads * t * t, shape.elementwiseCostPerElement * heads * t * t);
    int32_t dqkv = b.backward({dscores, s.qkv, dqkvFromV}, t * 3 * d, 4.0 * t * t * d);
    int32_t dln1 = b.backward({dqkv}, t * d, 2.0 * t * 3 * d * d);
    b.weightGradient(s.ln1, dqkv, t, d, 3 * d);
    dx = b.backward({s.x, dln1, dr1}, t * d, shape.elementwiseCostPerElement * t * d);
  }
  return std::move(b.graph);
}

/// An MLP of `layers` blocks `a = act(a @ W)`, each a matmul and an elementwise activation;
/// the backward reads each matmul's input (weight gradient) and each activation's input.
/// Two recomputable nodes per layer: small enough to brute-force for a handful of layers.
inline RematGraph mlpChainGraph(int layers, const TransformerShape &shape = {}) {
  SyntheticGraphBuilder b(shape);
  const int64_t t = shape.tokens, d = shape.width;
  std::vector<int32_t> inputs, preActivations;
  int32_t a = b.input(t * d);
  for (int layer = 0; layer < layers; ++layer) {
    inputs.push_back(a);
    int32_t h = b.matmul({a}, t, d, d);
    preActivations.push_back(h);
    a = b.elementwise({h}, t * d);
  }
  int32_t loss = b.forward({a}, 1, static_cast<double>(t * d), /*recomputable=*/false,
                           /*keepAlive=*/true);
  int32_t da = b.backward({a, loss}, t * d, static_cast<double>(t * d));
  for (int layer = layers - 1; layer >= 0; --layer) {
    int32_t dh =
        b.backward({preActivations[layer], da}, t * d, shape.elementwiseCostPerElement * t * d);
    b.weightGradient(inputs[layer], dh, t, d, d);
    da = b.backward({dh}, t * d, 2.0 * t * d * d);
  }
  return std::move(b.graph);
}

} // namespace memc::remat::testing

#endif // MEMC_TEST_REMAT_SYNTHETICGRAPHS_H
