//===- TrainingGraphs.cpp - GPT-2 and ResNet training steps as DAGs -------===//
//
// A small tape: every forward op records how to emit its gradient ops, and replaying the records
// in reverse emits the backward pass, with gradients of values read twice summed by an add node
// as an autodiff pass would. The forward ops read exactly what the matching PyTorch kernels save
// for backward (layer-norm statistics, softmax outputs, GELU inputs, dropout masks, convolution
// inputs), so live ranges have the shape of a real training step.
//
//===----------------------------------------------------------------------===//
#include "TrainingGraphs.h"

#include <deque>
#include <functional>
#include <map>
#include <set>

namespace memc::bench {
namespace {

using planner::ScheduleGraph;
using Emit = std::function<void()>;

class TrainingGraphBuilder {
public:
  explicit TrainingGraphBuilder(const TrainingStyle &style) : style(style), tapes(1) {}

  /// A graph input that needs no gradient (token ids, images, labels).
  int32_t input(int64_t elements) {
    int32_t value = graph.addValue(bytes(elements));
    inputs.insert(value);
    return value;
  }
  /// A parameter: persistent, and updated by the optimizer from its gradient.
  int32_t weight(int64_t elements) {
    int32_t value = graph.addValue(bytes(elements));
    weights.push_back(value);
    return value;
  }

  /// A node with outputs of the given element counts (`elementBytes` 0: the activation type).
  std::vector<int32_t> ops(std::vector<int32_t> reads, const std::vector<int64_t> &outputs,
                           int64_t elementBytes = 0, bool keepAlive = false) {
    std::vector<int32_t> values;
    for (int64_t elements : outputs)
      values.push_back(graph.addValue(bytes(elements, elementBytes), keepAlive));
    graph.addNode(std::move(reads), values);
    return values;
  }
  int32_t op(std::vector<int32_t> reads, int64_t elements) {
    return ops(std::move(reads), {elements})[0];
  }

  int64_t elements(int32_t value) const {
    return static_cast<int64_t>(graph.valueBytes[value]) / style.elementBytes;
  }
  /// Whether a gradient flows into the value: everything but the graph inputs.
  bool needsGradient(int32_t value) const { return inputs.count(value) == 0; }

  void onBackward(Emit emit) {
    if (recording)
      tapes.back().push_back(std::move(emit));
  }
  /// Weight-gradient products: emitted now, or after the backward pass in the deferred style.
  void weightGradient(Emit emit) {
    if (style.deferWeightGradients)
      deferred.push_back(std::move(emit));
    else
      emit();
  }
  int32_t gradient(int32_t value) const { return gradients.at(value); }
  void addGradient(int32_t value, int32_t gradient) {
    if (!needsGradient(value))
      return;
    auto [it, fresh] = gradients.emplace(value, gradient);
    if (fresh)
      return;
    int32_t sum = op({it->second, gradient}, elements(value));
    elementwise(it->second, sum);
    elementwise(gradient, sum);
    it->second = sum;
  }
  /// Records that `output` is computed elementwise from `input`.
  void elementwise(int32_t input, int32_t output) { pairs.emplace_back(input, output); }

  /// Runs `segment` on `x`; with checkpointing, without recording its backward, and the
  /// backward pass recomputes it from `x` before differentiating it.
  int32_t checkpoint(const std::function<int32_t(int32_t)> &segment, int32_t x) {
    if (!style.checkpointBlocks)
      return segment(x);
    recording = false;
    int32_t y = segment(x);
    recording = true;
    onBackward([this, segment, x, y] {
      tapes.emplace_back();
      int32_t recomputed = segment(x);
      gradients[recomputed] = gradient(y);
      replay(tapes.back());
      tapes.pop_back();
    });
    return y;
  }

  /// Emits the backward pass, the deferred weight gradients, and one optimizer update per
  /// parameter (which writes the persistent weight and moments in place: no arena value).
  TrainingGraph finish() {
    replay(tapes.front());
    for (const Emit &emit : deferred)
      emit();
    for (int32_t weight : weights)
      if (gradients.count(weight))
        graph.addNode({weight, gradients.at(weight)}, {});
    return {std::move(graph), std::move(pairs)};
  }

private:
  static void replay(const std::vector<Emit> &tape) {
    for (auto it = tape.rbegin(); it != tape.rend(); ++it)
      (*it)();
  }
  uint64_t bytes(int64_t elements, int64_t elementBytes = 0) const {
    return static_cast<uint64_t>(elements * (elementBytes ? elementBytes : style.elementBytes));
  }

  TrainingStyle style;
  ScheduleGraph graph;
  std::vector<int32_t> weights;
  std::set<int32_t> inputs;
  std::map<int32_t, int32_t> gradients;
  std::deque<std::vector<Emit>> tapes; // the backward pass, and the block being recomputed
  std::vector<Emit> deferred;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  bool recording = true;
};

/// The differentiable ops both models are built from. Each returns its output and records its
/// backward ops.
class Layers {
public:
  explicit Layers(TrainingGraphBuilder &b) : b(b) {}

  int32_t linear(int32_t x, int64_t rows, int64_t in, int64_t out) {
    int32_t w = b.weight(in * out), bias = b.weight(out);
    int32_t y = b.op({x, w, bias}, rows * out);
    b.onBackward([=] {
      int32_t dy = b.gradient(y);
      if (b.needsGradient(x))
        b.addGradient(x, b.op({dy, w}, rows * in));
      b.weightGradient([=] {
        std::vector<int32_t> dw = b.ops({x, dy}, {in * out, out});
        b.addGradient(w, dw[0]);
        b.addGradient(bias, dw[1]);
      });
    });
    return y;
  }

  int32_t layerNorm(int32_t x, int64_t rows, int64_t width) {
    int32_t gamma = b.weight(width), beta = b.weight(width);
    std::vector<int32_t> out = b.ops({x, gamma, beta}, {rows * width, 2 * rows});
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
    int32_t y = b.op({x}, b.elements(x));
    b.elementwise(x, y);
    b.onBackward([=] {
      int32_t saved = gradientReadsOutput ? y : x;
      int32_t dx = b.op({b.gradient(y), saved}, b.elements(x));
      b.elementwise(b.gradient(y), dx);
      b.addGradient(x, dx);
    });
    return y;
  }

  /// Dropout keeps a one-byte mask for its gradient.
  int32_t dropout(int32_t x) {
    std::vector<int32_t> out = b.ops({x}, {b.elements(x)});
    int32_t mask = b.ops({x}, {b.elements(x)}, /*elementBytes=*/1)[0];
    b.elementwise(x, out[0]);
    b.onBackward([=] {
      int32_t dx = b.op({b.gradient(out[0]), mask}, b.elements(x));
      b.elementwise(b.gradient(out[0]), dx);
      b.addGradient(x, dx);
    });
    return out[0];
  }

  int32_t add(int32_t x, int32_t y) {
    int32_t sum = b.op({x, y}, b.elements(x));
    b.elementwise(x, sum);
    b.elementwise(y, sum);
    b.onBackward([=] {
      b.addGradient(x, b.gradient(sum));
      b.addGradient(y, b.gradient(sum));
    });
    return sum;
  }

  /// A reshaping copy (split or merge heads) with a reshaping gradient.
  std::vector<int32_t> reshape(std::vector<int32_t> inputs, const std::vector<int64_t> &outputs) {
    std::vector<int32_t> y = b.ops(inputs, outputs);
    b.onBackward([=] {
      std::vector<int32_t> dy;
      std::vector<int64_t> sizes;
      for (int32_t value : y)
        dy.push_back(b.gradient(value));
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
    int32_t z = b.op({x, y}, elements);
    b.onBackward([=] {
      int32_t dz = b.gradient(z);
      b.addGradient(x, b.op({dz, y}, b.elements(x)));
      b.addGradient(y, b.op({x, dz}, b.elements(y)));
    });
    return z;
  }

  /// Softmax cross-entropy: the log-probabilities are kept for the gradient. Fused kernels
  /// compute both in place of their input.
  int32_t crossEntropy(int32_t logits, int32_t labels) {
    int32_t logProbabilities = b.op({logits}, b.elements(logits));
    b.elementwise(logits, logProbabilities);
    int32_t loss = b.ops({logProbabilities, labels}, {1}, 4, /*keepAlive=*/true)[0];
    b.onBackward([=] {
      int32_t dlogits = b.op({logProbabilities, labels}, b.elements(logits));
      b.elementwise(logProbabilities, dlogits);
      b.addGradient(logits, dlogits);
    });
    return loss;
  }

  int32_t convolution(int32_t x, int64_t batch, int64_t in, int64_t out, int64_t kernel,
                      int64_t outputSide) {
    int32_t w = b.weight(out * in * kernel * kernel);
    int32_t y = b.op({x, w}, batch * out * outputSide * outputSide);
    b.onBackward([=] {
      int32_t dy = b.gradient(y);
      if (b.needsGradient(x))
        b.addGradient(x, b.op({dy, w}, b.elements(x)));
      b.weightGradient([=] { b.addGradient(w, b.op({x, dy}, b.elements(w))); });
    });
    return y;
  }

  int32_t batchNorm(int32_t x, int64_t channels) {
    int32_t gamma = b.weight(channels), beta = b.weight(channels);
    std::vector<int32_t> out = b.ops({x, gamma, beta}, {b.elements(x), 2 * channels});
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
    int32_t y = b.op({x}, elements);
    b.onBackward([=] {
      std::vector<int32_t> reads = {b.gradient(y)};
      if (gradientReadsInput)
        reads.push_back(x);
      b.addGradient(x, b.op(reads, b.elements(x)));
    });
    return y;
  }

private:
  TrainingGraphBuilder &b;
};

int32_t transformerBlock(Layers &l, int32_t x, const Gpt2Config &c) {
  int64_t rows = c.batch * c.sequence, d = c.hidden;
  int64_t scores = c.batch * c.heads * c.sequence * c.sequence;
  auto maybeDropout = [&](int32_t value) { return c.dropout ? l.dropout(value) : value; };
  int32_t normed = l.layerNorm(x, rows, d);
  int32_t qkv = l.linear(normed, rows, d, 3 * d);
  std::vector<int32_t> heads = l.reshape({qkv}, {rows * d, rows * d, rows * d});
  int32_t logits = l.matmul(heads[0], heads[1], scores); // scaled and causally masked
  int32_t probabilities = maybeDropout(l.unary(logits, /*gradientReadsOutput=*/true));
  int32_t context = l.matmul(probabilities, heads[2], rows * d);
  int32_t merged = l.reshape({context}, {rows * d})[0];
  int32_t attended = l.add(x, maybeDropout(l.linear(merged, rows, d, d)));
  int32_t hidden = l.linear(l.layerNorm(attended, rows, d), rows, d, 4 * d);
  int32_t activated = l.unary(hidden, /*gradientReadsOutput=*/false);
  return l.add(attended, maybeDropout(l.linear(activated, rows, 4 * d, d)));
}

int32_t bottleneck(Layers &l, int32_t x, int64_t batch, int64_t in, int64_t width, int64_t side,
                   int64_t stride, bool projectShortcut) {
  int64_t out = 4 * width, outSide = side / stride;
  int32_t y = l.unary(l.batchNorm(l.convolution(x, batch, in, width, 1, side), width), true);
  y = l.unary(l.batchNorm(l.convolution(y, batch, width, width, 3, outSide), width), true);
  y = l.batchNorm(l.convolution(y, batch, width, out, 1, outSide), out);
  int32_t shortcut = x;
  if (projectShortcut)
    shortcut = l.batchNorm(l.convolution(x, batch, in, out, 1, outSide), out);
  return l.unary(l.add(y, shortcut), true);
}

} // namespace

TrainingGraph buildGpt2TrainingGraph(const Gpt2Config &c) {
  TrainingGraphBuilder builder(c.style);
  Layers l(builder);
  int64_t rows = c.batch * c.sequence, d = c.hidden;
  int32_t tokens = builder.input(rows), labels = builder.input(rows);
  int32_t tokenTable = builder.weight(c.vocabulary * d);
  int32_t positionTable = builder.weight(c.sequence * d);

  int32_t embedded = builder.op({tokens, tokenTable}, rows * d);
  builder.onBackward([&builder, tokens, tokenTable, embedded, c, d] {
    builder.addGradient(tokenTable,
                        builder.op({tokens, builder.gradient(embedded)}, c.vocabulary * d));
  });
  int32_t x = builder.op({embedded, positionTable}, rows * d);
  builder.onBackward([&builder, x, embedded, positionTable, c, d] {
    builder.addGradient(embedded, builder.gradient(x));
    builder.addGradient(positionTable, builder.op({builder.gradient(x)}, c.sequence * d));
  });
  if (c.dropout)
    x = l.dropout(x);

  for (int64_t layer = 0; layer < c.layers; ++layer)
    x = builder.checkpoint([&](int32_t input) { return transformerBlock(l, input, c); }, x);

  int32_t normed = l.layerNorm(x, rows, d);
  // The output projection is tied to the token embedding, so its gradients add up.
  int32_t logits = builder.op({normed, tokenTable}, rows * c.vocabulary);
  builder.onBackward([&builder, normed, tokenTable, logits, rows, c, d] {
    int32_t dlogits = builder.gradient(logits);
    builder.addGradient(normed, builder.op({dlogits, tokenTable}, rows * d));
    builder.weightGradient([&builder, normed, tokenTable, dlogits, c, d] {
      builder.addGradient(tokenTable, builder.op({normed, dlogits}, c.vocabulary * d));
    });
  });
  l.crossEntropy(logits, labels);
  return builder.finish();
}

TrainingGraph buildResNetTrainingGraph(const ResNetConfig &c) {
  TrainingGraphBuilder builder(c.style);
  Layers l(builder);
  int64_t n = c.batch, side = c.imageSize / 2;
  int32_t images = builder.input(n * 3 * c.imageSize * c.imageSize);
  int32_t labels = builder.input(n);

  int32_t x = l.unary(l.batchNorm(l.convolution(images, n, 3, 64, 7, side), 64), true);
  side /= 2;
  x = l.pool(x, n * 64 * side * side, /*gradientReadsInput=*/true);

  int64_t channels = 64;
  for (size_t stage = 0; stage < c.blocks.size(); ++stage) {
    int64_t width = int64_t(64) << stage;
    for (int64_t block = 0; block < c.blocks[stage]; ++block) {
      int64_t stride = block == 0 && stage > 0 ? 2 : 1;
      x = builder.checkpoint(
          [&, channels, width, side, stride, block](int32_t input) {
            return bottleneck(l, input, n, channels, width, side, stride, block == 0);
          },
          x);
      channels = 4 * width;
      side /= stride;
    }
  }
  int32_t pooled = l.pool(x, n * channels, /*gradientReadsInput=*/false);
  int32_t logits = l.linear(pooled, n, channels, c.classes);
  l.crossEntropy(logits, labels);
  return builder.finish();
}

std::vector<planner::InPlaceHint> elementwiseHints(const TrainingGraph &training,
                                                   const planner::LiveValues &live) {
  std::vector<int32_t> bufferOf(training.graph.valueBytes.size(), -1);
  for (size_t buffer = 0; buffer < live.valueOfBuffer.size(); ++buffer)
    bufferOf[live.valueOfBuffer[buffer]] = static_cast<int32_t>(buffer);
  std::vector<planner::InPlaceHint> hints;
  for (auto [input, output] : training.elementwise) {
    int32_t source = bufferOf[input], target = bufferOf[output];
    if (source >= 0 && target >= 0 &&
        live.buffers[source].lastStep == live.buffers[target].firstStep &&
        live.buffers[source].size == live.buffers[target].size)
      hints.push_back({source, target});
  }
  return hints;
}

} // namespace memc::bench
