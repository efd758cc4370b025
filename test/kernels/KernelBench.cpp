//===- KernelBench.cpp - times a few CPU kernels --------------------------===//
//
// memc-kernel-bench [filter]: the best of several runs of each kernel on typical sizes, as
// milliseconds and GFLOP/s or GB/s. MEMC_NUM_THREADS sets the thread count.
// memc-kernel-bench --conv-grid: both convolution implementations on shapes read from stdin
// (convGrid below; bench/kernels/conv_choice_table.py).
//
//===----------------------------------------------------------------------===//
#include "kernels/Float16.h"
#include "kernels/Kernel.h"
#include "kernels/cpu/CpuKernels.h"
#include "kernels/cpu/OneDnnConvolution.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

using namespace memc::kernels;

namespace {

struct Buffer {
  std::vector<uint8_t> bytes;
  TensorView view;
  Buffer(DType dtype, std::vector<int64_t> shape) {
    view.dtype = dtype;
    view.shape = std::move(shape);
    bytes.resize(view.sizeBytes());
    view.data = bytes.data();
    // Small finite values of any float type: 0x3c00 is 1.0 in f16, 0x3f80 in bf16.
    for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
      uint16_t v = dtype == DType::F16 ? 0x3c00 : 0x3f80;
      std::memcpy(&bytes[i], &v, 2);
    }
    if (dtype == DType::F32)
      std::fill(reinterpret_cast<float *>(bytes.data()),
                reinterpret_cast<float *>(bytes.data()) + view.numElements(), 0.5f);
    if (dtype == DType::I64) // labels and indices: 0, in range of anything
      std::fill(bytes.begin(), bytes.end(), 0);
  }

  // Copies and moves point the view at their own bytes.
  Buffer(const Buffer &other) : bytes(other.bytes), view(other.view) { view.data = bytes.data(); }
  Buffer(Buffer &&other) noexcept : bytes(std::move(other.bytes)), view(std::move(other.view)) {
    view.data = bytes.data();
  }

  /// Pseudo-random floats in [-1, 1) from a fixed generator: data on which comparisons branch
  /// unpredictably, as on real activations and PyTorch's randn inputs (constant data would
  /// flatter branchy code, e.g. a max_pool's argmax).
  static Buffer random(DType dtype, std::vector<int64_t> shape) {
    Buffer buffer(dtype, std::move(shape));
    uint32_t state = 12345;
    for (int64_t i = 0; i < buffer.view.numElements(); ++i) {
      state = state * 1664525u + 1013904223u;
      float value = static_cast<float>(state >> 8) / static_cast<float>(1 << 23) - 1.0f;
      if (dtype == DType::F32)
        buffer.view.as<float>()[i] = value;
      else if (dtype == DType::BF16)
        buffer.view.as<BFloat16>()[i] = BFloat16{floatToBFloat16(value)};
      else if (dtype == DType::F16)
        buffer.view.as<Half>()[i] = Half{floatToHalf(value)};
    }
    return buffer;
  }

  /// Pseudo-random u8 window taps below `taps`, as max_pool_with_argmax saves them.
  static Buffer randomTaps(std::vector<int64_t> shape, int64_t taps) {
    Buffer buffer(DType::U8, std::move(shape));
    uint32_t state = 12345;
    for (uint8_t &tap : buffer.bytes) {
      state = state * 1664525u + 1013904223u;
      tap = static_cast<uint8_t>((state >> 8) % static_cast<uint32_t>(taps));
    }
    return buffer;
  }
};

Attributes attrs(std::initializer_list<std::pair<const char *, AttributeValue>> values) {
  Attributes result;
  for (const auto &[name, value] : values)
    result.set(name, value);
  return result;
}

/// The best time in seconds of `kernel` on `inputs` into `outputs` after a warm-up run, over at
/// least `minRuns` runs and until `minSeconds` have passed (at most 7 runs); nullopt with the
/// check's message in `error` when the kernel refuses the call.
std::optional<double> bestSeconds(const std::string &kernel, std::vector<Buffer> &inputs,
                                  std::vector<Buffer> &outputs, const Attributes &attributes,
                                  int minRuns, double minSeconds, std::string &error,
                                  uint64_t *workspaceSize = nullptr) {
  KernelCall call;
  for (Buffer &b : inputs)
    call.inputs.push_back(b.view);
  for (Buffer &b : outputs)
    call.outputs.push_back(b.view);
  call.attributes = &attributes;
  const Kernel &k = cpuKernels().at(kernel);
  if (!k.check(call, error))
    return std::nullopt;
  // The workspace the plan would give the step (64-byte aligned, as the arena's buffers are).
  std::vector<uint64_t> workspace((workspaceBytes(k, call) + 63) / 8 + 8);
  call.workspace = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(workspace.data()) + 63) /
                                            64 * 64);
  call.workspaceBytes = workspaceBytes(k, call);
  if (workspaceSize)
    *workspaceSize = call.workspaceBytes;
  KernelContext context;
  k.run(context, call); // warm up: pages, thread pool, BLAS buffers
  double best = 1e30, total = 0.0;
  for (int run = 0; run < 7 && (run < minRuns || total < minSeconds); ++run) {
    auto start = std::chrono::steady_clock::now();
    k.run(context, call);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, seconds);
    total += seconds;
  }
  return best;
}

/// Prints the best time of `kernel` over 7 runs; `work` is FLOPs (or bytes when `bytes`).
void bench(const char *filter, const std::string &label, const std::string &kernel,
           std::vector<Buffer> inputs, std::vector<Buffer> outputs, const Attributes &attributes,
           double work, bool bytes) {
  if (filter && label.find(filter) == std::string::npos)
    return;
  std::string error;
  uint64_t workspace = 0;
  std::optional<double> best =
      bestSeconds(kernel, inputs, outputs, attributes, 7, 0.0, error, &workspace);
  if (!best) {
    std::printf("%-40s check failed: %s\n", label.c_str(), error.c_str());
    return;
  }
  std::printf("%-40s %9.3f ms  %8.2f %s  workspace %.1f KiB\n", label.c_str(), *best * 1e3,
              work / *best / 1e9, bytes ? "GB/s" : "GFLOP/s", workspace / 1024.0);
}

/// Attributes of a 2-D convolution or pooling window with equal strides and pads.
Attributes convAttributes(int64_t stride, int64_t pad) {
  return attrs({{"strides", std::vector<int64_t>{stride, stride}},
                {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                {"dilations", std::vector<int64_t>{1, 1}},
                {"group", int64_t{1}}});
}

/// The convolutions and max pool of the ResNet bench model (bench/training: fixtures.ResNet at
/// B32x3x32x32), forward and both gradients, f32 and bf16; bench/kernels/conv_vs_torch.py times
/// PyTorch on the same labels.
void benchResNetLayers(const char *filter) {
  struct Layer {
    const char *label;
    std::vector<int64_t> input, weight;
    int64_t stride, pad;
  };
  const std::vector<Layer> layers = {
      {"stem 32x3x32x32 k3 8", {32, 3, 32, 32}, {8, 3, 3, 3}, 1, 1},
      {"layer1 32x8x16x16 k3 8", {32, 8, 16, 16}, {8, 8, 3, 3}, 1, 1},
      {"layer2a 32x8x16x16 k3 s2 16", {32, 8, 16, 16}, {16, 8, 3, 3}, 2, 1},
      {"layer2b 32x16x8x8 k3 16", {32, 16, 8, 8}, {16, 16, 3, 3}, 1, 1},
      {"down 32x8x16x16 k1 s2 16", {32, 8, 16, 16}, {16, 8, 1, 1}, 2, 0},
  };
  for (DType dtype : {DType::F32, DType::BF16}) {
    std::string suffix = dtype == DType::F32 ? " f32" : " bf16";
    for (const Layer &layer : layers) {
      std::vector<int64_t> output = {layer.input[0], layer.weight[0], 0, 0};
      for (int d = 0; d < 2; ++d)
        output[2 + d] =
            (layer.input[2 + d] + 2 * layer.pad - layer.weight[2 + d]) / layer.stride + 1;
      double flops = 2.0 * output[0] * output[1] * output[2] * output[3] * layer.weight[1] *
                     layer.weight[2] * layer.weight[3];
      Attributes conv = convAttributes(layer.stride, layer.pad);
      std::string label = layer.label + suffix;
      bench(filter, "resnet conv " + label, "conv", {{dtype, layer.input}, {dtype, layer.weight}},
            {{dtype, output}}, conv, flops, false);
      bench(filter, "resnet conv_grad_input " + label, "conv_grad_input",
            {{dtype, output}, {dtype, layer.weight}}, {{dtype, layer.input}}, conv, flops, false);
      bench(filter, "resnet conv_grad_weight " + label, "conv_grad_weight",
            {{dtype, output}, {dtype, layer.input}}, {{dtype, layer.weight}}, conv, flops, false);
    }
    Attributes pool = attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                             {"strides", std::vector<int64_t>{2, 2}},
                             {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                             {"dilations", std::vector<int64_t>{1, 1}},
                             {"ceil_mode", int64_t{0}}});
    const std::vector<int64_t> poolIn = {32, 8, 32, 32}, poolOut = {32, 8, 16, 16};
    bench(filter, "resnet max_pool maxpool 32x8x32x32 k3 s2 p1" + suffix, "max_pool",
          {Buffer::random(dtype, poolIn)}, {{dtype, poolOut}}, pool, 4.0 * 32 * 8 * 32 * 32, true);
    bench(filter, "resnet max_pool_grad maxpool 32x8x32x32 k3 s2 p1" + suffix, "max_pool_grad",
          {Buffer::random(dtype, poolOut), Buffer::random(dtype, poolIn)}, {{dtype, poolIn}}, pool,
          10.0 * 32 * 8 * 32 * 32, true);
    // The pair memc-save-max-pool-argmax puts in their place: the forward also writes a byte
    // per output, the gradient reads those bytes instead of the input.
    bench(filter, "resnet max_pool_with_argmax maxpool 32x8x32x32 k3 s2 p1" + suffix,
          "max_pool_with_argmax", {Buffer::random(dtype, poolIn)},
          {{dtype, poolOut}, {DType::U8, poolOut}}, pool, 4.0 * 32 * 8 * 32 * 32, true);
    bench(filter, "resnet max_pool_grad_argmax maxpool 32x8x32x32 k3 s2 p1" + suffix,
          "max_pool_grad_argmax", {Buffer::random(dtype, poolOut), Buffer::randomTaps(poolOut, 9)},
          {{dtype, poolIn}}, pool, 10.0 * 32 * 8 * 32 * 32, true);
  }
}

/// The linear layers of the GPT-2 and Llama bench models (bench/training: d256, B8xT128, so
/// 1024 tokens) and of gpt2-124m (d768, 2048 tokens here to keep the run short) in 16 bits: the
/// forward product x @ W^T and the two the gradient builds, dX = dY @ W and dW = dY^T @ X (the
/// transpose flags, as MatMulOp's gradient rule emits them). bench/kernels/matmul_vs_torch.py
/// times torch.matmul on the same labels.
void benchLinearLayers(const char *filter) {
  struct Linear {
    const char *label;
    int64_t tokens, in, out;
  };
  const std::vector<Linear> layers = {
      {"gpt2 c_attn", 1024, 256, 768},      {"gpt2 c_proj", 1024, 256, 256},
      {"gpt2 c_fc", 1024, 256, 1024},       {"gpt2 mlp_proj", 1024, 1024, 256},
      {"gpt2 lm_head", 1024, 256, 512},     {"llama q_proj", 1024, 256, 256},
      {"llama gate_proj", 1024, 256, 64},   {"llama down_proj", 1024, 64, 256},
      {"124m c_attn", 2048, 768, 2304},     {"124m c_fc", 2048, 768, 3072},
      {"124m mlp_proj", 2048, 3072, 768},   {"mlp fc", 4, 16, 32},
      {"small", 16, 16, 16},                {"small", 32, 32, 32},
      {"small", 64, 64, 64},                {"small", 128, 128, 128},
  };
  Attributes transposeLhs = attrs({{"transpose_lhs", int64_t{1}}});
  Attributes transposeRhs = attrs({{"transpose_rhs", int64_t{1}}});
  for (DType dtype : {DType::BF16, DType::F16}) {
    std::string suffix = dtype == DType::BF16 ? " bf16" : " f16";
    for (const Linear &layer : layers) {
      int64_t m = layer.tokens, k = layer.in, n = layer.out;
      double flops = 2.0 * m * k * n;
      std::string label = std::string(layer.label) + " " + std::to_string(m) + "x" +
                          std::to_string(k) + "x" + std::to_string(n) + suffix;
      bench(filter, "linear fwd " + label, "matmul", {{dtype, {m, k}}, {dtype, {n, k}}},
            {{dtype, {m, n}}}, transposeRhs, flops, false);
      bench(filter, "linear dx " + label, "matmul", {{dtype, {m, n}}, {dtype, {n, k}}},
            {{dtype, {m, k}}}, {}, flops, false);
      bench(filter, "linear dw " + label, "matmul", {{dtype, {m, n}}, {dtype, {m, k}}},
            {{dtype, {n, k}}}, transposeLhs, flops, false);
    }
  }
}

/// `memc-kernel-bench --conv-grid`: for each stdin line "DIRECTION DTYPE N C SIZE M WINDOW
/// STRIDE" (conv, conv_grad_input or conv_grad_weight; f32 or bf16; an N x C x SIZE x SIZE image,
/// M output channels, a square window, pads of half the window) prints the line, memc's best
/// time and oneDNN's in milliseconds (-1 where oneDNN has no optimized implementation), each
/// implementation forced (ConvChoice.h). bench/kernels/conv_choice_table.py drives it.
int convGrid() {
  std::string direction, type;
  int64_t batch, channels, size, outChannels, window, stride;
  while (std::cin >> direction >> type >> batch >> channels >> size >> outChannels >> window >>
         stride) {
    DType dtype = type == "bf16" ? DType::BF16 : DType::F32;
    int64_t pad = window / 2, out = (size + 2 * pad - window) / stride + 1;
    std::vector<int64_t> image = {batch, channels, size, size},
                         weights = {outChannels, channels, window, window},
                         outputs = {batch, outChannels, out, out};
    std::vector<int64_t> read[2], written;
    if (direction == "conv")
      read[0] = image, read[1] = weights, written = outputs;
    else if (direction == "conv_grad_input")
      read[0] = outputs, read[1] = weights, written = image;
    else
      read[0] = outputs, read[1] = image, written = weights;
    Attributes attributes = convAttributes(stride, pad);
    double ms[2];
    for (ConvImplementation side : {ConvImplementation::Memc, ConvImplementation::OneDnn}) {
      forceConvImplementation(side);
      std::vector<Buffer> inputs = {Buffer::random(dtype, read[0]), Buffer::random(dtype, read[1])};
      std::vector<Buffer> results = {{dtype, written}};
      std::string error;
      std::optional<double> best =
          bestSeconds(direction, inputs, results, attributes, 3, 0.2, error);
      if (!best) {
        std::fprintf(stderr, "%s: %s\n", direction.c_str(), error.c_str());
        return 1;
      }
      KernelCall call;
      for (Buffer &b : inputs)
        call.inputs.push_back(b.view);
      call.outputs.push_back(results[0].view);
      call.attributes = &attributes;
      bool onOneDnn =
          oneDnnConvolution(call, direction == "conv"              ? ConvDirection::Forward
                                  : direction == "conv_grad_input" ? ConvDirection::GradInput
                                                                   : ConvDirection::GradWeight)
              .has_value();
      ms[static_cast<int>(side)] =
          side == ConvImplementation::OneDnn && !onOneDnn ? -1.0 : *best * 1e3;
    }
    forceConvImplementation(std::nullopt);
    std::printf("%s %s %lld %lld %lld %lld %lld %lld %.4f %.4f\n", direction.c_str(), type.c_str(),
                (long long)batch, (long long)channels, (long long)size, (long long)outChannels,
                (long long)window, (long long)stride, ms[0], ms[1]);
    std::fflush(stdout);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--conv-grid")
    return convGrid();
  const char *filter = argc > 1 ? argv[1] : nullptr;
  const DType F32 = DType::F32, BF16 = DType::BF16, I64 = DType::I64;
  std::printf("threads: %d\n", ThreadPool::global().numThreads());
  const int64_t n = 1024;
  bench(filter, "matmul f32 1024x1024x1024", "matmul", {{F32, {n, n}}, {F32, {n, n}}},
        {{F32, {n, n}}}, {}, 2.0 * n * n * n, false);
  bench(filter, "matmul bf16 1024x1024x1024", "matmul", {{BF16, {n, n}}, {BF16, {n, n}}},
        {{BF16, {n, n}}}, {}, 2.0 * n * n * n, false);
  bench(filter, "matmul f32 batched 48x128x64x128", "matmul",
        {{F32, {48, 128, 64}}, {F32, {48, 64, 128}}}, {{F32, {48, 128, 128}}}, {},
        2.0 * 48 * 128 * 64 * 128, false);
  const int64_t m8 = 8 << 20;
  bench(filter, "add f32 8M same shape", "add", {{F32, {m8}}, {F32, {m8}}}, {{F32, {m8}}}, {},
        12.0 * m8, true);
  bench(filter, "add f32 8M + row [1024]", "add", {{F32, {8192, 1024}}, {F32, {1024}}},
        {{F32, {8192, 1024}}}, {}, 8.0 * m8, true);
  bench(filter, "add bf16 8M same shape", "add", {{BF16, {m8}}, {BF16, {m8}}}, {{BF16, {m8}}}, {},
        6.0 * m8, true);
  bench(filter, "gelu f32 8M", "gelu", {{F32, {m8}}}, {{F32, {m8}}}, {}, 8.0 * m8, true);
  // The fused bias add + GELU against the two kernels above it replaces ("add + row", "gelu").
  bench(filter, "bias_gelu f32 8192x1024 + [1024]", "bias_gelu",
        {{F32, {8192, 1024}}, {F32, {1024}}}, {{F32, {8192, 1024}}}, {}, 8.0 * m8, true);
  bench(filter, "softmax f32 8192x1024 (rows)", "softmax", {{F32, {8192, 1024}}},
        {{F32, {8192, 1024}}}, attrs({{"axis", int64_t{1}}}), 8.0 * m8, true);
  // Attention with GPT-2 small's heads (12 x 64) at T = 1024, causal: 4 D FLOPs per visible
  // query-key pair forward, 10 D backward (the cost model's count).
  const int64_t t = 1024;
  const double pairs = 12.0 * t * (t + 1) / 2;
  const std::vector<int64_t> heads = {1, 12, t, 64}, rows = {1, 12, t};
  Attributes attention = attrs({{"causal", int64_t{1}}, {"scale", 0.125}});
  bench(filter, "flash_attention f32 12x1024x64 causal", "flash_attention",
        {{F32, heads}, {F32, heads}, {F32, heads}}, {{F32, heads}, {F32, rows}}, attention,
        pairs * 4 * 64, false);
  bench(filter, "flash_attention_grad f32 12x1024x64 causal", "flash_attention_grad",
        {{F32, heads}, {F32, heads}, {F32, heads}, {F32, heads}, {F32, heads}, {F32, rows}},
        {{F32, heads}, {F32, heads}, {F32, heads}}, attention, pairs * 10 * 64, false);
  // The bench models' attention (bench/training: B8 x T128, 8 heads of 32), causal (GPT-2,
  // Llama) and not (BERT), f32 and bf16.
  const std::vector<int64_t> benchHeads = {8, 8, 128, 32}, benchRows = {8, 8, 128};
  for (DType type : {F32, BF16})
    for (int64_t causal : {1, 0}) {
      std::string label =
          std::string(type == F32 ? "f32" : "bf16") + " 8x8x128x32" + (causal ? " causal" : "");
      Attributes benchAttention = attrs({{"causal", causal}, {"scale", 0.17677669529663687}});
      double benchPairs = 64.0 * 128 * (causal ? 129 / 2.0 : 128);
      bench(filter, "flash_attention " + label, "flash_attention",
            {Buffer::random(type, benchHeads), Buffer::random(type, benchHeads),
             Buffer::random(type, benchHeads)},
            {{type, benchHeads}, {F32, benchRows}}, benchAttention, benchPairs * 4 * 32, false);
      bench(filter, "flash_attention_grad " + label, "flash_attention_grad",
            {Buffer::random(type, benchHeads),
             Buffer::random(type, benchHeads),
             Buffer::random(type, benchHeads),
             Buffer::random(type, benchHeads),
             Buffer::random(type, benchHeads),
             {F32, benchRows}},
            {{type, benchHeads}, {type, benchHeads}, {type, benchHeads}}, benchAttention,
            benchPairs * 10 * 32, false);
    }
  // An LM head of 2048 tokens, d 768, V 8192 (tied [V, D] layout): fused, and as the unfused
  // step computes it (the product, the loss, its gradient, dH and dW); 2 N V D FLOPs per
  // product.
  const int64_t tokens = 2048, d = 768, v = 8192;
  const double product = 2.0 * tokens * v * d;
  Attributes loss = attrs({{"ignore_index", int64_t{-100}}, {"transpose_weight", int64_t{1}}});
  bench(filter, "linear_cross_entropy f32 2048x768 V8192", "linear_cross_entropy",
        {{F32, {tokens, d}}, {F32, {v, d}}, {I64, {tokens}}}, {{F32, {}}, {F32, {tokens}}}, loss,
        product, false);
  bench(filter, "linear_cross_entropy_grad f32 2048x768 V8192", "linear_cross_entropy_grad",
        {{F32, {}}, {F32, {tokens, d}}, {F32, {v, d}}, {I64, {tokens}}, {F32, {tokens}}},
        {{F32, {tokens, d}}, {F32, {v, d}}}, loss, 4 * product, false);
  // The GPT-2-style bench model's head (bench/training/train_vs_torch.py: 1024 tokens, d 256,
  // V 512, tied).
  const int64_t benchTokens = 1024, benchDepth = 256, benchClasses = 512;
  bench(filter, "linear_cross_entropy_grad f32 1024x256 V512", "linear_cross_entropy_grad",
        {{F32, {}},
         {F32, {benchTokens, benchDepth}},
         {F32, {benchClasses, benchDepth}},
         {I64, {benchTokens}},
         {F32, {benchTokens}}},
        {{F32, {benchTokens, benchDepth}}, {F32, {benchClasses, benchDepth}}}, loss,
        4 * 2.0 * benchTokens * benchClasses * benchDepth, false);
  bench(filter, "head matmul f32 2048x768 V8192", "matmul", {{F32, {tokens, d}}, {F32, {v, d}}},
        {{F32, {tokens, v}}}, attrs({{"transpose_rhs", int64_t{1}}}), product, false);
  bench(filter, "head cross_entropy f32 2048xV8192", "cross_entropy",
        {{F32, {tokens, v}}, {I64, {tokens}}}, {{F32, {}}}, attrs({{"ignore_index", int64_t{-100}}}),
        4.0 * tokens * v, true);
  bench(filter, "head cross_entropy_grad f32 2048xV8192", "cross_entropy_grad",
        {{F32, {}}, {F32, {tokens, v}}, {I64, {tokens}}}, {{F32, {tokens, v}}},
        attrs({{"ignore_index", int64_t{-100}}}), 8.0 * tokens * v, true);
  bench(filter, "head dH matmul f32 2048xV8192x768", "matmul",
        {{F32, {tokens, v}}, {F32, {v, d}}}, {{F32, {tokens, d}}}, {}, product, false);
  bench(filter, "head dW matmul f32 V8192x2048x768", "matmul",
        {{F32, {tokens, v}}, {F32, {tokens, d}}}, {{F32, {v, d}}},
        attrs({{"transpose_lhs", int64_t{1}}}), product, false);
  bench(filter, "layer_norm f32 8192x1024", "layer_norm",
        {{F32, {8192, 1024}}, {F32, {1024}}, {F32, {1024}}}, {{F32, {8192, 1024}}},
        attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}}), 8.0 * m8, true);
  // The residual add and the norm in one pass, against "add f32 8M same shape" + "layer_norm".
  bench(filter, "add_layer_norm f32 8192x1024", "add_layer_norm",
        {{F32, {8192, 1024}}, {F32, {8192, 1024}}, {F32, {1024}}, {F32, {1024}}},
        {{F32, {8192, 1024}}, {F32, {8192, 1024}}}, attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}}),
        16.0 * m8, true);
  bench(filter, "reduce_sum f32 8192x1024 axis 1", "reduce_sum", {{F32, {8192, 1024}}},
        {{F32, {8192}}}, attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}}),
        4.0 * m8, true);
  bench(filter, "reduce_sum f32 8192x1024 axis 0", "reduce_sum", {{F32, {8192, 1024}}},
        {{F32, {1024}}}, attrs({{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}}),
        4.0 * m8, true);
  bench(filter, "transpose f32 2048x4096", "transpose", {{F32, {2048, 4096}}},
        {{F32, {4096, 2048}}}, attrs({{"perm", std::vector<int64_t>{1, 0}}}), 8.0 * m8, true);
  bench(filter, "conv f32 8x64x56x56 k3 p1", "conv",
        {{F32, {8, 64, 56, 56}}, {F32, {64, 64, 3, 3}}}, {{F32, {8, 64, 56, 56}}},
        attrs({{"strides", std::vector<int64_t>{1, 1}},
               {"pads", std::vector<int64_t>{1, 1, 1, 1}},
               {"dilations", std::vector<int64_t>{1, 1}},
               {"group", int64_t{1}}}),
        2.0 * 8 * 64 * 56 * 56 * 64 * 9, false);
  bench(filter, "max_pool f32 8x64x112x112 k3 s2 p1", "max_pool",
        {Buffer::random(F32, {8, 64, 112, 112})}, {{F32, {8, 64, 56, 56}}},
        attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
               {"strides", std::vector<int64_t>{2, 2}},
               {"pads", std::vector<int64_t>{1, 1, 1, 1}},
               {"dilations", std::vector<int64_t>{1, 1}},
               {"ceil_mode", int64_t{0}}}),
        4.0 * 8 * 64 * 112 * 112, true);
  // Backward kernels, on the forward sizes above.
  Attributes conv = attrs({{"strides", std::vector<int64_t>{1, 1}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                           {"dilations", std::vector<int64_t>{1, 1}},
                           {"group", int64_t{1}}});
  bench(filter, "conv_grad_input f32 8x64x56x56 k3 p1", "conv_grad_input",
        {{F32, {8, 64, 56, 56}}, {F32, {64, 64, 3, 3}}}, {{F32, {8, 64, 56, 56}}}, conv,
        2.0 * 8 * 64 * 56 * 56 * 64 * 9, false);
  bench(filter, "conv_grad_weight f32 8x64x56x56 k3 p1", "conv_grad_weight",
        {{F32, {8, 64, 56, 56}}, {F32, {8, 64, 56, 56}}}, {{F32, {64, 64, 3, 3}}}, conv,
        2.0 * 8 * 64 * 56 * 56 * 64 * 9, false);
  // The ResNet bench model's size (bench/training: 16-32 channels, 32x32, batch 32).
  bench(filter, "conv f32 32x16x32x32 k3 p1", "conv",
        {{F32, {32, 16, 32, 32}}, {F32, {16, 16, 3, 3}}}, {{F32, {32, 16, 32, 32}}}, conv,
        2.0 * 32 * 16 * 32 * 32 * 16 * 9, false);
  bench(filter, "conv_grad_input f32 32x16x32x32 k3 p1", "conv_grad_input",
        {{F32, {32, 16, 32, 32}}, {F32, {16, 16, 3, 3}}}, {{F32, {32, 16, 32, 32}}}, conv,
        2.0 * 32 * 16 * 32 * 32 * 16 * 9, false);
  bench(filter, "conv_grad_weight f32 32x16x32x32 k3 p1", "conv_grad_weight",
        {{F32, {32, 16, 32, 32}}, {F32, {32, 16, 32, 32}}}, {{F32, {16, 16, 3, 3}}}, conv,
        2.0 * 32 * 16 * 32 * 32 * 16 * 9, false);
  // Batch norm in training mode at the CIFAR ResNet's first stage (32 x 16 x 32 x 32): the
  // forward reads the input three times (sum, squared deviations, output), the gradient four.
  Attributes batchNorm = attrs({{"epsilon", 1e-5}, {"momentum", 0.9}, {"training", int64_t{1}}});
  for (DType type : {F32, BF16}) {
    const std::vector<int64_t> images = {32, 16, 32, 32}, perChannel = {16};
    double bytes = 32.0 * 16 * 32 * 32 * (type == F32 ? 4 : 2);
    std::string name = type == F32 ? "f32" : "bf16";
    bench(filter, "batch_norm " + name + " 32x16x32x32 training", "batch_norm",
          {Buffer::random(type, images),
           {F32, perChannel},
           {F32, perChannel},
           {F32, perChannel},
           {F32, perChannel}},
          {{type, images}}, batchNorm, 4 * bytes, true);
    bench(filter, "batch_norm_grad " + name + " 32x16x32x32", "batch_norm_grad",
          {Buffer::random(type, images), Buffer::random(type, images), {F32, perChannel}},
          {{type, images}, {F32, perChannel}, {F32, perChannel}}, batchNorm, 6 * bytes, true);
  }
  bench(filter, "gelu_grad f32 8M", "gelu_grad", {{F32, {m8}}, {F32, {m8}}}, {{F32, {m8}}}, {},
        12.0 * m8, true);
  bench(filter, "bias_gelu_grad f32 8192x1024 + [1024]", "bias_gelu_grad",
        {{F32, {8192, 1024}}, {F32, {8192, 1024}}, {F32, {1024}}}, {{F32, {8192, 1024}}}, {},
        12.0 * m8, true);
  bench(filter, "softmax_grad f32 8192x1024 (rows)", "softmax_grad",
        {{F32, {8192, 1024}}, {F32, {8192, 1024}}}, {{F32, {8192, 1024}}},
        attrs({{"axis", int64_t{1}}}), 12.0 * m8, true);
  bench(filter, "layer_norm_grad f32 8192x1024", "layer_norm_grad",
        {{F32, {8192, 1024}}, {F32, {8192, 1024}}, {F32, {1024}}},
        {{F32, {8192, 1024}}, {F32, {1024}}, {F32, {1024}}},
        attrs({{"axis", int64_t{1}}, {"epsilon", 1e-5}}), 12.0 * m8, true);
  bench(filter, "max_pool_grad f32 8x64x112x112 k3 s2 p1", "max_pool_grad",
        {Buffer::random(F32, {8, 64, 56, 56}), Buffer::random(F32, {8, 64, 112, 112})},
        {{F32, {8, 64, 112, 112}}},
        attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
               {"strides", std::vector<int64_t>{2, 2}},
               {"pads", std::vector<int64_t>{1, 1, 1, 1}},
               {"dilations", std::vector<int64_t>{1, 1}},
               {"ceil_mode", int64_t{0}}}),
        (8.0 + 2.0) * 8 * 64 * 112 * 112, true);
  benchResNetLayers(filter);
  benchLinearLayers(filter);
  return 0;
}
