//===- TorchExportPatterns.h - what torch.onnx.export writes for nn modules ===//
//
// The node patterns torch.onnx.export (opset 17, do_constant_folding=False) emits for the PyTorch
// modules and functions the zoo's models are made of, with static shapes. Functions named after a
// module (linear, layerNorm, embedding, ...) open that module's scope and create its parameters; the
// others emit into the current scope. Each returns the name of its result.
//
//===----------------------------------------------------------------------===//

#ifndef MEMC_BENCH_ZOO_TORCHEXPORTPATTERNS_H
#define MEMC_BENCH_ZOO_TORCHEXPORTPATTERNS_H

#include "OnnxGraphBuilder.h"

namespace memc::zoo {

/// Standard deviation of the initial weights of transformer layers (GPT-2, BERT and LLaMA all use it).
constexpr float kTransformerInitStd = 0.02f;

/// nn.Linear on an input of rank > 2: Transpose(weight [out, in]), MatMul, then Add(bias, .), as
/// torch's linear symbolic writes it (Gemm only for rank-2 inputs, see gemmLinear).
std::string linear(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                   int64_t inFeatures, int64_t outFeatures, bool hasBias,
                   float stddev = kTransformerInitStd);

/// nn.Linear on a rank-2 input: Gemm(x, weight, bias) with transB=1.
std::string gemmLinear(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                       int64_t inFeatures, int64_t outFeatures, float stddev);

/// Hugging Face GPT-2's Conv1D, a linear layer whose weight is stored [in, out]: MatMul, then Add bias.
std::string conv1D(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                   int64_t inFeatures, int64_t outFeatures);

/// nn.Embedding: Gather(weight [num, dim], indices). `weight` receives the table's name, for tying.
std::string embedding(OnnxGraphBuilder &b, const std::string &module, const std::string &indices,
                      int64_t numEmbeddings, int64_t dim, std::string *weight = nullptr);

/// nn.LayerNorm over the last dimension: LayerNormalization(x, weight, bias).
std::string layerNorm(OnnxGraphBuilder &b, const std::string &module, const std::string &x,
                      int64_t dim, float eps);

/// Exact GELU, F.gelu(x): x * (1 + erf(x / sqrt(2))) * 0.5.
std::string geluErf(OnnxGraphBuilder &b, const std::string &x);

/// GPT-2's GELU (tanh approximation, as Hugging Face's NewGELUActivation spells it out):
/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).
std::string geluTanh(OnnxGraphBuilder &b, const std::string &x);

/// Tensor.view/reshape to a static shape: Reshape with a Constant shape.
std::string reshape(OnnxGraphBuilder &b, const std::string &x, const Shape &shape);

/// Tensor.permute/transpose.
std::string transpose(OnnxGraphBuilder &b, const std::string &x, const std::vector<int64_t> &perm);

/// The attention heads of a [B, T, H*D] projection: view [B, T, H, D], then transpose to [B, H, T, D]
/// or, for a key about to be multiplied by the query, straight to [B, H, D, T] (torch's peephole pass
/// fuses the two transposes of `k.transpose(1, 2)` and `k.transpose(-2, -1)` into one).
std::string splitHeads(OnnxGraphBuilder &b, const std::string &x, const Shape &bthd,
                       bool keyTransposed = false);

/// Heads back together: [B, H, T, D] transposed to [B, T, H, D], viewed as [B, T, H*D].
std::string mergeHeads(OnnxGraphBuilder &b, const std::string &x, const Shape &btd);

/// Boolean lower-triangular [1, 1, T, T] causal mask contents: true where key j <= query i.
WeightInit causalMaskBool(int64_t seq);

} // namespace memc::zoo

#endif // MEMC_BENCH_ZOO_TORCHEXPORTPATTERNS_H
