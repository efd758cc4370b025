//===- TrainingGraphs.cpp - GPT-2 and ResNet training steps as DAGs -------===//
//
// A small tape: every forward op records how to emit its gradient ops, and replaying the records
// in reverse emits the backward pass, with gradients of values read twice summed by an add node
// as an autodiff pass would. The forward ops read exactly what the matching PyTorch kernels save
// for backward (layer-norm statistics, softmax outputs, GELU inputs, convolution inputs), so live
// ranges have the shape of a real training step.
//
//===----------------------------------------------------------------------===//
#include "TrainingGraphs.h"

#include <functional>
#include <map>

namespace memc::bench {
namespace {

using planner::ScheduleGraph;

class TrainingGraphBuilder {
public:
  explicit TrainingGraphBuilder(int64_t elementBytes) : elementBytes(elementBytes) {}

  /// A graph input that needs no gradient (token ids, images, labels).
  int32_t input(int64_t elements) { return graph.addValue(bytes(elements)); }
  /// A parameter: persistent, and updated by the optimizer from its gradient.
  int32_t weight(int64_t elements) {
    int32_t value = graph.addValue(bytes(elements));
    weights.push_back(value);
    return value;
  }

  std::vector<int32_t> ops(std::vector<int32_t> inputs, const std::vector<int64_t> &outputs,
                           bool keepAlive = false) {
    std::vector<int32_t> values;
    for (int64_t elements : outputs)
      values.push_back(graph.addValue(bytes(elements), keepAlive));
    graph.addNode(std::move(inputs), values);
    return values;
  }
  int32_t op(std::vector<int32_t> inputs, int64_t elements) {
    return ops(std::move(inputs), {elements})[0];
  }

  int64_t elements(int32_t value) const {
    return static_cast<int64_t>(graph.valueBytes[value]) / elementBytes;
  }
  /// Whether a gradient flows into the value: it is a weight or some op produced it.
  bool needsGradient(int32_t value) const {
    return producedOrWeight.count(value) != 0;
  }

  void onBackward(std::function<void()> emit) { tape.push_back(std::move(emit)); }
  int32_t gradient(int32_t value) const { return gradients.at(value); }
  void addGradient(int32_t value, int32_t gradient) {
    if (!needsGradient(value))
      return;
    auto [it, fresh] = gradients.emplace(value, gradient);
    if (!fresh)
      it->second = op({it->second, gradient}, elements(value));
  }

  /// Emits the backward pass and then one optimizer update per parameter (which writes the
  /// persistent weight and moments in place, so it produces no arena value).
  ScheduleGraph finish() {
    for (auto it = tape.rbegin(); it != tape.rend(); ++it)
      (*it)();
    for (int32_t weight : weights)
      if (gradients.count(weight))
        graph.addNode({weight, gradients.at(weight)}, {});
    return std::move(graph);
  }

  void markProduced(const std::vector<int32_t> &values) {
    producedOrWeight.insert(values.begin(), values.end());
  }
  void markWeights() { producedOrWeight.insert(weights.begin(), weights.end()); }

private:
  uint64_t bytes(int64_t elements) const { return static_cast<uint64_t>(elements * elementBytes); }

  int64_t elementBytes;
  ScheduleGraph graph;
  std::vector<int32_t> weights;
  std::map<int32_t, int32_t> gradients;
  std::map<int32_t, char> producedOrWeight;
  std::vector<std::function<void()>> tape;
};

/// The differentiable ops both models are built from. Each returns its output and records its
/// backward ops.
class Layers {
public:
  explicit Layers(TrainingGraphBuilder &b) : b(b) {}

  int32_t op(std::vector<int32_t> inputs, int64_t elements) {
    int32_t value = b.op(std::move(inputs), elements);
    b.markProduced({value});
    return value;
  }
  std::vector<int32_t> ops(std::vector<int32_t> inputs, const std::vector<int64_t> &outputs) {
    std::vector<int32_t> values = b.ops(std::move(inputs), outputs);
    b.markProduced(values);
    return values;
  }
  int32_t weight(int64_t elements) {
    int32_t value = b.weight(elements);
    b.markWeights();
    return value;
  }

  int32_t linear(int32_t x, int64_t rows, int64_t in, int64_t out) {
    int32_t w = weight(in * out), bias = weight(out);
    int32_t y = op({x, w, bias}, rows * out);
    b.onBackward([=] {
      int32_t dy = b.gradient(y);
      if (b.needsGradient(x))
        b.addGradient(x, b.op({dy, w}, rows * in));
      std::vector<int32_t> dw = b.ops({x, dy}, {in * out, out});
      b.addGradient(w, dw[0]);
      b.addGradient(bias, dw[1]);
    });
    return y;
  }

  int32_t layerNorm(int32_t x, int64_t rows, int64_t width) {
    int32_t gamma = weight(width), beta = weight(width);
    std::vector<int32_t> out = ops({x, gamma, beta}, {rows * width, 2 * rows});
    int32_t y = out[0], statistics = out[1];
    b.onBackward([=] {
      std::vector<int32_t> d =
          b.ops({b.gradient(y), x, statistics, gamma}, {rows * width, width, width});
      b.addGradient(x, d[0]);
      b.addGradient(gamma, d[1]);
      b.addGradient(beta, d[2]);
    });
    return y;
  }

  /// An elementwise op whose gradient needs its input (GELU) or output (ReLU, softmax).
  int32_t unary(int32_t x, bool gradientReadsOutput) {
    int32_t y = op({x}, b.elements(x));
    b.onBackward([=] {
      int32_t saved = gradientReadsOutput ? y : x;
      b.addGradient(x, b.op({b.gradient(y), saved}, b.elements(x)));
    });
    return y;
  }

  int32_t add(int32_t x, int32_t y) {
    int32_t sum = op({x, y}, b.elements(x));
    b.onBackward([=] {
      b.addGradient(x, b.gradient(sum));
      b.addGradient(y, b.gradient(sum));
    });
    return sum;
  }

  /// A reshaping copy (split or merge heads) with a reshaping gradient.
  std::vector<int32_t> reshape(std::vector<int32_t> inputs, const std::vector<int64_t> &outputs) {
    std::vector<int32_t> y = ops(inputs, outputs);
    b.onBackward([=] {
      std::vector<int32_t> dy;
      for (int32_t value : y)
        dy.push_back(b.gradient(value));
      std::vector<int64_t> sizes;
      for (int32_t value : inputs)
        sizes.push_back(b.elements(value));
      std::vector<int32_t> dx = b.ops(dy, sizes);
      for (size_t i = 0; i < inputs.size(); ++i)
        b.addGradient(inputs[i], dx[i]);
    });
    return y;
  }

  /// A product of two activations (attention scores, attention context).
  int32_t matmul(int32_t x, int32_t y, int64_t elements) {
    int32_t z = op({x, y}, elements);
    b.onBackward([=] {
      int32_t dz = b.gradient(z);
      b.addGradient(x, b.op({dz, y}, b.elements(x)));
      b.addGradient(y, b.op({x, dz}, b.elements(y)));
    });
    return z;
  }

  /// Softmax cross-entropy: the log-probabilities are kept for the gradient.
  int32_t crossEntropy(int32_t logits, int32_t labels) {
    int32_t logProbabilities = op({logits}, b.elements(logits));
    int32_t loss = b.ops({logProbabilities, labels}, {1}, /*keepAlive=*/true)[0];
    b.onBackward([=] {
      b.addGradient(logits, b.op({logProbabilities, labels}, b.elements(logits)));
    });
    return loss;
  }

  int32_t convolution(int32_t x, int64_t batch, int64_t in, int64_t out, int64_t kernel,
                      int64_t outputSide) {
    int32_t w = weight(out * in * kernel * kernel);
    int32_t y = op({x, w}, batch * out * outputSide * outputSide);
    b.onBackward([=] {
      int32_t dy = b.gradient(y);
      if (b.needsGradient(x))
        b.addGradient(x, b.op({dy, w}, b.elements(x)));
      b.addGradient(w, b.op({x, dy}, b.elements(w)));
    });
    return y;
  }

  int32_t batchNorm(int32_t x, int64_t channels) {
    int32_t gamma = weight(channels), beta = weight(channels);
    std::vector<int32_t> out = ops({x, gamma, beta}, {b.elements(x), 2 * channels});
    int32_t y = out[0], statistics = out[1];
    b.onBackward([=] {
      std::vector<int32_t> d =
          b.ops({b.gradient(y), x, statistics, gamma}, {b.elements(x), channels, channels});
      b.addGradient(x, d[0]);
      b.addGradient(gamma, d[1]);
      b.addGradient(beta, d[2]);
    });
    return y;
  }

  /// Pooling: the gradient needs the input (max) or only its shape (average).
  int32_t pool(int32_t x, int64_t elements, bool gradientReadsInput) {
    int32_t y = op({x}, elements);
    b.onBackward([=] {
      std::vector<int32_t> inputs = {b.gradient(y)};
      if (gradientReadsInput)
        inputs.push_back(x);
      b.addGradient(x, b.op(inputs, b.elements(x)));
    });
    return y;
  }

private:
  TrainingGraphBuilder &b;
};

int32_t transformerBlock(Layers &l, int32_t x, const Gpt2Config &c) {
  int64_t rows = c.batch * c.sequence, d = c.hidden;
  int64_t scores = c.batch * c.heads * c.sequence * c.sequence;
  int32_t normed = l.layerNorm(x, rows, d);
  int32_t qkv = l.linear(normed, rows, d, 3 * d);
  std::vector<int32_t> heads = l.reshape({qkv}, {rows * d, rows * d, rows * d});
  int32_t logits = l.matmul(heads[0], heads[1], scores); // scaled and causally masked
  int32_t probabilities = l.unary(logits, /*gradientReadsOutput=*/true);
  int32_t context = l.matmul(probabilities, heads[2], rows * d);
  int32_t merged = l.reshape({context}, {rows * d})[0];
  int32_t attended = l.add(x, l.linear(merged, rows, d, d));
  int32_t hidden = l.linear(l.layerNorm(attended, rows, d), rows, d, 4 * d);
  int32_t activated = l.unary(hidden, /*gradientReadsOutput=*/false);
  return l.add(attended, l.linear(activated, rows, 4 * d, d));
}

} // namespace

ScheduleGraph buildGpt2TrainingGraph(const Gpt2Config &c) {
  TrainingGraphBuilder builder(c.elementBytes);
  Layers l(builder);
  int64_t rows = c.batch * c.sequence, d = c.hidden;
  int32_t tokens = builder.input(rows), labels = builder.input(rows);
  int32_t tokenTable = l.weight(c.vocabulary * d), positionTable = l.weight(c.sequence * d);

  int32_t embedded = l.op({tokens, tokenTable}, rows * d);
  builder.onBackward([&builder, tokens, tokenTable, embedded, c, d] {
    builder.addGradient(tokenTable,
                        builder.op({tokens, builder.gradient(embedded)}, c.vocabulary * d));
  });
  int32_t x = l.op({embedded, positionTable}, rows * d);
  builder.onBackward([&builder, x, embedded, positionTable, c, d] {
    builder.addGradient(embedded, builder.gradient(x));
    builder.addGradient(positionTable, builder.op({builder.gradient(x)}, c.sequence * d));
  });

  for (int64_t layer = 0; layer < c.layers; ++layer)
    x = transformerBlock(l, x, c);

  int32_t normed = l.layerNorm(x, rows, d);
  // The output projection is tied to the token embedding, so its gradients add up.
  int32_t logits = l.op({normed, tokenTable}, rows * c.vocabulary);
  builder.onBackward([&builder, normed, tokenTable, logits, rows, c, d] {
    int32_t dlogits = builder.gradient(logits);
    builder.addGradient(normed, builder.op({dlogits, tokenTable}, rows * d));
    builder.addGradient(tokenTable, builder.op({normed, dlogits}, c.vocabulary * d));
  });
  l.crossEntropy(logits, labels);
  return builder.finish();
}

ScheduleGraph buildResNetTrainingGraph(const ResNetConfig &c) {
  TrainingGraphBuilder builder(c.elementBytes);
  Layers l(builder);
  int64_t n = c.batch, side = c.imageSize / 2;
  int32_t images = builder.input(n * 3 * c.imageSize * c.imageSize);
  int32_t labels = builder.input(n);

  int32_t x = l.unary(l.batchNorm(l.convolution(images, n, 3, 64, 7, side), 64), true);
  side /= 2;
  x = l.pool(x, n * 64 * side * side, /*gradientReadsInput=*/true);

  int64_t channels = 64;
  for (size_t stage = 0; stage < c.blocks.size(); ++stage) {
    int64_t width = 64 << stage, out = 4 * width;
    for (int64_t block = 0; block < c.blocks[stage]; ++block) {
      int64_t stride = block == 0 && stage > 0 ? 2 : 1;
      int64_t outSide = side / stride;
      int32_t y = l.unary(l.batchNorm(l.convolution(x, n, channels, width, 1, side), width), true);
      y = l.unary(l.batchNorm(l.convolution(y, n, width, width, 3, outSide), width), true);
      y = l.batchNorm(l.convolution(y, n, width, out, 1, outSide), out);
      int32_t shortcut = x;
      if (block == 0)
        shortcut = l.batchNorm(l.convolution(x, n, channels, out, 1, outSide), out);
      x = l.unary(l.add(y, shortcut), true);
      channels = out;
      side = outSide;
    }
  }
  int32_t pooled = l.pool(x, n * channels, /*gradientReadsInput=*/false);
  int32_t logits = l.linear(pooled, n, channels, c.classes);
  l.crossEntropy(logits, labels);
  return builder.finish();
}

} // namespace memc::bench
